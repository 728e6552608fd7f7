"""What an insider with the database's superuser (and, for some tests, the journal's key) does to
rewrite history: go around the append-only triggers, edit rows, and give the chain new hashes
from the edited event on, head row included, so that the chain links again."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from io import StringIO
from typing import Any

from django.core.management import call_command
from django.db import connection

from jackpot.models import AuditEvent, Transfer
from jackpot.money.canonical import canonical_json, chain_hash
from jackpot.money.ledger import event_content, journal_key
from tests.conftest import Floor, make_floor, uth_play, uth_seat

Link = Callable[[str, Any], str]


def superuser_sql(sql: str, params: list[Any] | tuple[Any, ...] = ()) -> None:
    """Run SQL the way only a superuser going around the triggers could."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(sql, params)
        cursor.execute("SET LOCAL session_replication_role = origin")


def unkeyed_link(prev_hash: str, content: Any) -> str:
    """The chain link before it was keyed: SHA-256 anyone can recompute."""
    return hashlib.sha256(prev_hash.encode() + canonical_json(content)).hexdigest()


def keyed_link(prev_hash: str, content: Any) -> str:
    """The chain link as the service computes it, for an insider who also holds the key."""
    return chain_hash(journal_key(), prev_hash, content)


def rehash_chain(chain: str, from_sequence: int, link: Link) -> None:
    """Recompute `hash` and `prev_hash` of every event of `chain` from `from_sequence` on with
    `link`, and the chain's head row: a consistent rewrite from there."""
    events = list(AuditEvent.objects.filter(chain=chain).order_by("sequence"))
    prev_hash = "0" * 64
    for event in events:
        if event.sequence >= from_sequence:
            transfers = list(Transfer.objects.filter(event=event).order_by("pk"))
            event.prev_hash = prev_hash
            event.hash = link(prev_hash, event_content(event, transfers))
            superuser_sql(
                "UPDATE jackpot_auditevent SET prev_hash = %s, hash = %s WHERE id = %s",
                [event.prev_hash, event.hash, event.pk],
            )
        prev_hash = event.hash
    superuser_sql(
        "UPDATE jackpot_auditchain SET head_hash = %s, sequence = %s WHERE key = %s",
        [prev_hash, events[-1].sequence, chain],
    )


def verify() -> tuple[int, list[str]]:
    """verify_journal's exit status and its lines."""
    out = StringIO()
    try:
        call_command("verify_journal", stdout=out)
    except SystemExit as stop:
        return int(stop.code or 0), out.getvalue().splitlines()
    return 0, out.getvalue().splitlines()


def play_rounds(floor: Floor | None = None, prefix: str = "r") -> Floor:
    """A round with a full house (approved at once) and a four of a kind (waits: at or above the
    threshold), then another round, so the table's chain goes on past the awards; on a new
    floor, or again on `floor` (the round ids start with `prefix`)."""
    floor = floor or make_floor(verification_threshold_cents=10_000)
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": f"{prefix}-1", "seats": [uth_seat(1), uth_seat(2)]})
    terminal.post(
        f"/rounds/{prefix}-1/result",
        {
            "board": ["7c", "7d", "7h", "Kd", "2s"],
            "dealer": ["3c", "4c"],
            "seats": [uth_play(1, "7s Ac"), uth_play(2, "Kc Ks")],
        },
    )
    terminal.post("/rounds", {"round_id": f"{prefix}-2", "seats": [uth_seat(1)]})
    return floor
