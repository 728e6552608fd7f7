"""The only writer of transfers and audit events.

`record()` appends one audit event to its chain and the event's transfers, inside the caller's
transaction, so money and its audit record commit or roll back together. Invariants:
- every transfer has a positive amount and moves it between the two accounts of its pool that
  `jackpot.accounting.ROUTES` gives its code, so every pool's balances sum to zero (zero-amount
  postings are simply not written);
- an event's hash covers its fields and the transfers it wrote, chained to the previous event of
  its chain: editing either afterwards is detected by `verify_journal`. The hash is an
  HMAC-SHA256 under `settings.JOURNAL_HMAC_KEY` (`journal_key`), a key that is not in the
  database, so rows rewritten in the database cannot be given matching hashes without it;
- the chain head is locked by `jackpot.locks.chain_slot`, in the order `jackpot.locks` states.

The hot path (a round's open): `record_led` writes the event, its transfers, the chain head and
the round's answer in the statement whose first part is the pool row's UPDATE (a `Lead`), the
event and its hash computed before it from the counters the UPDATE is expected to return, and
written only if it returns exactly those; otherwise the UPDATE alone is done and the caller
records the event as `record` does. So in the usual case the pool row is held for one round
trip and the commit, with no Python between the two.

The events that change what a pool pays or who may do what (`SECURITY_KINDS`: pools, tables,
tokens, staff), and the significant events (`jackpot.significant`: the reconciliation's alerts, a
silent terminal, a suspension...), whether made in the admin or by a service, are also written to
the security log (`jackpot.security`) once their transaction commits: what the operator ships is
what happened. A significant event is also sent by webhook and counted (`significant.follow`).
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

from jackpot import rows, significant
from jackpot.accounting import Posting
from jackpot.canonical import chain_hash
from jackpot.locks import ChainSlot, chain_slot
from jackpot.models import Account, AccountKind, AuditEvent, Transfer

security_log = logging.getLogger("jackpot.security")

#: Parameter and access changes: also written to the security log after their commit.
SECURITY_KINDS = frozenset(
    {
        "pool.created",
        "pool.changed",
        "pool.change_proposed",
        "pool.change_rejected",
        "pool.change_withdrawn",
        # A pool's life (jackpot.lifecycle): a suspension, a resumption, a stop and its heir.
        "pool.suspended",
        "pool.resumed",
        "pool.stopped",
        "pool.liability_received",
        "table.created",
        "table.changed",
        "terminal.issued",
        "terminal.revoked",
        "staff_token.issued",
        "staff.changed",
        # Two-person changes of tables and staff (jackpot.changes), an admin's password reset and
        # the operator's first admins (jackpot.staff).
        "table.change_proposed",
        "table.change_rejected",
        "table.change_withdrawn",
        "staff.change_proposed",
        "staff.change_rejected",
        "staff.change_withdrawn",
        "staff.password_reset",
        "staff.bootstrapped",
        # A person's own credentials (jackpot.second_factor): never a key, a code or a password.
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
#: The verification's checkpoints (`jackpot.checkpoints`): one `journal.checkpoint` event each.
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
    (`jackpot.verification`); `occurred_at` as a datetime, or already as the UTC ISO 8601 text
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
    both write the same rows (tests/jackpot/test_write_paths.py)."""
    return connection.vendor == "postgresql"


def _insert(
    event: AuditEvent,
    transfers: Sequence[Transfer],
    also: rows.RowUpdate | None,
    lead: Lead | None = None,
) -> tuple[bool, tuple[Any, ...] | None]:
    """Write the event, its transfers, the new chain head and `also` (plain SQL: jackpot.rows),
    after `lead` and only if it returns what it expects (`Lead`). Returns whether the event was
    written and the lead's row (None: no lead, or it returned none).

    On PostgreSQL this is one statement (data-modifying CTEs): it runs while the pool row is
    locked (or takes it, with a lead), so every round trip saved shortens the wait of every
    other table. Elsewhere it is up to five.
    """
    event_row = {f.attname: getattr(event, f.attname) for f in AuditEvent._meta.concrete_fields}
    if in_one_statement():
        event_id, led = _insert_postgresql(event_row, event, transfers, also, lead)
        if event_id is None:
            return False, led
        event.pk = event_id
        for transfer in transfers:
            transfer.event_id = event.pk
        return True, led
    led = None
    if lead is not None:
        with connection.cursor() as cursor:
            cursor.execute(lead.sql, lead.params)
            found = cursor.fetchone()
        led = None if found is None else tuple(found)
        if led is None or led != lead.expect:
            return False, led
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
    if also is not None:
        rows.update(also.model, also.pk, also.changes)
    return True, led


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
class Lead:
    """A data-modifying statement that `record_led` runs as the first part of the event's own
    statement (`sql`, with its `params`, `RETURNING` the columns `returning`), and on whose
    result the event is written: only when it returns a row whose columns equal `expect`.

    So an event whose content depends on what a locked row's UPDATE returns (the meter after a
    round's stakes) is written, hash and all, by the very statement that takes the lock, when
    the caller knew the returned values beforehand: the lock is then held for that one round
    trip and the commit. When the row returns other values, the lead alone is written and the
    caller records the event from the values returned (`record`), the lock already held.
    """

    sql: str
    params: list[Any]
    returning: tuple[str, ...]
    expect: tuple[Any, ...]


