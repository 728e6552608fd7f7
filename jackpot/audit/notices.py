"""The notices' and the register of orphans' rows against the journal (compliance 57, 58).

Each `Notice` row must say what its authentic `notice.made` event says (pool, addressee, cause,
deadline, text) and, once sent, what its `notice.sent` event says (who, when, how); each
`OrphanEntry`, column by column, what its `pool.stopped` event entered (change, time, amount, the
deadline of that time's season under CLUB_SEASON_END) and what closed it, if anything: its
`pool.orphans_recovered` (when, into which pool, by which change) or `orphans.final` (when) event,
the first of the pool's chain after the stop; a line left open has none. A row the service's role
edited in SQL is named here; the events themselves are checked by the chains' walk. Cost: the
notices and the stopped pools, each pool's chain after its stop, never the journal.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jackpot.models import AuditEvent, Notice, OrphanEntry
from jackpot.money import ledger
from jackpot.pools.orphans import FINAL, RECOVERED, season_deadline


def _payload(event_id: int | None, kind: str, about: str, value: int) -> dict[str, Any] | None:
    event = AuditEvent.objects.filter(pk=event_id).first() if event_id else None
    if event is None or event.kind != kind:
        return None
    payload = event.payload if isinstance(event.payload, dict) else {}
    if payload.get(about) != value:
        return None
    with_transfers = event.transfers.exists()
    ok = ledger.authentic_with_transfers(event) if with_transfers else ledger.authentic(event)
    facts = {"_actor": event.actor, "_at": event.occurred_at, "_sequence": event.sequence}
    return {**payload, **facts} if ok else None


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
    if (
        stopped is None
        or moved.get("orphans_cents") != entry.orphans_cents
        or stopped.get("change") != entry.change_id
        or stopped["_at"] != entry.stopped_at
        or season_deadline(stopped["_at"]) != entry.deadline
    ):
        return [f"orphans of pool {entry.pool_id}: the register differs from its stop's event"]
    closing = (
        AuditEvent.objects.filter(
            chain=ledger.pool_chain(entry.pool_id),
            sequence__gt=stopped["_sequence"],
            kind__in=(RECOVERED, FINAL),
        )
        .order_by("sequence")
        .values_list("pk", flat=True)
        .first()
    )
    if closing != entry.closed_event_id:
        return [f"orphans of pool {entry.pool_id}: the register's closing differs from the chain's"]
    if closing is None:
        still = (entry.recovered_at, entry.recovered_into_id, entry.recovery_id, entry.final_at)
        if still == (None, None, None, None):
            return []
        return [f"orphans of pool {entry.pool_id}: closed in the register, open in the journal"]
    recovered = _payload(closing, RECOVERED, "pool", entry.pool_id)
    final = None if recovered else _payload(closing, FINAL, "pool", entry.pool_id)
    if recovered is not None:
        said = (recovered["_at"], recovered.get("to_pool"), recovered.get("change"), None)
    elif final is not None:
        said = (None, None, None, final["_at"])
    else:
        said = None
    if said != (entry.recovered_at, entry.recovered_into_id, entry.recovery_id, entry.final_at):
        return [f"orphans of pool {entry.pool_id}: the register differs from its closing event"]
    return []


def problems() -> list[str]:
    """Every notice and register line whose row the journal does not explain."""
    found: list[str] = []
    for notice in Notice.objects.select_related("sent_by").order_by("pk"):
        found += _notice(notice)
    for entry in OrphanEntry.objects.order_by("pk"):
        found += _entry(entry)
    return found
