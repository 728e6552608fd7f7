"""Plain-SQL row access for the hot path (round open and settle), without the ORM's compiler;
and the one way to read a consistent snapshot (`snapshot`).

The ORM compiles every statement anew, which costs more CPU than the statement itself on the
round API's hot path (measured in bench/ingest.py). These helpers write and read whole model
rows with one fixed SQL string each, and still pass every value through its field's own
database conversion, so what they store is exactly what `Model.save()` would store.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model

from core.replicas import reading

M = TypeVar("M", bound=Model)


def database() -> BaseDatabaseWrapper:
    """This thread's connection to the default database itself. `django.db.connection` is a
    proxy that looks it up again on every attribute (about 1.6 µs), and a field's conversion
    reads it more than once per value: a round converts about a hundred values here."""
    return connections[DEFAULT_DB_ALIAS]


@contextmanager
def snapshot(*, statement_timeout_ms: int | None = None) -> Iterator[None]:
    """A transaction that reads one snapshot of the database (REPEATABLE READ, read only, on
    PostgreSQL; on the standby inside `replica_reads()`), so figures read by several
    statements agree with each other whatever commits meanwhile; inside a caller's
    transaction, the caller's snapshot rules. With
    `statement_timeout_ms`, its statements' own limit (a long read outgrows the requests')."""
    db = reading()  # the standby's inside core.replicas.replica_reads()
    postgresql = db.vendor == "postgresql"
    fresh = postgresql and not db.in_atomic_block
    # No savepoint inside a caller's transaction: nothing to roll back in a read, and a
    # subtransaction cannot export its snapshot (jackpot.audit.verification reads with two
    # connections).
    with transaction.atomic(using=db.alias, savepoint=False):
        with db.cursor() as cursor:
            if fresh:  # the transaction's first statement
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            if postgresql and statement_timeout_ms is not None:
                cursor.execute("SET LOCAL statement_timeout = %s", [statement_timeout_ms])
        yield


#: A statement that writes WAL, so that the COMMIT of its transaction waits for the synchronous
#: standby (`jackpot.models.CommitProbe`): one row per backend, so concurrent probes never wait
#: on each other. PostgreSQL only.
COMMIT_PROBE = (
    "INSERT INTO jackpot_commitprobe (backend, beats) VALUES (pg_backend_pid(), 1)"
    " ON CONFLICT (backend) DO UPDATE SET beats = jackpot_commitprobe.beats + 1"
)


@cache
def _insert_head(model: type[Model]) -> tuple[tuple[Any, ...], str, str]:
    """The fields an INSERT writes, its `INSERT INTO t (columns) VALUES` and one row's `(%s…)`."""
    fields = tuple(field for field in model._meta.concrete_fields if not field.primary_key)
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    one = f"({', '.join(['%s'] * len(fields))})"
    return fields, f"INSERT INTO {model._meta.db_table} ({columns}) VALUES", one


def insert_sql(model: type[Model], rows: Sequence[Mapping[str, Any]]) -> tuple[str, list[Any]]:
    """The INSERT statement for `rows` (attname -> value; absent fields take their defaults)."""
    fields, head, one = _insert_head(model)
    db = database()
    values: list[Any] = []
    for row in rows:
        for field in fields:
            value = row[field.attname] if field.attname in row else field.get_default()
            values.append(field.get_db_prep_save(value, db))
    return f"{head} {', '.join([one] * len(rows))}", values


def insert(
    model: type[Model],
    rows: Sequence[Mapping[str, Any]],
    *,
    returning_id: bool,
    skip_conflicts: bool = False,
) -> list[int]:
    """INSERT `rows` (attname -> value; absent fields take their defaults) in one statement.

    With `skip_conflicts`, a row that a unique constraint or index refuses is not written and
    raises nothing (`ON CONFLICT DO NOTHING`; a conflict with a row not yet committed waits for
    its transaction): only the rows written return an id.
    """
    if not rows:
        return []
    sql, values = insert_sql(model, rows)
    if skip_conflicts:
        sql += " ON CONFLICT DO NOTHING"
    with connection.cursor() as cursor:
        if not returning_id:
            cursor.execute(sql, values)
            return []
        cursor.execute(f"{sql} RETURNING id", values)
        return [int(row[0]) for row in cursor.fetchall()]


def insert_from(
    model: type[Model], rows: Sequence[Mapping[str, Any]], source: str
) -> tuple[str, list[Any]]:
    """An INSERT of `rows` (attname -> value, the primary key's included; absent fields take
    their defaults) that writes them once for each row of `source` (a CTE of the same
    statement that has one row, or none): each value cast to its column's type, since a
    SELECT's parameters have none of their own."""
    fields = model._meta.concrete_fields
    db = database()
    columns = ", ".join(db.ops.quote_name(field.column) for field in fields)
    one = ", ".join(f"%s::{field.cast_db_type(db)}" for field in fields)  # type: ignore[attr-defined]
    values = [
        field.get_db_prep_save(
            row[field.attname] if field.attname in row else field.get_default(), db
        )
        for row in rows
        for field in fields
    ]
    selects = " UNION ALL ".join([f"SELECT {one} FROM {source}"] * len(rows))
    return f"INSERT INTO {model._meta.db_table} ({columns}) {selects}", values