def _insert_postgresql(
    event_row: dict[str, Any],
    event: AuditEvent,
    transfers: Sequence[Transfer],
    also: rows.RowUpdate | None,
    lead: Lead | None = None,
) -> tuple[int | None, tuple[Any, ...] | None]:
    """The event's one statement; with a `lead`, the lead runs first and gates the rest
    (`Lead`). Returns the event's id (None: not written) and the lead's row (None: none)."""
    if lead is None:
        event_sql, values = rows.insert_sql(AuditEvent, [event_row])
        sql = f"WITH event AS ({event_sql} RETURNING id)"
        gate = ""
    else:
        # INSERT ... SELECT from the lead's row where it holds the expected values: no such
        # row, no event; each part below joins the event or waits for it (`gate`).
        matches = " AND ".join(f"lead.{column} = %s" for column in lead.returning)
        event_sql, event_values = rows.insert_select_sql(
            AuditEvent, event_row, source=f"lead WHERE {matches}"
        )
        sql = f"WITH lead AS ({lead.sql}), event AS ({event_sql} RETURNING id)"
        values = [*lead.params, *event_values, *lead.expect]
        gate = " AND EXISTS (SELECT 1 FROM event)"
    values += [event.hash, event.chain]
    sql += f", head AS (UPDATE jackpot_auditchain SET head_hash = %s WHERE key = %s{gate})"
    if transfers:
        one = "(" + ", ".join(f"%s::{kind}" for _name, kind in _TRANSFER_VALUES) + ")"
        names = [name for name, _kind in _TRANSFER_VALUES]
        created = Transfer._meta.get_field("created_at")
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
                created.get_db_prep_save(t.created_at, connection),
            ]
        columns = ", ".join(names[1:])
        # ORDER BY n: the transfers get their ids in the order written, which the hash covers.
        sql += (
            f", moved AS (INSERT INTO jackpot_transfer (event_id, {columns})"
            f" SELECT event.id, {', '.join('v.' + name for name in names[1:])}"
            f" FROM event, (VALUES {', '.join([one] * len(transfers))}) AS v({', '.join(names)})"
            " ORDER BY v.n)"
        )
    if also is not None:
        also_sql, also_values = also.sql()
        sql += f", also AS ({also_sql}{gate})"
        values += also_values
    params: list[Any] | None = values
    if lead is None:
        sql += " SELECT id FROM event"
    else:
        sql += f" SELECT (SELECT id FROM event), {', '.join(lead.returning)} FROM lead"
        # The statement's text, its values in it (as psycopg's client-side binding sends it
        # anyway), made before it is sent: the lead takes the row lock, and the JSON and the
        # quoting of a hundred values then cost no time of the lock's.
        ops: Any = connection.ops  # PostgreSQL's: the stubs know only the base class
        sql, params = ops.compose_sql(sql, values), None
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None, None
    return (None if row[0] is None else int(row[0])), (tuple(row[1:]) if lead else None)


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
    also: rows.RowUpdate | None = None,
) -> AuditEvent:
    """Append one audit event and its transfers. Call inside the caller's atomic block.

    `chain` is a chain key, or the slot taken earlier in the same transaction by
    `jackpot.locks.chain_slot` (a round takes its slot before the pool row: see jackpot.locks).
    `also` is one more row change written with them (in the same statement on PostgreSQL).
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


def record_led(
    lead: Lead,
    *,
    chain: ChainSlot,
    kind: str,
    actor: str,
    payload: dict[str, Any],
    pool_id: int | None = None,
    postings: Sequence[Posting] = (),
    occurred_at: datetime | None = None,
    also: rows.RowUpdate | None = None,
) -> tuple[AuditEvent | None, tuple[Any, ...] | None]:
    """`record`, written by the statement that runs `lead` first, if the lead returns the row it
    expects (`Lead`). Returns the event (None: not written, nothing but the lead was) and the
    lead's row (None: it returned none). The event, its hash included, is prepared before the
    statement, whose `chain` slot is taken already: nothing is left to do between the lead's
    lock and the commit."""
    event, transfers = _prepared(
        chain=chain,
        kind=kind,
        actor=actor,
        payload=payload,
        pool_id=pool_id,
        postings=postings,
        occurred_at=occurred_at,
    )
    written, led = _insert(event, transfers, also, lead)
    if not written:
        return None, led
    _written(event)
    return event, led
