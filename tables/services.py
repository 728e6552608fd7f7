"""Writes to tables and rounds. One transaction each, audit row included.

A table's pool is money configuration: linking a table to a pool, moving it to another or
unlinking it is a two-person change (`jackpot.pools.parameters`, kind `table.move`): one admin
proposes (`table_move_propose`), another approves (`table_move_approve`), applied only while the
table is closed for play and has no open round. `table_update` opens, closes or renames a table (one
admin), or changes its seats only while no round is open at it (409 `table_has_open_rounds`: a
round's result is read against the table's seats, so one opened with seat 7 would be stranded
by a table lowered to 3); `table_create` makes a table without a pool, but for the operator's
demo (`seed_demo`).

A terminal token is a two-person change too (kind `terminal.issue`, compliance 52): one admin
proposes (`terminal_issue_propose`: the table, a name, rotation or replacement), another approves
(`terminal_issue_approve`), and only then is the token made, shown once to the approver (who
installs it at the table), stored as its SHA-256. So the proposer never sees it and no admin alone
holds a spare token for a live table. Revoking one (`terminal_revoke`) stays one admin's act: it
only takes power away. `operator_terminal_issue` is the operator's one-act path (demo floor, tests'
setup), never reached from the API, the admin or the pages.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from core.errors import ApiError, Conflict, NotFound
from core.tokens import issue_token
from jackpot.approvals import changes
from jackpot.approvals.presence import Presence
from jackpot.models import ChangeKind, ParameterChange, Pool, PoolStatus
from jackpot.money import ledger, locks
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
class IssuedTerminal:
    """A terminal and its raw token: shown once, only its SHA-256 is stored."""

    terminal: Terminal
    token: str


def _install_terminal(
    *,
    table: Table,
    name: str,
    revoke_others: bool,
    actor: str,
    kind: str,
    facts: dict[str, object],
) -> IssuedTerminal:
    """Make the token and its event in the caller's transaction: `terminal.issued` (a
    significant event, SE13) with the applied change's facts (both people), or the operator's
    `terminal.bootstrapped` (as `staff.bootstrapped` is the operator's first admins).

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
        kind=kind,
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
            **facts,
        },
    )
    return IssuedTerminal(terminal, token.raw)


@transaction.atomic
def operator_terminal_issue(
    *, table: Table, name: str, revoke_others: bool, actor: str
) -> IssuedTerminal:
    """The operator's path, for the demo floor (`seed_demo`), the benchmarks and the tests'
    setup, like `bootstrap_admin`: a token issued by one act. Never reached from the API, the
    admin or the pages (`tests/security/test_terminal_issue.py` holds them to it): there a token
    is a two-person change (`terminal_issue_propose`, `terminal_issue_approve`). Audited as
    `terminal.bootstrapped` (the security log; the journal's coverage reads it as an issue)."""
    return _install_terminal(
        table=table,
        name=name,
        revoke_others=revoke_others,
        actor=actor,
        kind="terminal.bootstrapped",
        facts={},
    )


def terminal_issue_propose(
    *, table_id: int, name: str, revoke_others: bool, reason: str, user: User
) -> ParameterChange:
    """Propose a new terminal token for `table_id`: beside the current ones (the rotation) or in
    their place (`revoke_others`, a lost terminal). Nothing is issued, and no token exists, until
    another admin approves (`terminal_issue_approve`); the proposer never sees it."""
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        raise NotFound("table_not_found", f"no table {table_id}", param="table")
    return changes.propose(
        kind=ChangeKind.TERMINAL_ISSUE,
        changes={"table": table.pk, "name": name, "revoke_others": revoke_others},
        before={},
        reason=reason,
        user=user,
    )


@dataclass(frozen=True, slots=True)
class ApprovedIssue:
    """An applied `terminal.issue`: the change, and the token for its approver's eyes only."""

    change: ParameterChange
    issued: IssuedTerminal


@locks.retried
def terminal_issue_approve(
    *, change_id: int, user: User, note: str = "", presence: Presence | None = None
) -> ApprovedIssue:
    """A second admin approves a proposed terminal token: it is made now and shown to this
    approver only, the person who installs it at the table (403 `four_eyes` for its proposer).
    Its `terminal.issued` event names both people and the change.

    Locks: the table's row (exclusive), the change's row, the table's live terminals when they
    are revoked, the `admin` chain; the table is read from the change before any lock."""
    with transaction.atomic():
        seen = ParameterChange.objects.filter(pk=change_id, kind=ChangeKind.TERMINAL_ISSUE).first()
        table = _locked_table(int(seen.changes["table"])) if seen is not None else None
        change = changes.proposed(change_id, kinds=(ChangeKind.TERMINAL_ISSUE,))
        assert table is not None  # `proposed` found the change: so did the read before it
        changes.four_eyes(change, user, presence=presence)
        now = timezone.now()
        issued = _install_terminal(
            table=table,
            name=str(change.changes["name"]),
            revoke_others=bool(change.changes["revoke_others"]),
            actor=f"user:{user.get_username()}",
            kind="terminal.issued",
            facts=changes.applied(change, user, note, now),
        )
        return ApprovedIssue(change, issued)


#: What one admin changes of a table; its pool is a two-person change (`table_move_propose`).
TABLE_FIELDS = ("name", "enabled", "seats")
#: What of a table a round depends on: changed only with no round open at the table (opening and
#: closing it for play, or a new name, leave an open round as it was).
ROUND_FIELDS = ("seats",)


def _locked_table(table_id: int) -> Table:
    table = locks.table_row(Table, table_pk=table_id, exclusive=True)
    if table is None:
        raise NotFound("table_not_found", f"no table {table_id}", param="table")
    return table


@transaction.atomic
def table_update(*, table_id: int, changes: dict[str, object], actor: str) -> Table:
    """Change a table (open or close it for play, rename it...), with its audit event (before and
    after); its seats only with no round open (409 `table_has_open_rounds`), checked under the
    table's exclusive lock, which every round's open takes shared. A table's game cannot change;
    its pool changes by `table_move_approve`."""
    table = _locked_table(table_id)
    unknown = set(changes) - set(TABLE_FIELDS)
    if unknown:
        raise ValueError(f"these fields cannot be changed here: {', '.join(sorted(unknown))}")
    before = {field: getattr(table, field) for field in changes}
    changed = {field: value for field, value in changes.items() if before[field] != value}
    if not changed:
        return table
    touched = sorted(set(changed) & set(ROUND_FIELDS))
    if touched:
        _refuse_open_rounds(table, f"changing its {', '.join(touched)}", param=touched[0])
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

    Locks: the table's row exclusively first (`jackpot.money.locks`: every open in flight has
    written its round before the check, and none opens on the old pool after it), the change's row,
    the `admin` chain. The table is read from the change before any lock, then checked again."""
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
    """409 `pool_stopped`: no table is linked to a pool stopped for good
    (jackpot.pools.lifecycle)."""
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
    _refuse_open_rounds(table, "moving it", param="pool")


def _refuse_open_rounds(table: Table, doing: str, *, param: str) -> None:
    """409 `table_has_open_rounds`, naming them, if a round is open at `table` (locked)."""
    open_rounds = Round.objects.filter(table=table, state=RoundState.OPEN)
    if open_rounds.exists():
        ids = ", ".join(open_rounds.order_by("pk").values_list("round_id", flat=True)[:10])
        raise Conflict(
            "table_has_open_rounds",
            f"table {table.pk} has open rounds ({ids}): settle or void them before {doing}",
            param=param,
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
