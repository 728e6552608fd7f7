"""The notices' and the register of orphans' rows against the journal (compliance 57, 58).

Each `Notice` row must say what its authentic `notice.made` event says (pool, addressee, cause,
deadline, text) and, once sent, what its `notice.sent` event says (who, when, how); each
`OrphanEntry` what its `pool.stopped` event entered. A row the service's role edited in SQL is
named here; the events themselves are checked by the chains' walk. Cost: the notices and the
stopped pools, never the journal.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jackpot.models import AuditEvent, Notice, OrphanEntry
from jackpot.money import ledger


def _payload(event_id: int | None, kind: str, about: str, value: int) -> dict[str, Any] | None:
    event = AuditEvent.objects.filter(pk=event_id).first() if event_id else None
    if event is None or event.kind != kind:
        return None
    payload = event.payload if isinstance(event.payload, dict) else {}
    if payload.get(about) != value:
        return None
    with_transfers = event.transfers.exists()
    ok = ledger.authentic_with_transfers(event) if with_transfers else ledger.authentic(event)
    return {**payload, "_actor": event.actor} if ok else None


def _notice(notice: Notice) -> list[str]:
    made = _payload(notice.made_event_id, "notice.made", "notice", notice.pk)
    said = {
        "pool": notice.pool_id,
        "addressee": notice.addressee,
        "cause": notice.cause,
        "text": notice.text,
    }
    if (
        made is None
        or any(made.get(key) != value for key, value in said.items())
        or datetime.fromisoformat(str(made.get("deadline"))) != notice.deadline
    ):
        return [f"notice {notice.pk}: the row differs from its notice.made event"]
    if notice.sent_event_id is None:
        return [] if notice.sent_at is None else [f"notice {notice.pk}: sent with no event"]
    sent = _payload(notice.sent_event_id, "notice.sent", "notice", notice.pk)
    by = notice.sent_by.get_username() if notice.sent_by else None
    if (
        sent is None
        or sent["_actor"] != f"user:{by}"
        or notice.sent_at is None
        or datetime.fromisoformat(str(sent["sent_at"])) != notice.sent_at
        or (sent["channel"], sent["reference"]) != (notice.channel, notice.reference)
    ):
        return [f"notice {notice.pk}: its sending differs from its notice.sent event"]
    return []


def _entry(entry: OrphanEntry) -> list[str]:
    stopped = _payload(entry.stopped_event_id, "pool.stopped", "pool", entry.pool_id)
    moved = (stopped or {}).get("moved", {})
    if stopped is None or moved.get("orphans_cents") != entry.orphans_cents:
        return [f"orphans of pool {entry.pool_id}: the register differs from its stop's event"]
    return []


def problems() -> list[str]:
    """Every notice and register line whose row the journal does not explain."""
    found: list[str] = []
    for notice in Notice.objects.select_related("sent_by").order_by("pk"):
        found += _notice(notice)
    for entry in OrphanEntry.objects.order_by("pk"):
        found += _entry(entry)
    return found
