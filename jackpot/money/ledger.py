"""The only writer of transfers and audit events.

`record` appends one event to its chain with its transfers and any rows written with it
(`also`), inside the caller's transaction, in one statement on PostgreSQL. `record_gated` does
the same, then runs a `Gate` (the statement that takes the pool row) and keeps it all only if
the gate returns what was expected (`jackpot.money.movements.Attempt`).

Invariants:
- a transfer has a positive amount and moves it between the two accounts of its pool that
  `jackpot.money.accounting.ROUTES` gives its code: every pool's balances sum to zero;
- an event's hash (HMAC-SHA256 under `settings.JOURNAL_HMAC_KEY`, a key not in the database)
  covers its fields and its transfers, chained to the previous event of its chain
  (`verify_journal` detects an edit); chain heads are locked in `jackpot.money.locks`'s order;
- a gated event is hashed and written before its gate, its foreign keys checked with it, so the
  pool row is held for the gate's statement and the commit alone;
- the security kinds and the significant events (`jackpot.notifications.significant`) go to the
  security log once their transaction commits.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from jackpot.models import Account, AccountKind, AuditEvent, Transfer
from jackpot.money import rows
from jackpot.money.accounting import Posting
from jackpot.money.canonical import chain_hash, chain_hash_matches
from jackpot.money.locks import ChainSlot, chain_slot
from jackpot.notifications import significant

security_log = logging.getLogger("jackpot.security")

#: Parameter and access changes: also written to the security log after their commit.
SECURITY_KINDS = frozenset(
    {
        "pool.created",
        "pool.changed",
        "pool.change_proposed",
        "pool.change_rejected",
        "pool.change_withdrawn",
        # A pool's life (jackpot.pools.lifecycle): a suspension, a resumption, a stop and its heir.
        "pool.suspended",
        "pool.resumed",
        "pool.stopped",
        "pool.liability_received",
        # A documented correction (jackpot.pools.corrections): also significant (SE20).
        "pool.corrected",
        # Notices and orphans (jackpot.pools.notices, jackpot.pools.orphans).
        "notice.made",
        "notice.sent",
        "pool.orphans_recovered",
        "pool.orphans_received",
        "table.created",
        "table.changed",
        "terminal.issued",
        "terminal.bootstrapped",  # the operator's setup path (tables.services)
        "terminal.revoked",
        "staff_token.issued",
        "staff.changed",
        # Two-person changes of tables and staff (jackpot.pools.parameters), an admin's password
        # reset and the operator's first admins (jackpot.staff.accounts).
        "table.change_proposed",
        "table.change_rejected",
        "table.change_withdrawn",
        # A terminal token proposed, rejected or withdrawn (tables.services); `terminal.issued`
        # above is its approval.
        "terminal.change_proposed",
        "terminal.change_rejected",
        "terminal.change_withdrawn",
        "staff.change_proposed",
        "staff.change_rejected",
        "staff.change_withdrawn",
        "staff.password_reset",
        "staff.bootstrapped",
        "staff.activation_code_issued",
        # A person's own credentials (jackpot.staff.second_factor): never a key, a code or a
        # password.
        "staff.second_factor_enrolled",
        "staff.recovery_codes_issued",
        "staff.recovery_code_used",
        "staff.password_changed",
    }
)


def _account_ids() -> dict[tuple[int, str], int]:
    """The account ids read over this database connection, by (pool, kind).

    Accounts are created with their pool and never change, but only within one life of the
    database: a database dropped and made anew, or restored, can give the same pool other
    account ids, and the old ids can be another pool's accounts (the foreign keys would not
    object). Each of those ends every connection to the database, so the ids are kept per
    connection (`connection` is per thread) and read again over a new one: one query per pool
    and connection. A database emptied in place under an open connection (`manage.py flush`,
    tests) is not seen: make a database anew, never under a running service.
    """
    raw = connection.connection
    cached = getattr(connection, "_ledger_account_ids", None)
    if cached is None or cached[0] is not raw:
        cached = (raw, {})
        connection._ledger_account_ids = cached  # type: ignore[attr-defined]
    ids: dict[tuple[int, str], int] = cached[1]
    return ids


def account_id(pool_id: int, kind: AccountKind) -> int:
    """The id of a pool's account in this database (see `_account_ids`)."""
    connection.ensure_connection()  # the cache is the open connection's
    ids = _account_ids()
    key = (pool_id, kind.value)
    found = ids.get(key)
    if found is None:
        for account in Account.objects.filter(pool_id=pool_id):
            ids[(pool_id, account.kind)] = account.pk
        found = ids[key]
    return found


