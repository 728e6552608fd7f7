"""The registers models 8 and 8 ter for a range of club days: their rows, CSV and PDF
(compliance 54; arrêté of 14 May 2007, art. 66-2 and 66-3).

- model 8, "Registre des prélèvements": per closed session, per table and pool, the progressive
  stakes withheld (`SessionTable`) and the table's drop box count (`DropCount`), with each
  session's total and the range's;
- model 8 ter, "Registre des montants affichés": per closed session and pool, the amount the sign
  displayed at the close (`SessionPool`), the meter's corrections during the session and the
  change since the pool's previous closed session, with each pool's total over the range.

Invariants: only the snapshot rows written at each close are read (never the journal), for the
closed sessions whose club day is in the range (index `club_session_day`; a look-back of a few
sessions for 8 ter's first changes), so a register costs its range; every figure is integer cents
copied or summed, never computed otherwise; a total is the sum of its lines, each drop box counted
once; every CSV cell is spreadsheet-safe. Read only.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any
from xml.sax.saxutils import escape
from zoneinfo import ZoneInfo

from django.conf import settings
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
from reportlab.platypus.flowables import Flowable

from jackpot.models import Pool
from jackpot.reporting.exports import spreadsheet_safe
from tables.bodies.registers import (
    DisplayedLine,
    DisplayedRegister,
    DisplayedSession,
    DisplayedTotal,
    DropCountLine,
    WithheldLine,
    WithheldRegister,
    WithheldSession,
    WithheldTotal,
)
from tables.models import ClubSession, DropCount, SessionPool, SessionStatus, SessionTable

WITHHELD_HEADER = (
    "club_day",
    "session",
    "closed_at_utc",
    "table",
    "pool",
    "currency",
    "rounds",
    "stakes",
    "stakes_cents",
    "meter_cents",
    "reserve_cents",
    "house_cents",
    "voided",
    "voided_cents",
    "withheld_cents",
    "counted_cents",
    "expected_cents",
    "difference_cents",
    "counted_by",
    "confirmed_by",
)
DISPLAYED_HEADER = (
    "club_day",
    "session",
    "closed_at_utc",
    "pool",
    "currency",
    "status",
    "displayed_cents",
    "corrections",
    "corrections_cents",
    "change_cents",
)

#: Sessions read per step back when looking for a pool's previous displayed amount.
LOOK_BACK = 8

#: A line's figures, summed into its totals.
_SUMMED = (
    "rounds",
    "stakes",
    "stakes_cents",
    "meter_cents",
    "reserve_cents",
    "house_cents",
    "voided",
    "voided_cents",
    "withheld_cents",
)


_ZEROS: dict[str, Any] = dict.fromkeys(_SUMMED, 0)


def _closed_sessions(first: date, last: date) -> list[ClubSession]:
    return list(
        ClubSession.objects.filter(
            club_day__gte=first, club_day__lte=last, status=SessionStatus.CLOSED
        ).order_by("number")
    )


# --- model 8: the stakes withheld --------------------------------------------------------------


def _count_line(count: DropCount | None) -> DropCountLine | None:
    if count is None:
        return None
    return DropCountLine.model_construct(
        counted_cents=count.counted_cents,
        expected_cents=count.expected_cents,
        difference_cents=count.difference_cents,
        counted_by=count.counted_by,
        confirmed_by=count.confirmed_by,
    )


def _withheld_total(lines: Sequence[WithheldLine]) -> WithheldTotal:
    counts = [line.drop_count for line in lines if line.drop_count is not None]
    confirmed = [count for count in counts if count.difference_cents is not None]
    return WithheldTotal.model_construct(
        **{name: sum(getattr(line, name) for line in lines) for name in _SUMMED},
        boxes=len({line.table for line in lines}),
        boxes_confirmed=len(confirmed),
        counted_cents=sum(count.counted_cents for count in confirmed),
        difference_cents=sum(count.difference_cents or 0 for count in confirmed),
    )


def _withheld_lines(rows: list[SessionTable], counts: dict[int, DropCount]) -> list[WithheldLine]:
    """The session's lines, by table name then pool; a table's count on its first line, and a
    line of zeros for a table counted without a stake in the session."""
    lines: list[WithheldLine] = []
    shown: set[int] = set()
    for row in rows:
        lines.append(
            WithheldLine.model_construct(
                table=row.table_id,
                table_name=row.table.name,
                pool=row.pool_id,
                pool_name=row.pool.name,
                currency=row.pool.currency,
                **{name: getattr(row, name) for name in _SUMMED},
                drop_count=None if row.table_id in shown else _count_line(counts.get(row.table_id)),
            )
        )
        shown.add(row.table_id)
    for table_id, count in counts.items():
        if table_id not in shown:
            lines.append(
                WithheldLine.model_construct(
                    table=table_id,
                    table_name=count.table.name,
                    pool=None,
                    pool_name="",
                    currency="",
                    **_ZEROS,
                    drop_count=_count_line(count),
                )
            )
    return sorted(lines, key=lambda line: (line.table_name, line.table, line.pool or 0))


def withheld_register(first: date, last: date) -> WithheldRegister:
    """Model 8 for the club days `first` to `last`, both included."""
    sessions = _closed_sessions(first, last)
    ids = [session.pk for session in sessions]
    rows: dict[int, list[SessionTable]] = {pk: [] for pk in ids}
    for row in SessionTable.objects.filter(session_id__in=ids).select_related("table", "pool"):
        rows[row.session_id].append(row)
    counts: dict[int, dict[int, DropCount]] = {pk: {} for pk in ids}
    for count in DropCount.objects.filter(session_id__in=ids).select_related("table"):
        counts[count.session_id][count.table_id] = count
    parts = []
    for session in sessions:
        assert session.closed_at is not None  # a closed session's time (a CHECK holds it)
        lines = _withheld_lines(rows[session.pk], counts[session.pk])
        parts.append(
            WithheldSession.model_construct(
                session=session.number,
                club_day=session.club_day,
                closed_at=session.closed_at,
                lines=lines,
                total=_withheld_total(lines),
            )
        )
    return WithheldRegister.model_construct(
        club=settings.CLUB_NAME,
        first_day=first,
        last_day=last,
        sessions=parts,
        total=_range_total([part.total for part in parts]),
    )


def _range_total(totals: Sequence[WithheldTotal]) -> WithheldTotal:
    """The sessions' totals summed (a table's box is counted once a session)."""
    return WithheldTotal.model_construct(
        **{
            name: sum(getattr(total, name) for total in totals)
            for name in WithheldTotal.model_fields
        }
    )


# --- model 8 ter: the amounts displayed --------------------------------------------------------


def _previous_displayed(before: int, pools: set[int]) -> dict[int, int]:
    """Each pool's amount displayed at its last closed session numbered below `before`, read
    back LOOK_BACK sessions at a time and no further back than the pool's creation (a pool with
    no earlier session has none)."""
    found: dict[int, int] = {}
    created = dict(Pool.objects.filter(pk__in=pools).values_list("pk", "created_at"))
    while pools - found.keys():
        step = list(
            ClubSession.objects.filter(number__lt=before, status=SessionStatus.CLOSED)
            .order_by("-number")
            .values_list("pk", "number", "closed_at")[:LOOK_BACK]
        )
        if not step:
            break
        by_session = {pk: number for pk, number, _ in step}
        lines = SessionPool.objects.filter(
            session_id__in=by_session, pool_id__in=pools - found.keys()
        ).values_list("session_id", "pool_id", "displayed_cents")
        newest_first = sorted(lines, key=lambda line: -by_session[line[0]])
        for _, pool_id, displayed in newest_first:
            found.setdefault(pool_id, displayed)
        oldest = step[-1][2]
        assert oldest is not None  # a closed session's time (a CHECK holds it)
        missing = pools - found.keys()
        if not missing or all(created[pool] >= oldest for pool in missing):
            break
        before = step[-1][1]
    return found


def displayed_register(first: date, last: date) -> DisplayedRegister:
    """Model 8 ter for the club days `first` to `last`, both included."""
    sessions = _closed_sessions(first, last)
    rows: dict[int, list[SessionPool]] = {session.pk: [] for session in sessions}
    for row in SessionPool.objects.filter(session_id__in=rows).select_related("pool"):
        rows[row.session_id].append(row)
    pools = {row.pool_id for lines in rows.values() for row in lines}
    previous = _previous_displayed(sessions[0].number, pools) if sessions else {}
    parts: list[DisplayedSession] = []
    totals: dict[int, DisplayedTotal] = {}
    for session in sessions:
        assert session.closed_at is not None  # a closed session's time (a CHECK holds it)
        lines = []
        for row in sorted(rows[session.pk], key=lambda row: (row.pool.name, row.pool_id)):
            before = previous.get(row.pool_id)
            change = None if before is None else row.displayed_cents - before
            previous[row.pool_id] = row.displayed_cents
            line = DisplayedLine.model_construct(
                pool=row.pool_id,
                pool_name=row.pool.name,
                currency=row.pool.currency,
                status=row.status,
                displayed_cents=row.displayed_cents,
                corrections=row.corrections,
                corrections_cents=row.corrections_cents,
                change_cents=change,
            )
            lines.append(line)
            totals[row.pool_id] = _pool_total(totals.get(row.pool_id), line)
        parts.append(
            DisplayedSession.model_construct(
                session=session.number,
                club_day=session.club_day,
                closed_at=session.closed_at,
                lines=lines,
            )
        )
    return DisplayedRegister.model_construct(
        club=settings.CLUB_NAME,
        first_day=first,
        last_day=last,
        sessions=parts,
        totals=sorted(totals.values(), key=lambda total: (total.pool_name, total.pool)),
    )


def _pool_total(total: DisplayedTotal | None, line: DisplayedLine) -> DisplayedTotal:
    return DisplayedTotal.model_construct(
        pool=line.pool,
        pool_name=line.pool_name,
        currency=line.currency,
        sessions=(total.sessions if total else 0) + 1,
        corrections=(total.corrections if total else 0) + line.corrections,
        corrections_cents=(total.corrections_cents if total else 0) + line.corrections_cents,
        change_cents=(total.change_cents if total else 0) + (line.change_cents or 0),
        last_displayed_cents=line.displayed_cents,
    )


# --- CSV ----------------------------------------------------------------------------------------


def _csv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([spreadsheet_safe(cell) for cell in row] for row in rows)
    return buffer.getvalue()


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def withheld_csv(register: WithheldRegister) -> str:
    """Model 8's lines, one a row (no totals: a spreadsheet sums the rows, and would sum a
    totals row twice); a count's cells empty where the line carries none."""
    rows = []
    for part in register.sessions:
        for line in part.lines:
            count = line.drop_count
            rows.append(
                (
                    part.club_day.isoformat(),
                    part.session,
                    _utc(part.closed_at),
                    line.table_name,
                    line.pool_name,
                    line.currency,
                    *(getattr(line, name) for name in _SUMMED),
                    *(
                        ("", "", "", "", "")
                        if count is None
                        else (
                            count.counted_cents,
                            count.expected_cents,
                            "" if count.difference_cents is None else count.difference_cents,
                            count.counted_by,
                            count.confirmed_by,
                        )
                    ),
                )
            )
    return _csv(WITHHELD_HEADER, rows)


