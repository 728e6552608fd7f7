"""Big-win notifications: which awards the cage and surveillance hear of, and what they hear.

Called by the transaction that creates the awards (a round's settlement), after they are written:
every jackpot hit (topic `award.jackpot_hit`) and every other award of at least
NOTIFY_AWARD_CENTS (`award.big_win`) is enqueued in the outbox (`jackpot.notifications.outbox`), one
message per award (key `award:<id>`), so the notification commits or rolls back with the award
itself. The relay posts it as a signed webhook (`jackpot.notifications.webhooks`).

Invariants:
- nothing is enqueued for an award under the threshold, and a round without such an award runs
  no statement here;
- the payload is the award as created: its id and number, kind, amount, status, pool and
  currency, table, seat, round (the terminal's id and ours) and when it was won (UTC).
  The worker delivers it only as the award's grant event says it (`jackpot.audit.outbox_journal`
  builds the same keys from that event): a change here is a change there.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings

from jackpot.models import Award, AwardKind
from jackpot.notifications import outbox


def _utc(award: Award) -> str:
    return award.created_at.isoformat().replace("+00:00", "Z")


def big_wins_enqueue(
    *, awards: Iterable[Award], table_id: int, round_id: str, currency: str
) -> list[int]:
    """Enqueue a notification for each award of `awards` that is a jackpot or at least
    NOTIFY_AWARD_CENTS. Returns the messages' ids. Call in the awards' own transaction."""
    threshold = settings.NOTIFY_AWARD_CENTS
    enqueued = []
    for award in awards:
        jackpot = award.kind == AwardKind.ROYAL_FLUSH
        if not jackpot and award.amount_cents < threshold:
            continue
        payload = {
            "award": award.pk,
            "sequence": award.number,
            "kind": award.kind,
            "jackpot": jackpot,
            "amount_cents": award.amount_cents,
            "currency": currency,
            "status": award.status,
            "pool": award.pool_id,
            "table": table_id,
            "seat": award.seat,
            "round": round_id,
            "round_pk": award.round_id,
            "won_at": _utc(award),
        }
        topic = outbox.JACKPOT_HIT if jackpot else outbox.BIG_WIN
        message_id = outbox.enqueue(topic, payload, key=f"award:{award.pk}")
        if message_id is not None:
            enqueued.append(message_id)
    return enqueued