def _transfer(pool_id: int, posting: Posting, now: datetime) -> Transfer:
    debit, credit = posting.accounts()
    return Transfer(
        pool_id=pool_id,
        code=posting.code,
        debit_id=account_id(pool_id, debit),
        credit_id=account_id(pool_id, credit),
        amount_cents=posting.amount_cents,
        round_id=posting.round_pk,
        award_id=posting.award_pk,
        created_at=now,
    )


def pool_chain(pool_id: int) -> str:
    return f"pool-{pool_id}"


def table_chain(table_id: int) -> str:
    return f"table-{table_id}"


ADMIN_CHAIN = "admin"
#: The club's sessions, their snapshots and drop counts (`tables.club`, `Lock.CLUB_CHAIN`).
CLUB_CHAIN = "club"
#: The verification's checkpoints (`jackpot.audit.checkpoints`): one `journal.checkpoint` event
# each.
CHECKPOINT_CHAIN = "checkpoints"


def journal_key() -> bytes:
    """The chain's HMAC key: `settings.JOURNAL_HMAC_KEY`, from the environment, never stored in
    the database (production refuses a missing, short or example key)."""
    return str(settings.JOURNAL_HMAC_KEY).encode()


#: The content format of the events written now (`AuditEvent.content_format`, `content`).
CONTENT_FORMAT = 2


def event_content(event: AuditEvent, transfers: Sequence[Transfer]) -> dict[str, Any]:
    """What an event's hash covers: its own fields and its transfers, in the order written."""
    return content(
        event.chain,
        event.sequence,
        event.kind,
        event.actor,
        event.occurred_at,
        event.payload,
        [
            [t.code, t.pool_id, t.debit_id, t.credit_id, t.amount_cents, t.round_id, t.award_id]
            for t in transfers
        ],
        event.content_format,
    )


def content(
    chain: str,
    sequence: int,
    kind: str,
    actor: str,
    occurred_at: datetime | str,
    payload: Any,
    transfers: list[list[Any]],
    content_format: int,
) -> dict[str, Any]:
    """`event_content` from the columns, for a reader that holds no model instances
    (`jackpot.audit.verification`); `occurred_at` as a datetime, or already as the UTC ISO 8601 text
    the hash covers; `transfers` are `[code, pool, debit, credit, amount, round, award]`.

    Format 2 covers each transfer's pool and names itself (`"format": 2`); format 1, the
    journal's first, covered neither, so its transfers leave the pool out. A format-2 event
    read as format 1 hashes other bytes (no pool, no `format` key): editing the column does
    not make an event's pools uncovered."""
    if content_format == 1:
        transfers = [[t[0], *t[2:]] for t in transfers]
    hashed = {
        "chain": chain,
        "sequence": sequence,
        "kind": kind,
        "actor": actor,
        "occurred_at": occurred_at
        if isinstance(occurred_at, str)
        else occurred_at.astimezone(UTC).isoformat(),
        "payload": payload,
        "transfers": transfers,
    }
    if content_format != 1:
        hashed["format"] = content_format
    return hashed


def in_one_statement() -> bool:
    """Whether `record()` writes in one statement (PostgreSQL) or in up to four (elsewhere);
    both write the same rows (tests/jackpot/money/test_write_paths.py)."""
    return connection.vendor == "postgresql"


def _insert(
    event: AuditEvent,
    transfers: Sequence[Transfer],
    also: Sequence[rows.RowWrite],
    *,
    checked: bool = False,
) -> None:
    """Write the event, its transfers, the new chain head and `also` (plain SQL:
    jackpot.money.rows).

    On PostgreSQL this is one statement (data-modifying CTEs): a round trip is a cost of every
    round, and while a pool row is held (an award's grant) of every other table's wait too.
    Elsewhere it is one statement per row written. `checked`: the foreign keys of every row the
    transaction has written so far are checked now, in the same round trip, rather than at its
    COMMIT (`record_gated`).
    """
    event_row = {f.attname: getattr(event, f.attname) for f in AuditEvent._meta.concrete_fields}
    if in_one_statement():
        event.pk = _insert_postgresql(event_row, event, transfers, also, checked=checked)
        for transfer in transfers:
            transfer.event_id = event.pk
        return
    (event.pk,) = rows.insert(AuditEvent, [event_row], returning_id=True)
    for transfer in transfers:
        transfer.event_id = event.pk
    rows.insert(
        Transfer,
        [
            {f.attname: getattr(t, f.attname) for f in Transfer._meta.concrete_fields}
            for t in transfers
        ],
        returning_id=False,
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE jackpot_auditchain SET head_hash = %s WHERE key = %s", [event.hash, event.chain]
        )
    for row in also:
        rows.write(row)