def displayed_csv(register: DisplayedRegister) -> str:
    """Model 8 ter's lines, one a row; `change_cents` empty for a pool's first session."""
    rows = [
        (
            part.club_day.isoformat(),
            part.session,
            _utc(part.closed_at),
            line.pool_name,
            line.currency,
            line.status,
            line.displayed_cents,
            line.corrections,
            line.corrections_cents,
            "" if line.change_cents is None else line.change_cents,
        )
        for part in register.sessions
        for line in part.lines
    ]
    return _csv(DISPLAYED_HEADER, rows)


# --- PDF ----------------------------------------------------------------------------------------

WORDS: dict[str, dict[str, str]] = {
    "fr": {
        "withheld_title": "Registre des prélèvements (modèle 8)",
        "displayed_title": "Registre des montants affichés (modèle 8 ter)",
        "period": "Journées de jeu du {first} au {last}",
        "session": "Séance n° {number} · journée du {day} · close le {closed}",
        "session_total": "Total de la séance n° {number}",
        "range_total": "Total de la période",
        "none": "Aucune séance close sur cette période.",
        "table": "Table",
        "pool": "Jackpot",
        "rounds": "Tours",
        "stakes": "Mises",
        "stakes_cents": "Montant prélevé",
        "meter_cents": "dont compteur",
        "reserve_cents": "dont réserve",
        "house_cents": "dont maison",
        "voided": "Mises annulées",
        "voided_cents": "Montant annulé",
        "withheld_cents": "Prélevé net",
        "counted_cents": "Compté",
        "expected_cents": "Attendu",
        "difference_cents": "Écart",
        "counted_by": "Compté par",
        "confirmed_by": "Confirmé par",
        "not_counted": "non compté",
        "not_confirmed": "à confirmer",
        "boxes": "urnes confirmées : {confirmed}/{boxes}",
        "day": "Journée",
        "number": "Séance",
        "closed": "Close le",
        "status": "Statut",
        "displayed_cents": "Montant affiché",
        "corrections": "Corrections",
        "corrections_cents": "Montant corrigé",
        "change_cents": "Variation",
        "first": "première séance",
        "totals": "Par jackpot sur la période",
        "sessions": "Séances",
        "last_displayed_cents": "Dernier montant affiché",
        "active": "actif",
        "suspended": "suspendu",
        "stopped": "arrêté",
        "withheld_signatures": "Le responsable de la séance|Les deux personnes ayant procédé au "
        "comptage",
        "displayed_signatures": "Le directeur responsable|Le membre du comité de direction",
        "amounts": "Montants en {currency}",
    },
    "en": {
        "withheld_title": "Register of amounts withheld (model 8)",
        "displayed_title": "Register of amounts displayed (model 8 ter)",
        "period": "Club days {first} to {last}",
        "session": "Session {number} · club day {day} · closed {closed}",
        "session_total": "Total of session {number}",
        "range_total": "Total of the period",
        "none": "No closed session in this period.",
        "table": "Table",
        "pool": "Pool",
        "rounds": "Rounds",
        "stakes": "Stakes",
        "stakes_cents": "Amount withheld",
        "meter_cents": "to the meter",
        "reserve_cents": "to the reserve",
        "house_cents": "to the house",
        "voided": "Voided stakes",
        "voided_cents": "Voided amount",
        "withheld_cents": "Net withheld",
        "counted_cents": "Counted",
        "expected_cents": "Expected",
        "difference_cents": "Difference",
        "counted_by": "Counted by",
        "confirmed_by": "Confirmed by",
        "not_counted": "not counted",
        "not_confirmed": "to confirm",
        "boxes": "boxes confirmed: {confirmed}/{boxes}",
        "day": "Club day",
        "number": "Session",
        "closed": "Closed",
        "status": "Status",
        "displayed_cents": "Amount displayed",
        "corrections": "Corrections",
        "corrections_cents": "Amount corrected",
        "change_cents": "Change",
        "first": "first session",
        "totals": "By pool over the period",
        "sessions": "Sessions",
        "last_displayed_cents": "Last amount displayed",
        "active": "active",
        "suspended": "suspended",
        "stopped": "stopped",
        "withheld_signatures": "The session's manager|The two people who counted",
        "displayed_signatures": "The director in charge|The member of the management committee",
        "amounts": "Amounts in {currency}",
    },
}


