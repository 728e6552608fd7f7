"""Writes to tables and rounds. One transaction each, audit row included."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from config.errors import ApiError, Conflict, NotFound
from jackpot import ledger, locks
from jackpot.models import Pool
from jackpot.tokens import issue_token
from tables.models import Game, Round, RoundState, Table, Terminal


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


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A terminal and its raw token: shown once, only its SHA-256 is stored."""

    terminal: Terminal
    token: str


@transaction.atomic
def terminal_token_issue(
    *, table: Table, name: str, revoke_others: bool, actor: str
) -> IssuedToken:
    """Issue a terminal token for a table.

    `revoke_others=False` is the rotation: the table's other tokens keep working until each is
    revoked, so a terminal switches to the new one between two rounds and is never cut off
    mid-round. `revoke_others=True` is for a lost or compromised terminal: the others stop now.
    """
    now = timezone.now()
    revoked: list[int] = []
    if revoke_others:
        live = Terminal.objects.select_for_update().filter(table=table, revoked_at__isnull=True)
        revoked = sorted(live.values_list("pk", flat=True))
        Terminal.objects.filter(pk__in=revoked).update(revoked_at=now)
    token = issue_token("term")
    terminal = Terminal.objects.create(
        table=table, name=name, token_hash=token.token_hash, prefix=token.prefix
    )
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind="terminal.issued",
        actor=actor,
        occurred_at=now,
        payload={
            "table": table.pk,
            "terminal": terminal.pk,
            "name": name,
            "prefix": token.prefix,
            "revoked_others": revoke_others,
            "revoked": revoked,
        },
    )
    return IssuedToken(terminal, token.raw)


TABLE_FIELDS = ("name", "enabled", "seats", "pool")


@transaction.atomic
def table_update(*, table_id: int, changes: dict[str, object], actor: str) -> Table:
    """Change a table (open or close it for play, move it to another pool...), with its audit
    event (before and after).

    A table's game cannot change. It moves to another pool, or is unlinked, only while closed
    (409 `table_open`) and with no round open (409 `table_has_open_rounds`): a round settles
    against the pool it opened with. The table's row is locked exclusively first
    (`jackpot.locks`), so every open in flight has written its round before the check, and no
    round opens on the old pool after it.
    """
    table = locks.table_row(Table, table_pk=table_id, exclusive=True)
    if table is None:
        raise NotFound("table_not_found", f"no table {table_id}", param="table")
    unknown = set(changes) - set(TABLE_FIELDS)
    if unknown:
        raise ValueError(f"these fields cannot be changed here: {', '.join(sorted(unknown))}")
    before = {field: getattr(table, field) for field in changes}
    changed = {field: value for field, value in changes.items() if before[field] != value}
    if "pool" in changed:
        _check_move(table, changed)
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


def _check_move(table: Table, changed: dict[str, object]) -> None:
    if changed["pool"] is not None and table.game != Game.UTH:
        raise ApiError(
            "pool_not_for_stud", "only an Ultimate Texas Hold'em table feeds a pool", param="pool"
        )
    if table.enabled or changed.get("enabled"):
        raise Conflict(
            "table_open",
            "close the table (disable it) before linking it to another pool",
            param="pool",
        )
    open_rounds = Round.objects.filter(table=table, state=RoundState.OPEN)
    if open_rounds.exists():
        ids = ", ".join(open_rounds.order_by("pk").values_list("round_id", flat=True)[:10])
        raise Conflict(
            "table_has_open_rounds",
            f"table {table.pk} has open rounds ({ids}): settle or void them before moving it",
            param="pool",
        )


@transaction.atomic
def terminal_revoke(*, table_id: int, terminal_id: int, actor: str) -> Terminal:
    """Revoke one of a table's terminal tokens (from now on a 401); revoking twice is a no-op."""
    mine = Terminal.objects.select_for_update().filter(pk=terminal_id, table_id=table_id)
    terminal = mine.first()
    if terminal is None:
        message = f"table {table_id} has no terminal {terminal_id}"
        raise NotFound("terminal_not_found", message, param="terminal")
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