_TRANSFER_VALUES = (
    ("n", "integer"),
    ("pool_id", "bigint"),
    ("code", "varchar"),
    ("debit_id", "bigint"),
    ("credit_id", "bigint"),
    ("amount_cents", "bigint"),
    ("round_id", "bigint"),
    ("award_id", "bigint"),
    ("created_at", "timestamptz"),
)


@dataclass(frozen=True, slots=True)
class Gate:
    """The statement `record_gated` runs after the event it records (`sql`, with its `params`,
    returning one row), which keeps the event only if it returns a row equal to `expect`.

    So an event whose content depends on what a locked row's UPDATE returns (the meter after a
    round's stakes) is written, hash and all, before that row is taken, when the caller knew the
    returned values beforehand: the lock is then held for the UPDATE alone and the commit. When
    the row returns other values (another transaction moved it first) or none (it refused), the
    event and the UPDATE are rolled back to the savepoint taken before them, which releases the
    row, and the caller takes the row and records the event from what it returns then.
    """

    sql: str
    params: list[Any]
    expect: tuple[Any, ...]
    # The gate writes rows the event's transfers refer to (an award's): the foreign keys of what
    # was written are then checked at the COMMIT, not before the gate (nor with it: a gate that
    # writes nothing would fail the check instead of returning no row).
    deferred: bool = False


def _insert_postgresql(
    event_row: dict[str, Any],
    event: AuditEvent,
    transfers: Sequence[Transfer],
    also: Sequence[rows.RowWrite],
    *,
    checked: bool,
) -> int:
    """The event's one statement; returns the event's id."""
    event_sql, values = rows.insert_sql(AuditEvent, [event_row])
    sql = f"WITH event AS ({event_sql} RETURNING id)"
    values += [event.hash, event.chain]
    sql += ", head AS (UPDATE jackpot_auditchain SET head_hash = %s WHERE key = %s)"
    if transfers:
        one = "(" + ", ".join(f"%s::{kind}" for _name, kind in _TRANSFER_VALUES) + ")"
        names = [name for name, _kind in _TRANSFER_VALUES]
        created, db = Transfer._meta.get_field("created_at"), rows.database()
        for n, t in enumerate(transfers):
            values += [
                n,
                t.pool_id,
                t.code,
                t.debit_id,
                t.credit_id,
                t.amount_cents,
                t.round_id,
                t.award_id,
                created.get_db_prep_save(t.created_at, db),
            ]
        columns = ", ".join(names[1:])
        # ORDER BY n: the transfers get their ids in the order written, which the hash covers.
        sql += (
            f", moved AS (INSERT INTO jackpot_transfer (event_id, {columns})"
            f" SELECT event.id, {', '.join('v.' + name for name in names[1:])}"
            f" FROM event, (VALUES {', '.join([one] * len(transfers))}) AS v({', '.join(names)})"
            " ORDER BY v.n)"
        )
    for n, row in enumerate(also):
        also_sql, also_values = row.sql()
        sql += f", also{n} AS ({also_sql})"
        values += also_values
    sql += " SELECT id FROM event"
    if checked:
        # Django's foreign keys are DEFERRABLE INITIALLY DEFERRED: PostgreSQL checks them at
        # COMMIT, one lookup per row and key (a round's open: its round, seats, transfers), which
        # is while the gate's row is held. Made immediate here, they are checked now, before
        # the gate, and for the rest of the transaction at each statement. The same round
        # trip: a client-side-binding cursor (Django's psycopg default) sends both at once.
        sql += "; SET CONSTRAINTS ALL IMMEDIATE"
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        (event_id,) = cursor.fetchone()
    return int(event_id)