def amount(cents: int, lang: str, *, signed: bool = False) -> str:
    """Cents as the register writes them: `1 234,50` in French, `1,234.50` in English."""
    whole, rest = divmod(abs(cents), 100)
    text = f"{whole:,}.{rest:02d}"
    if lang == "fr":
        text = text.replace(",", " ").replace(".", ",")
    sign = "-" if cents < 0 else ("+" if signed and cents > 0 else "")
    return sign + text


def club_time(moment: datetime) -> str:
    """A time in the club's zone, as the registers show it (`2026-11-29 23:58 CET`)."""
    return moment.astimezone(ZoneInfo(settings.TIME_ZONE)).strftime("%Y-%m-%d %H:%M %Z")


@dataclass(frozen=True, slots=True)
class _Styles:
    body: ParagraphStyle
    bold: ParagraphStyle
    right: ParagraphStyle
    right_bold: ParagraphStyle
    title: ParagraphStyle


def _styles() -> _Styles:
    body = ParagraphStyle("body", fontName="Helvetica", fontSize=7, leading=8.5)
    bold = ParagraphStyle("bold", parent=body, fontName="Helvetica-Bold")
    return _Styles(
        body=body,
        bold=bold,
        right=ParagraphStyle("right", parent=body, alignment=2),
        right_bold=ParagraphStyle("right_bold", parent=bold, alignment=2),
        title=ParagraphStyle("title", parent=bold, fontSize=13, leading=16),
    )


