"""The auditors' payout log: every award as CSV, streamed in constant memory, with a digest.

Rows come from a server-side cursor (`iterator`), are written one by one and never held
together, so a million awards cost no more memory than ten. Each row carries the hash of the
audit event that created the award, tying the export to the tamper-evident journal. The last
line is `# sha256 <hex>`: the SHA-256 of every byte before it, so a copy can be checked later
(`head -n -1 export.csv | sha256sum`).
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterator
from datetime import UTC

from django.db.models import OuterRef, QuerySet, Subquery

from jackpot.models import Award, Transfer, TransferCode

HEADER = (
    "award_id",
    "won_at_utc",
    "pool",
    "table",
    "round",
    "seat",
    "combination",
    "amount_cents",
    "status",
    "verified_by",
    "approved_by",
    "event_hash",
)
# The transfer that created an award (its audit event is the award's birth certificate).
_CREATED_BY = (TransferCode.JACKPOT_HIT, TransferCode.FIXED_AWARD, TransferCode.ENVY)


def award_rows(awards: QuerySet[Award]) -> Iterator[str]:
    """The CSV lines of `awards` (oldest first), then the digest line."""
    event_hash = Transfer.objects.filter(award=OuterRef("pk"), code__in=_CREATED_BY).values(
        "event__hash"
    )[:1]
    query = (
        awards.annotate(event_hash=Subquery(event_hash))
        .select_related("round__table", "verified_by", "approved_by")
        .order_by("pk")
    )
    digest = hashlib.sha256()
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")

    def line(values: tuple[object, ...]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(values)
        text = buffer.getvalue()
        digest.update(text.encode())
        return text

    yield line(HEADER)
    for award in query.iterator(chunk_size=2000):
        yield line(
            (
                award.pk,
                award.created_at.astimezone(UTC).isoformat(),
                award.pool_id,
                award.round.table.name,
                award.round.round_id,
                award.seat,
                award.kind,
                award.amount_cents,
                award.status,
                award.verified_by.get_username() if award.verified_by else "",
                award.approved_by.get_username() if award.approved_by else "",
                award.event_hash or "",
            )
        )
    yield f"# sha256 {digest.hexdigest()}\n"
