"""The period-end liability written for the accountant: CSV for a spreadsheet, PDF to file.

Both are written from the one `jackpot.bodies.liability.Liability` the JSON answer is, so the
three never differ by a figure:
- CSV: one `figure,value` row per figure (amounts in integer cents, times in UTC ISO 8601), then
  one `journal:<chain>` row per chain (`<sequence> <hash>`); every cell spreadsheet-safe
  (`jackpot.reporting.exports.spreadsheet_safe`); the last line is `# sha256 <hex>` of every byte
  before it, as the payout log's (`head -n -1 liability.csv | sha256sum`);
- PDF (A4, reportlab): the club's name (settings.CLUB_NAME), the pool, the instant and the period
  in UTC and in the club's time zone, the figures in EUR, the journal's position, and a line for
  the accountant's signature. Labels in French, then English.
"""

from __future__ import annotations

import csv
import hashlib
import io
from datetime import UTC, datetime
from xml.sax.saxutils import escape

from django.conf import settings
from django.utils import timezone
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from jackpot.bodies.liability import AwardFigure, CorrectionFigures, Liability, LifeFigures
from jackpot.reporting.exports import spreadsheet_safe


def _figures(liability: Liability) -> list[tuple[str, object]]:
    period = liability.period
    rows: list[tuple[str, object]] = [
        ("pool", liability.pool),
        ("pool_name", liability.pool_name),
        ("currency", liability.currency),
        ("at_utc", liability.at.isoformat()),
        ("meter_cents", liability.meter_cents),
        ("seed_cents", liability.seed_cents),
        ("meter_above_seed_cents", liability.meter_above_seed_cents),
        ("stopped", str(liability.stopped).lower()),
        ("orphans_cents", liability.orphans_cents),
        ("reserve_cents", liability.reserve_cents),
        ("pending_count", liability.pending.count),
        ("pending_cents", liability.pending.amount_cents),
        ("payable_count", liability.payable.count),
        ("payable_cents", liability.payable.amount_cents),
        ("owed_cents", liability.owed_cents),
        ("period_start_utc", period.start.isoformat()),
        ("period_end_utc", period.end.isoformat()),
    ]
    for name in ("granted", "jackpots", "paid", "voided"):
        figure: AwardFigure = getattr(period, name)
        rows += [(f"{name}_count", figure.count), (f"{name}_cents", figure.amount_cents)]
    corrections = period.corrections
    rows += [
        ("corrections_count", corrections.count),
        ("corrections_meter_cents", corrections.meter_cents),
        ("corrections_reserve_cents", corrections.reserve_cents),
        ("corrections_pending_cents", corrections.pending_cents),
        ("corrections_payable_cents", corrections.payable_cents),
    ]
    life = period.life
    rows += [
        ("life_seed_back_cents", life.seed_back_cents),
        ("life_moved_out_cents", life.moved_out_cents),
        ("life_moved_in_cents", life.moved_in_cents),
        ("life_orphans_final_cents", life.orphans_final_cents),
    ]
    rows.append(("checkpoint", liability.checkpoint if liability.checkpoint is not None else ""))
    rows += [(f"journal:{at.chain}", f"{at.sequence} {at.hash}") for at in liability.journal]
    return rows


def liability_csv(liability: Liability) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("figure", "value"))
    for name, value in _figures(liability):
        writer.writerow((spreadsheet_safe(name), spreadsheet_safe(value)))
    body = out.getvalue().encode()
    return body + f"# sha256 {hashlib.sha256(body).hexdigest()}\n".encode()


def euros(cents: int) -> str:
    """Cents as EUR with a thin space between thousands: 1 000 123,45 EUR."""
    sign, cents = ("-" if cents < 0 else ""), abs(cents)
    whole = f"{cents // 100:,}".replace(",", " ")
    return f"{sign}{whole},{cents % 100:02d} EUR"


def _local(moment: datetime) -> str:
    """UTC, then the club's time zone (settings.TIME_ZONE) for the reader."""
    local = timezone.localtime(moment).strftime("%d/%m/%Y %H:%M:%S %Z")
    return f"{moment.astimezone(UTC).isoformat()} ({local})"


def _awards(figure: AwardFigure) -> str:
    return f"{figure.count} · {euros(figure.amount_cents)}"