def _currency(currencies: Iterable[str]) -> str:
    return ", ".join(sorted({currency for currency in currencies if currency})) or "EUR"


def _pdf(
    *,
    title: str,
    first: date,
    last: date,
    lang: str,
    currency: str,
    table: Flowable | None,
    after: list[Flowable],
    signatures: str,
) -> bytes:
    words, styles = WORDS[lang], _styles()
    buffer = io.BytesIO()
    document = SimpleDocTemplate(
        buffer,
        pagesize=landscape(A4),
        leftMargin=10 * mm,
        rightMargin=10 * mm,
        topMargin=12 * mm,
        bottomMargin=12 * mm,
        title=title,
        author=settings.CLUB_NAME,
    )
    period = words["period"].format(first=first.isoformat(), last=last.isoformat())
    story: list[Flowable] = [
        Paragraph(escape(settings.CLUB_NAME), styles.bold),
        Paragraph(escape(title), styles.title),
        Paragraph(escape(f"{period} · {words['amounts'].format(currency=currency)}"), styles.body),
        Spacer(1, 4 * mm),
    ]
    story.append(table if table is not None else Paragraph(escape(words["none"]), styles.body))
    story += after
    names = signatures.split("|")
    # One line to sign on per name, a gap between them.
    width, gap = 85 * mm, 20 * mm
    cells: list[object] = []
    for name in names:
        cells += [Paragraph(escape(name), styles.body), ""]
    lines = Table(
        [cells[:-1]],
        colWidths=[width, gap] * (len(names) - 1) + [width],
        rowHeights=[24 * mm],
        hAlign="LEFT",
        spaceBefore=14 * mm,
    )
    signed = [
        ("LINEABOVE", (2 * at, 0), (2 * at, 0), 0.6, colors.black) for at in range(len(names))
    ]
    lines.setStyle(
        TableStyle(
            [*signed, ("VALIGN", (0, 0), (-1, -1), "TOP"), ("LEFTPADDING", (0, 0), (-1, -1), 0)]
        )
    )
    story.append(lines)
    document.build(story)
    return buffer.getvalue()


