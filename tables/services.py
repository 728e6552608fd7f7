"""Writes to tables and rounds. One transaction each, audit row included."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from jackpot import ledger
from jackpot.models import Pool
from jackpot.tokens import issue_token
from tables.models import Game, Table, Terminal


@transaction.atomic
def table_create(*, name: str, game: Game, pool: Pool | None, actor: str, seats: int = 7) -> Table:
    table = Table.objects.create(name=name, game=game, pool=pool, seats=seats)
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind="table.created",
        actor=actor,
        payload={
            "table": table.pk,
            "name": name,
            "game": game,
            "pool": pool and pool.pk,
            "seats": seats,
        },
    )
    return table


@transaction.atomic
def terminal_token_issue(*, table: Table, name: str, revoke_others: bool, actor: str) -> str:
    """Issue a terminal token for a table; returns the raw token (shown once, stored hashed)."""
    now = timezone.now()
    if revoke_others:
        Terminal.objects.filter(table=table, revoked_at__isnull=True).update(revoked_at=now)
    token = issue_token("term")
    Terminal.objects.create(
        table=table, name=name, token_hash=token.token_hash, prefix=token.prefix
    )
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind="terminal.issued",
        actor=actor,
        occurred_at=now,
        payload={
            "table": table.pk,
            "name": name,
            "prefix": token.prefix,
            "revoked_others": revoke_others,
        },
    )
    return token.raw