def _corrections(figures: CorrectionFigures) -> str:
    """The period's corrections: how many, and each account's net, signed."""
    return (
        f"{figures.count} · compteur / meter {euros(figures.meter_cents)}, réserve / reserve "
        f"{euros(figures.reserve_cents)}, en attente / pending {euros(figures.pending_cents)}, "
        f"à payer / payable {euros(figures.payable_cents)}"
    )


def _life(figures: LifeFigures) -> str:
    """What the pool's life moved across the owed figure in the period."""
    return (
        f"départ rendu / seed back {euros(figures.seed_back_cents)}, transféré / moved out "
        f"{euros(figures.moved_out_cents)}, reçu / moved in {euros(figures.moved_in_cents)}, "
        f"orphelins acquis / orphans final {euros(figures.orphans_final_cents)}"
    )


def liability_pdf(liability: Liability) -> bytes:
    out = io.BytesIO()
    document = SimpleDocTemplate(
        out,
        pagesize=A4,
        leftMargin=18 * mm,
        rightMargin=18 * mm,
        topMargin=16 * mm,
        bottomMargin=16 * mm,
        title=f"Passif du jackpot / Jackpot liability · {liability.pool_name}",
        author=settings.CLUB_NAME,
    )
    heading = ParagraphStyle("heading", fontName="Helvetica-Bold", fontSize=14, leading=18)
    text = ParagraphStyle("text", fontName="Helvetica", fontSize=9, leading=12)
    small = ParagraphStyle("small", fontName="Courier", fontSize=7, leading=9)
    period = liability.period
    rows = [
        ("Établissement / Club", settings.CLUB_NAME),
        ("Jackpot / Pool", f"{liability.pool_name} (n° {liability.pool})"),
        ("Arrêté au / At", _local(liability.at)),
        ("Période / Period", f"{_local(period.start)} to {_local(period.end)}"),
        ("Compteur / Meter", euros(liability.meter_cents)),
        ("Montant de départ / Seed", euros(liability.seed_cents)),
        ("Compteur au-delà du départ / Meter above seed", euros(liability.meter_above_seed_cents)),
        ("Réserve / Reserve", euros(liability.reserve_cents)),
        ("Orphelins / Orphans", euros(liability.orphans_cents)),
        ("Gains en attente / Awards pending", _awards(liability.pending)),
        ("Gains à payer / Awards payable", _awards(liability.payable)),
        ("Total dû / Owed", euros(liability.owed_cents)),
        ("Gains de la période / Awards granted", _awards(period.granted)),
        ("dont jackpots / of which jackpots", _awards(period.jackpots)),
        ("Gains payés / Awards paid", _awards(period.paid)),
        ("Gains annulés / Awards voided", _awards(period.voided)),
        ("Corrections documentées / Documented corrections", _corrections(period.corrections)),
        ("Arrêt, remplacement, orphelins / Stop, replacement, orphans", _life(period.life)),
    ]
    figures = Table(
        [[Paragraph(escape(label), text), Paragraph(escape(value), text)] for label, value in rows],
        colWidths=[70 * mm, 104 * mm],
    )
    figures.setStyle(
        TableStyle(
            [
                ("GRID", (0, 0), (-1, -1), 0.4, colors.grey),
                ("BACKGROUND", (0, 11), (-1, 11), colors.whitesmoke),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    started = (
        f"à partir du point de contrôle n° {liability.checkpoint} / from checkpoint"
        f" {liability.checkpoint}"
        if liability.checkpoint is not None
        else "depuis la première écriture / from the first entry"
    )
    positions = [
        Paragraph(escape(f"{at.chain} n° {at.sequence} {at.hash}"), small)
        for at in liability.journal
    ]
    story = [
        Paragraph(escape("Passif du jackpot progressif / Progressive jackpot liability"), heading),
        Spacer(1, 4 * mm),
        figures,
        Spacer(1, 5 * mm),
        Paragraph(escape(f"Position du journal / Journal position ({started})"), text),
        *positions,
        Spacer(1, 12 * mm),
        Paragraph(
            escape("Le comptable / The accountant: nom, date, signature / name, date, signature"),
            text,
        ),
        Spacer(1, 14 * mm),
        Paragraph("_" * 60, text),
    ]
    document.build(story)
    return out.getvalue()
