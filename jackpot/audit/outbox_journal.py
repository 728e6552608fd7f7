"""What an outbox message may say: only what an authentic journal event says (issue 37 item 7).

Outbox rows are rows the service's own database role can write, and the worker signs each
message with the receivers' secrets, so a receiver trusts it. So the worker's `vouch` step
(`vouched`, given to `jackpot.notifications.outbox.relay` by the task) finds the event a message
follows by its key, checks that event's HMAC under the journal's key (not in the database) over the
event and its transfers, as `jackpot.audit.verification` does, and builds the message's data from it
as the enqueueing code built it:
- `event:<chain>:<sequence>`, topic `significant_event`: that event, one of the catalogue's
  (`jackpot.notifications.significant.webhook_data`);
- `award:<id>`, topic `award.jackpot_hit` for a royal, `award.big_win` for any other: the award
  as its grant says, the `round.settled` event that wrote the award's first transfer
  (`jackpot.notifications.big_wins`), with its pool's currency, the one fact not on the event, read
  from the pool row as the enqueue did (a pool's currency never changes once created).
The data delivered is the event's, and the row's payload must equal it: a row whose payload,
topic or key no authentic event explains (inserted, or edited by SQL) is `outbox.Refused` and
never signed; a message of an older build's topic is refused too, and nothing here raises for a
row's shape. Cost: the event by a unique index (an award's by its transfers' award index), its
transfers by their event, and for an award its pool: a few indexed reads per message, never
the journal's age. Nothing here writes.
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any

from jackpot.models import AuditEvent, AwardKind, OutboxMessage, Pool, Transfer
from jackpot.money import ledger
from jackpot.money.canonical import chain_hash_matches
from jackpot.notifications import outbox, significant

Refused = outbox.Refused
GRANT = "round.settled"  # the event that grants a round's awards (tables.rounds.settlement)


def vouched(message: OutboxMessage) -> dict[str, Any]:
    """The data to deliver for `message`: what its authentic journal event says, equal to the
    row's payload; else `outbox.Refused`, naming why."""
    prefix, _, name = message.key.partition(":")
    if message.topic == outbox.SIGNIFICANT_EVENT and prefix == "event":
        data = _significant(name)
    elif message.topic in (outbox.BIG_WIN, outbox.JACKPOT_HIT) and prefix == "award":
        data = _award(name, message.topic)
    else:
        raise Refused(f"no journal event vouches for topic {message.topic!r} keyed {prefix!r}")
    # As the enqueue stored it (JSON): an enum is its value, a tuple a list.
    data = json.loads(json.dumps(data, sort_keys=True))
    if message.payload != data:
        raise Refused("its payload differs from what its journal event says")
    return data


def _authentic(event: AuditEvent) -> list[Transfer]:
    """`event`'s transfers, in the order written, when its HMAC verifies over them."""
    transfers = list(Transfer.objects.filter(event_id=event.pk).order_by("pk"))
    content = ledger.event_content(event, transfers)
    if not chain_hash_matches(ledger.journal_key(), event.prev_hash, content, event.hash):
        raise Refused(f"its journal event {event.chain}/{event.sequence} does not verify")
    return transfers


def _significant(name: str) -> dict[str, Any]:
    chain, _, sequence = name.rpartition(":")
    event = (
        AuditEvent.objects.filter(chain=chain, sequence=int(sequence)).first()
        if chain and sequence.isdigit()
        else None
    )
    if event is None:
        raise Refused(f"it names no journal event ({name!r})")
    _authentic(event)
    if event.kind not in significant.KINDS:
        raise Refused(f"its journal event {chain}/{sequence} ({event.kind}) is not significant")
    return significant.webhook_data(event)


def _award(name: str, topic: str) -> dict[str, Any]:
    award_id = int(name) if name.isdigit() else None
    grant = (
        Transfer.objects.filter(award_id=award_id)
        .order_by("pk")
        .values_list("event_id", flat=True)
        .first()
        if award_id is not None
        else None
    )
    event = AuditEvent.objects.filter(pk=grant).first() if grant is not None else None
    if event is None:
        raise Refused(f"no journal event granted award {name!r}")
    transfers = _authentic(event)
    payload = event.payload if isinstance(event.payload, dict) else {}
    said = [
        award
        for award in payload.get("awards") or ()
        if isinstance(award, dict) and award.get("id") == award_id
    ]
    moved = [t for t in transfers if t.award_id == award_id]
    if event.kind != GRANT or len(said) != 1 or not moved:
        raise Refused(f"its journal event {event.chain}/{event.sequence} grants no award {name}")
    award = said[0]
    jackpot = award.get("kind") == AwardKind.ROYAL_FLUSH
    if topic != (outbox.JACKPOT_HIT if jackpot else outbox.BIG_WIN):
        raise Refused(f"its journal event says award {name} is a {award.get('kind')}")
    pool = moved[0].pool_id
    currency = Pool.objects.filter(pk=pool).values_list("currency", flat=True).first()
    # The keys and values of `jackpot.notifications.big_wins.big_wins_enqueue`, from the grant.
    return {
        "award": award_id,
        "sequence": award.get("sequence"),
        "kind": award.get("kind"),
        "jackpot": jackpot,
        "amount_cents": award.get("amount_cents"),
        "currency": currency,
        "status": award.get("status"),
        "pool": pool,
        "table": award.get("table_pk"),
        "seat": award.get("seat"),
        "round": award.get("round_name"),
        "round_pk": payload.get("round"),
        "won_at": event.occurred_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
    }