def _heads(
    columns: Sequence[str], figures: Iterable[int], lang: str, styles: _Styles
) -> list[Flowable]:
    """A table's header row, right-aligned over its columns of figures."""
    right = set(figures)
    return [
        Paragraph(escape(WORDS[lang][name]), styles.right_bold if at in right else styles.bold)
        for at, name in enumerate(columns)
    ]


_GRID = [
    ("VALIGN", (0, 0), (-1, -1), "TOP"),
    ("LINEBELOW", (0, 0), (-1, -1), 0.3, colors.grey),
    ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e6e6e6")),
]


def _withheld_cells(line: WithheldLine, lang: str, styles: _Styles) -> list[Flowable]:
    words, count = WORDS[lang], line.drop_count
    figures = [
        str(line.rounds),
        str(line.stakes),
        amount(line.stakes_cents, lang),
        amount(line.meter_cents, lang),
        amount(line.reserve_cents, lang),
        amount(line.house_cents, lang),
        str(line.voided),
        amount(line.voided_cents, lang),
        amount(line.withheld_cents, lang),
    ]
    if count is None:
        counted = ["", "", "", "", ""]
    else:
        difference = count.difference_cents
        counted = [
            amount(count.counted_cents, lang),
            amount(count.expected_cents, lang),
            words["not_confirmed"] if difference is None else amount(difference, lang, signed=True),
            count.counted_by.removeprefix("user:"),
            count.confirmed_by.removeprefix("user:"),
        ]
    return [
        Paragraph(escape(line.table_name), styles.body),
        Paragraph(escape(line.pool_name), styles.body),
        *(Paragraph(escape(cell), styles.right) for cell in figures + counted[:3]),
        *(Paragraph(escape(cell), styles.body) for cell in counted[3:]),
    ]


