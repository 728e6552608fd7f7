"""Writes to tables and rounds. One transaction each, audit row included.

A table's pool is money configuration: linking a table to a pool, moving it to another or
unlinking it is a two-person change (`jackpot.changes`, kind `table.move`): one admin proposes
(`table_move_propose`), another approves (`table_move_approve`), applied only while the table is
closed for play and has no open round. `table_update` opens, closes or renames a table (one
admin); `table_create` makes a table without a pool, but for the operator's demo (`seed_demo`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from core.errors import ApiError, Conflict, NotFound
from jackpot import changes, ledger, locks
from jackpot.models import ChangeKind, ParameterChange, Pool, PoolStatus
from jackpot.second_factor import Presence
from jackpot.tokens import issue_token
from tables.models import Game, Round, RoundState, Table, Terminal


@transaction.atomic
def table_create(*, name: str, game: Game, pool: Pool | None, actor: str, seats: int = 7) -> Table:
    """A new table; with a pool only for the operator (`seed_demo`): the admin site and the API
    create it unlinked, and link it by a two-person `table_move_propose`."""
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
        live = locks.terminal_rows(Terminal.objects.filter(table=table, revoked_at__isnull=True))
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
            # The SHA-256 of the token, as the row holds it: the journal then covers which
            # token is the table's (`tables.audit.records`); the token itself is never recoverable.
            "token_hash": token.token_hash,
            "revoked_others": revoke_others,
            "revoked": revoked,
        },
    )
    return IssuedToken(terminal, token.raw)


#: What one admin changes of a table; its pool is a two-person change (`table_move_propose`).
TABLE_FIELDS = ("name", "enabled", "seats")


def _locked_table(table_id: int) -> Table:
    table = locks.table_row(Table, table_pk=table_id, exclusive=True)
    if table is None:
        raise NotFound("table_not_found", f"no table {table_id}", param="table")
    return table


@transaction.atomic
def table_update(*, table_id: int, changes: dict[str, object], actor: str) -> Table:
    """Change a table (open or close it for play, rename it...), with its audit event (before and
    after). A table's game cannot change; its pool changes by `table_move_approve`."""
    table = _locked_table(table_id)
    unknown = set(changes) - set(TABLE_FIELDS)
    if unknown:
        raise ValueError(f"these fields cannot be changed here: {', '.join(sorted(unknown))}")
    before = {field: getattr(table, field) for field in changes}
    changed = {field: value for field, value in changes.items() if before[field] != value}
    if not changed:
        return table
    for field, value in changed.items():
        setattr(table, field, value)
    table.full_clean()
    table.save(update_fields=list(changed))
    ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind="table.changed",
        actor=actor,
        payload={
            "table": table.pk,
            "before": {field: before[field] for field in changed},
            "after": changed,
        },
    )
    return table


def table_move_propose(
    *, table_id: int, pool: Pool | None, reason: str, user: User
) -> ParameterChange:
    """Propose to link `table_id` to `pool`, move it there, or unlink it (`pool` None): 400
    `pool_not_for_stud` for a Stud table, 400 `no_change` if it already feeds `pool`. Another
    admin approves it (`table_move_approve`)."""
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        raise NotFound("table_not_found", f"no table {table_id}", param="table")
    if pool is not None and table.game != Game.UTH:
        raise ApiError(
            "pool_not_for_stud", "only an Ultimate Texas Hold'em table feeds a pool", param="pool"
        )
    if table.pool_id == (pool and pool.pk):
        raise ApiError("no_change", f"table {table_id} already feeds this pool", param="pool")
    _refuse_a_stopped_pool(pool.pk if pool is not None else None)
    return changes.propose(
        kind=ChangeKind.TABLE_MOVE,
        pool=pool,
        changes={"table": table.pk, "pool": pool and pool.pk},
        before={"pool": table.pool_id},
        reason=reason,
        user=user,
    )


@locks.retried
def table_move_approve(
    *, change_id: int, user: User, note: str = "", presence: Presence | None = None
) -> ParameterChange:
    """A second admin approves a table's move: applied now if the table is closed for play, has
    no open round (409 `table_open`, `table_has_open_rounds`: a round settles against the pool
    it opened with) and still feeds the pool the proposal saw (409 `change_stale`).

    Locks: the table's row exclusively first (`jackpot.locks`: every open in flight has written
    its round before the check, and none opens on the old pool after it), the change's row, the
    `admin` chain. The table is read from the change before any lock, then checked again."""
    with transaction.atomic():
        seen = ParameterChange.objects.filter(pk=change_id, kind=ChangeKind.TABLE_MOVE).first()
        table = _locked_table(int(seen.changes["table"])) if seen is not None else None
        change = changes.proposed(change_id, kinds=(ChangeKind.TABLE_MOVE,))
        assert table is not None  # `proposed` found the change: so did the read before it
        changes.four_eyes(change, user, presence=presence)
        if table.pool_id != change.before["pool"]:
            raise Conflict(
                "change_stale",
                f"table {table.pk} was moved since change {change_id} was proposed: reject it "
                "and propose again",
                param="change",
            )
        _check_move(table)
        _refuse_a_stopped_pool(change.changes["pool"])
        table.pool_id = change.changes["pool"]
        table.full_clean()
        table.save(update_fields=["pool"])
        now = timezone.now()
        ledger.record(
            chain=ledger.ADMIN_CHAIN,
            kind="table.changed",
            actor=f"user:{user.get_username()}",
            occurred_at=now,
            payload={
                "table": table.pk,
                "before": change.before,
                "after": {"pool": table.pool_id},
                **changes.applied(change, user, note, now),
            },
        )
        return change


def _refuse_a_stopped_pool(pool_id: int | None) -> None:
    """409 `pool_stopped`: no table is linked to a pool stopped for good (jackpot.lifecycle)."""
    if pool_id is not None and Pool.objects.filter(pk=pool_id, status=PoolStatus.STOPPED).exists():
        raise Conflict(
            "pool_stopped",
            f"pool {pool_id} was stopped for good: no table is linked to it again",
            param="pool",
        )


def _check_move(table: Table) -> None:
    if table.enabled:
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
    mine = locks.terminal_rows(Terminal.objects.filter(pk=terminal_id, table_id=table_id))
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
