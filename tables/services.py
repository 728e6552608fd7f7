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


TABLE_FIELDS = ("name", "enabled", "seats", "pool")


@transaction.atomic
def table_update(*, table_id: int, changes: dict[str, object], actor: str) -> Table:
    """Change a table (open or close it for play, rename it...), with before and after.

    A table's game cannot change, and it can be moved to another pool only while closed.
    """
    table = Table.objects.select_for_update().get(pk=table_id)
    unknown = set(changes) - set(TABLE_FIELDS)
    if unknown:
        raise ValueError(f"these fields cannot be changed here: {', '.join(sorted(unknown))}")
    before = {field: getattr(table, field) for field in changes}
    changed = {field: value for field, value in changes.items() if before[field] != value}
    if "pool" in changed and (table.enabled or changed.get("enabled")):
        raise ValueError("close the table (disable it) before linking it to another pool")
    if not changed:
        return table
    for field, value in changed.items():
        setattr(table, field, value)
    table.full_clean()
    table.save(update_fields=list(changed))

    def plain(value: object) -> object:
        return value.pk if isinstance(value, Pool) else value

    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind="table.changed",
        actor=actor,
        payload={
            "table": table.pk,
            "before": {field: plain(before[field]) for field in changed},
            "after": {field: plain(value) for field, value in changed.items()},
        },
    )
    return table


@transaction.atomic
def terminal_revoke(*, terminal_id: int, actor: str) -> Terminal:
    terminal = Terminal.objects.select_for_update().get(pk=terminal_id)
    if terminal.revoked_at is None:
        terminal.revoked_at = timezone.now()
        terminal.save(update_fields=["revoked_at"])
        ledger.record(
            chain=ledger.ADMIN_CHAIN,
            kind="terminal.revoked",
            actor=actor,
            payload={
                "terminal": terminal.pk,
                "table": terminal.table_id,
                "prefix": terminal.prefix,
            },
        )
    return terminal