def _withheld_total_cells(label: str, total: WithheldTotal, lang: str, styles: _Styles) -> list:
    words = WORDS[lang]
    figures = [
        str(total.rounds),
        str(total.stakes),
        *(amount(getattr(total, name), lang) for name in _SUMMED[2:6]),
        str(total.voided),
        amount(total.voided_cents, lang),
        amount(total.withheld_cents, lang),
        *(
            (
                amount(total.counted_cents, lang),
                "",
                amount(total.difference_cents, lang, signed=True),
            )
            if total.boxes_confirmed
            else ("", "", "")  # no box confirmed yet: no sum to show
        ),
    ]
    boxes = words["boxes"].format(confirmed=total.boxes_confirmed, boxes=total.boxes)
    return [
        Paragraph(escape(label), styles.bold),
        "",
        *(Paragraph(escape(cell), styles.right_bold) for cell in figures),
        Paragraph(escape(boxes), styles.body),
        "",
    ]


def _total_spans(row: int) -> list[tuple[object, ...]]:
    """A total's label over the table and pool columns, its boxes over the two names'."""
    return [("SPAN", (0, row), (1, row)), ("SPAN", (-2, row), (-1, row))]


def withheld_pdf(register: WithheldRegister, lang: str) -> bytes:
    """Model 8 as a PDF (A4 landscape): a block per session, its lines and total, the range's
    total, and the signature lines of the session's manager and the two who counted."""
    words, styles = WORDS[lang], _styles()
    # The CSV's columns but those the session's heading and the register's currency say.
    columns = tuple(
        name
        for name in WITHHELD_HEADER
        if name not in ("club_day", "session", "closed_at_utc", "currency")
    )
    rows: list[list] = [_heads(columns, range(2, 14), lang, styles)]
    style = list(_GRID)
    for part in register.sessions:
        heading = words["session"].format(
            number=part.session, day=part.club_day.isoformat(), closed=club_time(part.closed_at)
        )
        style += [
            ("SPAN", (0, len(rows)), (-1, len(rows))),
            ("BACKGROUND", (0, len(rows)), (-1, len(rows)), colors.HexColor("#f3f1ea")),
        ]
        rows.append([Paragraph(escape(heading), styles.bold)] + [""] * (len(columns) - 1))
        rows += [_withheld_cells(line, lang, styles) for line in part.lines]
        label = words["session_total"].format(number=part.session)
        style += [("LINEABOVE", (0, len(rows)), (-1, len(rows)), 0.6, colors.black)]
        style += _total_spans(len(rows))
        rows.append(_withheld_total_cells(label, part.total, lang, styles))
    table = None
    if register.sessions:
        style += [
            ("LINEABOVE", (0, len(rows)), (-1, len(rows)), 1.2, colors.black),
            ("BACKGROUND", (0, len(rows)), (-1, len(rows)), colors.HexColor("#e6e6e6")),
            *_total_spans(len(rows)),
        ]
        rows.append(_withheld_total_cells(words["range_total"], register.total, lang, styles))
        shares = (9, 8, 4.5, 4.5, 7, 6.5, 6.5, 6.5, 6.5, 6.5, 6.5, 6.5, 6.5, 6.5, 7, 7)
        width = landscape(A4)[0] - 20 * mm
        table = Table(rows, colWidths=[width * s / sum(shares) for s in shares], repeatRows=1)
        table.setStyle(TableStyle(style))
    currencies = (line.currency for part in register.sessions for line in part.lines)
    return _pdf(
        title=words["withheld_title"],
        first=register.first_day,
        last=register.last_day,
        lang=lang,
        currency=_currency(currencies),
        table=table,
        after=[],
        signatures=words["withheld_signatures"],
    )