def _prepared(
    *,
    chain: str | ChainSlot,
    kind: str,
    actor: str,
    payload: dict[str, Any],
    pool_id: int | None,
    postings: Sequence[Posting],
    occurred_at: datetime | None,
) -> tuple[AuditEvent, list[Transfer]]:
    """The event and its transfers as `record` writes them, hash computed (not written)."""
    if not connection.in_atomic_block:
        raise RuntimeError("ledger.record must run inside the caller's transaction")
    postings = [p for p in postings if p.amount_cents != 0]
    for posting in postings:
        if posting.amount_cents < 0:
            raise ValueError(f"invalid posting {posting}")
    now = occurred_at or timezone.now()
    transfers: list[Transfer] = []
    if postings:
        if pool_id is None:
            raise ValueError("transfers need a pool")
        transfers = [_transfer(pool_id, posting, now) for posting in postings]
    slot = chain if isinstance(chain, ChainSlot) else chain_slot(chain)
    event = AuditEvent(
        chain=slot.chain,
        sequence=slot.position,
        kind=kind,
        actor=actor,
        occurred_at=now,
        payload=payload,
        prev_hash=slot.prev_hash,
        content_format=CONTENT_FORMAT,
    )
    event.hash = chain_hash(journal_key(), slot.prev_hash, event_content(event, transfers))
    return event, transfers


def _written(event: AuditEvent) -> None:
    """What follows an event's write: the significant events' follow-up and the security log's
    line, both after commit."""
    kind, actor, payload = event.kind, event.actor, event.payload
    if kind in significant.KINDS:
        significant.follow(event)
    if kind in SECURITY_KINDS or kind in significant.KINDS:
        line = json.dumps(payload, sort_keys=True, default=str)
        now = event.occurred_at
        transaction.on_commit(
            lambda: security_log.info(
                "%s by %s at %s (audit %s #%s): %s",
                kind,
                actor,
                now.isoformat(),
                event.chain,
                event.sequence,
                line,
            )
        )


def record(
    *,
    chain: str | ChainSlot,
    kind: str,
    actor: str,
    payload: dict[str, Any],
    pool_id: int | None = None,
    postings: Sequence[Posting] = (),
    occurred_at: datetime | None = None,
    also: Sequence[rows.RowWrite] = (),
) -> AuditEvent:
    """Append one audit event and its transfers. Call inside the caller's atomic block.

    `chain` is a chain key, or the slot taken earlier in the same transaction by
    `jackpot.money.locks.chain_slot` (a round takes its slot before the pool row: see
    jackpot.money.locks).
    `also`: more rows written with them (in the same statement on PostgreSQL), such as the
    round's answer and the Idempotency-Key's record of it.
    """
    event, transfers = _prepared(
        chain=chain,
        kind=kind,
        actor=actor,
        payload=payload,
        pool_id=pool_id,
        postings=postings,
        occurred_at=occurred_at,
    )
    _insert(event, transfers, also)
    _written(event)
    return event


def record_gated(
    gate: Gate,
    *,
    chain: ChainSlot,
    kind: str,
    actor: str,
    payload: dict[str, Any],
    pool_id: int | None = None,
    postings: Sequence[Posting] = (),
    occurred_at: datetime | None = None,
    also: Sequence[rows.RowWrite] = (),
) -> AuditEvent | None:
    """`record`, then `gate`, under a savepoint rolled back unless the gate returns the row it
    expects (`Gate`). Returns the event, or None when nothing stayed written. The event, its
    hash included, is prepared and written before the gate, whose `chain` slot is taken
    already, and the foreign keys of everything written are checked with it (not at the
    COMMIT), unless the gate writes rows the event refers to (`Gate.deferred`): the row the
    gate takes is held for its own statement and the commit."""
    event, transfers = _prepared(
        chain=chain,
        kind=kind,
        actor=actor,
        payload=payload,
        pool_id=pool_id,
        postings=postings,
        occurred_at=occurred_at,
    )
    savepoint = transaction.savepoint()
    if gate.deferred:  # whatever an earlier step of the transaction set
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
    _insert(event, transfers, also, checked=not gate.deferred)
    with connection.cursor() as cursor:
        cursor.execute(gate.sql, gate.params)
        found = cursor.fetchone()
    if found is None or tuple(found) != gate.expect:
        transaction.savepoint_rollback(savepoint)
        return None
    _written(event)
    return event


def authentic(event: AuditEvent) -> bool:
    """Whether `event`'s HMAC verifies under the journal's key. The events read here move no
    money: one that carries transfers does not verify with none, and is refused."""
    content = event_content(event, [])
    return chain_hash_matches(journal_key(), event.prev_hash, content, event.hash)


def authentic_with_transfers(event: AuditEvent) -> bool:
    """Whether `event`'s HMAC verifies under the journal's key with its transfers, in the order
    written: for an event that moved money (an orphans' recovery, `jackpot.selectors`)."""
    content = event_content(event, list(event.transfers.order_by("pk")))
    return chain_hash_matches(journal_key(), event.prev_hash, content, event.hash)
