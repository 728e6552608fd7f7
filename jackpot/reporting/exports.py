"""The auditors' payout log: every award as CSV, read in pages, with a digest. One writer for the
synchronous `export.csv` and the background jobs (`jackpot.reporting.export_jobs`), so the two
never differ by a column.

Invariants:
- keyset pages on the award id, each one short statement (no server-side cursor: pgbouncer);
  memory is one page;
- an export holds the matching awards up to the highest id at its start, each row with the hash
  of the event that created its award; the last line is `# sha256 <hex>` of every byte before;
- a cell is never a formula (`spreadsheet_safe`, for every CSV the service writes);
- the synchronous export's range is bounded (EXPORT_SYNC_MAX_DAYS, `range_too_large`).

The reasons: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterator, Sequence
from datetime import UTC, timedelta
from pathlib import Path

from django.conf import settings
from django.db.models import Max, Min, OuterRef, QuerySet, Subquery

from core.codes import ErrorCode
from core.errors import ApiError
from jackpot.bodies.awards import AwardFilters
from jackpot.models import AWARD_GRANTED_BY, Award, Transfer

HEADER = (
    "award_id",
    "won_at_utc",
    "pool",
    "game",
    "table",
    "round",
    "seat",
    "combination",
    "hole_cards",
    "board",
    "amount_cents",
    "status",
    "verified_by",
    "approved_by",
    "paid_by",
    "paid_at_utc",
    "event_hash",
)
PAGE_SIZE = 2000  # awards per statement for the synchronous export


# What makes a spreadsheet read a cell as a formula: = + - @, and a tab or a carriage return, past
# which some read the next character as the first.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: object) -> object:
    """A CSV cell that no spreadsheet evaluates: text starting as a formula does gets a leading
    apostrophe (shown as text); anything else, numbers (negative ones too) included, as is."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


class OutsideExportDir(ValueError):
    """An export's file that resolves outside EXPORT_DIR (a link planted there)."""


def export_file_name(job_id: int) -> str:
    return f"awards-export-{job_id}.csv"


def export_file(job_id: int) -> Path:
    """An export job's file: always derived from its id under EXPORT_DIR, never read from the
    job's row, so a row edited to name another file (the secrets, the anchors) makes the
    service neither serve nor delete it. `OutsideExportDir` when the name, followed through
    any link, leaves EXPORT_DIR: nothing outside it is ever served."""
    directory = Path(settings.EXPORT_DIR).resolve()
    path = directory / export_file_name(job_id)
    if path.resolve().parent != directory:
        raise OutsideExportDir(f"{path} resolves outside {directory}")
    return path


def sync_range_check(filters: AwardFilters) -> None:
    """Refuse (400 `range_too_large`) a synchronous export whose range is open on a side or
    longer than EXPORT_SYNC_MAX_DAYS: it would hold a web worker for as long as the journal is
    old. The message sends the client to a background export, which takes any range."""
    days = settings.EXPORT_SYNC_MAX_DAYS
    hint = f"export.csv takes from and to at most {days} days apart"
    start, end = filters.from_, filters.to
    if start is None or end is None:
        found = f"without {'from' if start is None else 'to'} the range is open"
    elif end - start > timedelta(days=days):
        found = f"from {start.isoformat()} to {end.isoformat()} is longer"
    else:
        return
    raise ApiError(
        ErrorCode.RANGE_TOO_LARGE,
        f"{hint} ({found}): for a longer range POST /api/v1/awards/exports, built in the"
        " background",
        param="to" if end is None and start is not None else "from",
    )


def highest_award_id() -> int:
    """The highest award id now (0 without awards): an export's `up_to`."""
    return Award.objects.aggregate(highest=Max("pk"))["highest"] or 0


def award_pages(
    awards: QuerySet[Award], *, up_to: int, page_size: int
) -> Iterator[Sequence[Award]]:
    """`awards` with an id up to `up_to`, oldest first, `page_size` at a time (keyset pages)."""
    event_hash = Transfer.objects.filter(award=OuterRef("pk"), code__in=AWARD_GRANTED_BY).values(
        "event__hash"
    )[:1]
    query = (
        awards.filter(pk__lte=up_to)
        .annotate(event_hash=Subquery(event_hash))
        .select_related("verified_by", "approved_by", "paid_by")
        .order_by("pk")
    )
    after = 0
    while True:
        page = list(query.filter(pk__gt=after)[:page_size])
        if not page:
            return
        yield page
        if len(page) < page_size:
            return
        after = page[-1].pk


class PayoutLog:
    """The CSV's lines, in order: `header()`, `rows(page)` for each page, then `digest_line()`,
    which ends the log with the SHA-256 of every line before it."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer, lineterminator="\n")

    def _lines(self, rows: list[tuple[object, ...]]) -> str:
        self._buffer.seek(0)
        self._buffer.truncate()
        self._writer.writerows([spreadsheet_safe(cell) for cell in row] for row in rows)
        text = self._buffer.getvalue()
        self._digest.update(text.encode())
        return text

    def header(self) -> str:
        return self._lines([HEADER])

    def rows(self, awards: Sequence[Award]) -> str:
        """One line per award (read by `award_pages`: its event hash and users come with it)."""
        return self._lines([_row(award) for award in awards])

    def digest_line(self) -> str:
        return f"# sha256 {self._digest.hexdigest()}\n"


def _row(award: Award) -> tuple[object, ...]:
    event_hash: str | None = getattr(award, "event_hash", None)
    return (
        award.pk,
        award.created_at.astimezone(UTC).isoformat(),
        award.pool_id,
        award.game,
        award.table_name,
        award.round_name,
        award.seat,
        award.kind,
        " ".join(award.hole_cards),
        " ".join(award.board),
        award.amount_cents,
        award.status,
        award.verified_by.get_username() if award.verified_by else "",
        award.approved_by.get_username() if award.approved_by else "",
        award.paid_by.get_username() if award.paid_by else "",
        award.paid_at.astimezone(UTC).isoformat() if award.paid_at else "",
        event_hash or "",
    )


def award_rows(awards: QuerySet[Award], *, page_size: int = PAGE_SIZE) -> Iterator[str]:
    """The payout log of `awards` as it is now, a page of lines at a time (the synchronous
    export streams it)."""
    log = PayoutLog()
    yield log.header()
    for page in award_pages(awards, up_to=highest_award_id(), page_size=page_size):
        yield log.rows(page)
    yield log.digest_line()


def awards_filtered(query: AwardFilters) -> QuerySet[Award]:
    """Awards matching the query's filters: pool, table, kind, status, from and to (on when the
    award was won; `to` excluded). With `from`, also bounded below by the lowest id won since
    (read on the `created_at` index): the same awards, but a walk in id order (the exports' keyset
    pages) starts at the range instead of at the first award ever."""
    awards = Award.objects.all()
    if query.from_ is not None:
        since = Award.objects.filter(created_at__gte=query.from_).aggregate(first=Min("pk"))
        awards = awards.filter(pk__gte=since["first"]) if since["first"] else awards.none()
    filters = {
        "pool_id": query.pool,
        "table_pk": query.table,  # the award's own record of its table (no join)
        "kind": query.kind,
        "status": query.status,
        "created_at__gte": query.from_,
        "created_at__lt": query.to,
    }
    return awards.filter(
        **{lookup: value for lookup, value in filters.items() if value is not None}
    )