def next_ids(model: type[Model], count: int) -> list[int]:
    """`count` primary keys of `model` taken from its sequence now (PostgreSQL), for rows
    written later in the transaction by `insert_from`; one the transaction does not write is
    never used (as a rolled-back INSERT's)."""
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [table, count],
        )
        return [int(row[0]) for row in cursor.fetchall()]


@cache
def _fields(model: type[Model], only: tuple[str, ...] | None) -> tuple[Any, ...]:
    fields = tuple(model._meta.concrete_fields)
    return (
        fields if only is None else tuple(f for f in fields if f.attname in only or f.primary_key)
    )


def select_one(
    model: type[M],
    where: str,
    params: Sequence[Any],
    *,
    for_update: bool,
    key_share: bool = False,
    only: tuple[str, ...] | None = None,
) -> M | None:
    """The row of `model` matching the SQL condition `where`, optionally locked FOR UPDATE or
    FOR KEY SHARE (which only a FOR UPDATE waits for; see jackpot.money.locks).

    `only` names the fields to load (attnames; the primary key always); reading another one
    later costs a query, as with the ORM's `only()`.
    """
    lock = " FOR UPDATE" if for_update else " FOR KEY SHARE" if key_share else ""
    if not connection.features.has_select_for_update:  # SQLite: the database lock serializes
        lock = ""
    sql = f"SELECT {columns(model, None, only)} FROM {model._meta.db_table} WHERE {where}{lock}"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return None if row is None else from_row(model, row, only)


@cache
def _converters(
    model: type[Model], only: tuple[str, ...] | None, vendor: str
) -> tuple[list[str], tuple[tuple[Any, tuple[Any, ...]], ...]]:
    """`from_row`'s attnames and, per field, its column and the converters the ORM's compiler
    applies to it, in its order. They depend on the field and the database's vendor only, so
    they are looked up once: doing it per value cost a third of reading a row."""
    fields = _fields(model, only)
    converted = []
    for field in fields:
        column = field.get_col(model._meta.db_table)
        found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
        converted.append((column, tuple(found)))
    return [field.attname for field in fields], tuple(converted)


def from_row(model: type[M], row: Sequence[Any], only: tuple[str, ...] | None = None) -> M:
    """A model instance from a row of the columns `columns(model, alias, only)` selected."""
    db = database()
    attnames, converted = _converters(model, only, db.vendor)
    values = []
    for (column, converters), value in zip(converted, row, strict=True):
        # The same conversions, in the same order, as the ORM's compiler applies.
        for converter in converters:
            value = converter(value, column, db)
        values.append(value)
    return model.from_db(db.alias, attnames, values)


@cache
def _field_converters(model: type[Model], attname: str, vendor: str) -> tuple[Any, tuple[Any, ...]]:
    field = next(f for f in model._meta.concrete_fields if f.attname == attname)
    column = field.get_col(model._meta.db_table)
    found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
    return column, tuple(found)


def converted(model: type[Model], attname: str, value: Any) -> Any:
    """A value of `model`'s field `attname` read by plain SQL, converted as the ORM would."""
    db = database()
    column, converters = _field_converters(model, attname, db.vendor)
    for converter in converters:
        value = converter(value, column, db)
    return value


@cache
def columns(model: type[Model], alias: str | None, only: tuple[str, ...] | None = None) -> str:
    """The SELECT list of `model`'s fields (all, or `only` these and the key), for `from_row`."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(
        f"{prefix}{connection.ops.quote_name(field.column)}" for field in _fields(model, only)
    )


@dataclass(frozen=True, slots=True)
class RowUpdate:
    """A change to one row's fields (attname -> value), by primary key."""

    model: type[Model]
    pk: int
    changes: Mapping[str, Any]

    def sql(self) -> tuple[str, list[Any]]:
        db = database()
        fields = [f for f in self.model._meta.concrete_fields if f.attname in self.changes]
        assignments = ", ".join(f"{db.ops.quote_name(f.column)} = %s" for f in fields)
        values = [f.get_db_prep_save(self.changes[f.attname], db) for f in fields]
        return f"UPDATE {self.model._meta.db_table} SET {assignments} WHERE id = %s", [
            *values,
            self.pk,
        ]


@dataclass(frozen=True, slots=True)
class RowInsert:
    """A new row (attname -> value; absent fields take their defaults)."""

    model: type[Model]
    values: Mapping[str, Any]

    def sql(self) -> tuple[str, list[Any]]:
        return insert_sql(self.model, [self.values])


#: A row written with an audit event (`jackpot.money.ledger.record`'s `also`).
RowWrite = RowUpdate | RowInsert


def write(row: RowWrite) -> None:
    """Run one `RowUpdate` or `RowInsert` as a statement of its own."""
    sql, values = row.sql()
    with connection.cursor() as cursor:
        cursor.execute(sql, values)


def update(model: type[Model], pk: int, changes: Mapping[str, Any]) -> None:
    """UPDATE one row's fields (attname -> value) by primary key."""
    write(RowUpdate(model, pk, changes))