def displayed_pdf(register: DisplayedRegister, lang: str) -> bytes:
    """Model 8 ter as a PDF (A4 landscape): a line per session and pool, day by day, each pool's
    total over the range, and the signature lines of the director in charge and the member of
    the management committee."""
    words, styles = WORDS[lang], _styles()
    columns = (
        "day",
        "number",
        "closed",
        "pool",
        "status",
        "displayed_cents",
        "corrections",
        "corrections_cents",
        "change_cents",
    )
    rows: list[list] = [_heads(columns, (1, 5, 6, 7, 8), lang, styles)]
    for part in register.sessions:
        for line in part.lines:
            change = line.change_cents
            rows.append(
                [
                    Paragraph(escape(part.club_day.isoformat()), styles.body),
                    Paragraph(str(part.session), styles.right),
                    Paragraph(escape(club_time(part.closed_at)), styles.body),
                    Paragraph(escape(line.pool_name), styles.body),
                    Paragraph(escape(words.get(line.status, line.status)), styles.body),
                    Paragraph(escape(amount(line.displayed_cents, lang)), styles.right_bold),
                    Paragraph(str(line.corrections), styles.right),
                    Paragraph(
                        escape(amount(line.corrections_cents, lang, signed=True)), styles.right
                    ),
                    Paragraph(
                        escape(
                            words["first"] if change is None else amount(change, lang, signed=True)
                        ),
                        styles.right,
                    ),
                ]
            )
    width = landscape(A4)[0] - 20 * mm
    table = None
    after: list[Flowable] = []
    if register.sessions:
        shares = (8, 5, 12, 14, 7, 10, 7, 9, 9)
        table = Table(rows, colWidths=[width * s / sum(shares) for s in shares], repeatRows=1)
        table.setStyle(TableStyle(_GRID))
        total_columns = (
            "pool",
            "sessions",
            "corrections",
            "corrections_cents",
            "change_cents",
            "last_displayed_cents",
        )
        totals: list[list] = [_heads(total_columns, range(1, 6), lang, styles)]
        for total in register.totals:
            totals.append(
                [
                    Paragraph(escape(total.pool_name), styles.bold),
                    Paragraph(str(total.sessions), styles.right),
                    Paragraph(str(total.corrections), styles.right),
                    Paragraph(
                        escape(amount(total.corrections_cents, lang, signed=True)), styles.right
                    ),
                    Paragraph(escape(amount(total.change_cents, lang, signed=True)), styles.right),
                    Paragraph(escape(amount(total.last_displayed_cents, lang)), styles.right_bold),
                ]
            )
        summary = Table(totals, colWidths=[width * 0.7 / 6] * 6, hAlign="LEFT")
        summary.setStyle(TableStyle(_GRID))
        after = [
            Spacer(1, 5 * mm),
            Paragraph(escape(words["totals"]), styles.bold),
            Spacer(1, 1.5 * mm),
            summary,
        ]
    currencies = (line.currency for part in register.sessions for line in part.lines)
    return _pdf(
        title=words["displayed_title"],
        first=register.first_day,
        last=register.last_day,
        lang=lang,
        currency=_currency(currencies),
        table=table,
        after=after,
        signatures=words["displayed_signatures"],
    )
