"""Verify the audit chains and every pool's balances: from the first event (full), or from the
newest checkpoint that verifies (routine), in one walk (`verify_journal`).

Invariants:
- every problem is reported, the first broken chain named: gaps, hashes (HMAC under the
  journal's key, not in the database), transfers outside their chain's pools or behind an
  event, anchors, award and pool rows against the chains, each pool's balances;
- a passing run's state is the next checkpoint; a routine run costs what was added since it;
- every read is in one REPEATABLE READ snapshot, so live traffic raises no false alarm;
- this module knows the journal alone: the tables add the rounds through a `Crosscheck`
  (`tables.audit.verification`).

The checks in order, what a routine run cannot see, and how the walk is fast:
docs/accounting.md, "The modules, in detail".
"""

from __future__ import annotations

import contextlib
import gc
import queue
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, cast

import psycopg
import psycopg.sql

from core.replicas import reading
from jackpot.audit import anchors as anchoring
from jackpot.audit import checkpoints, notices
from jackpot.audit.checkpoints import State
from jackpot.audit.projections import Event, ProgressiveProjection
from jackpot.bodies.journal import BrokenAt, JournalReport
from jackpot.models import (
    UNITS_PER_CENT,
    Account,
    AccountKind,
    AuditChain,
    AwardStatus,
    Pool,
    Transfer,
    TransferCode,
)
from jackpot.models.audit import GENESIS_HASH
from jackpot.money import rows
from jackpot.money.canonical import chain_hash_matches, loads
from jackpot.money.ledger import content, journal_key, pool_chain

BATCH = 2000
KINDS = tuple(kind.value for kind in AccountKind)
#: The correction code: the walk also keeps its net by corrected account (`correction:meter`).
CORRECTION = TransferCode.CORRECTION.value

#: A transfer as the walk reads it: id, pool, code, debit, credit, amount, round, award.
TransferRow = tuple[int, int, str, int, int, int, int | None, int | None]
#: Progress: (events checked, transfers checked) so far.
Progress = Callable[[int, int], None]


class Crosscheck(Protocol):
    """What the layer above adds to a walk (`tables.audit.verification.RoundsCheck`)."""

    def chain_pools(self) -> Mapping[str, frozenset[int]]:
        """The chains beside the pools' own that may move money, and whose."""

    def observe(self, event: Event, transfers: Sequence[TransferRow]) -> None:
        """One event whose link verified, with its transfers."""

    def pool_checks(
        self, pool: Pool, balances: Mapping[str, int]
    ) -> Iterable[tuple[str, int, int]]:
        """(label, actual, wanted) rows for one pool; a row whose values differ is a problem."""

    def row_problems(self, broken: bool) -> list[str]:
        """Rows of the layer above that differ from the events walked (`broken`: a chain was
        not read to its end)."""

    def carried(self) -> dict[str, Any]:
        """What a checkpoint carries forward for it."""


@dataclass
class VerificationReport:
    ok: bool = True
    full: bool = True
    events: int = 0
    transfers: int = 0
    chains: int = 0
    broken_chain: str | None = None
    broken_sequence: int | None = None
    problems: list[str] = field(default_factory=list)
    balances: dict[int, dict[str, int]] = field(default_factory=dict)
    started_from: int | None = None  # the checkpoint's id; None: the first event
    state: State | None = None  # what the run found; a checkpoint's when the run is ok
    new_events: int = 0  # events walked, apart from the checkpoints' own
    checkpoint: int | None = None  # the checkpoint stored from it (tables.audit.verification)

    def fail(self, problem: str, *, chain: str | None = None, sequence: int | None = None) -> None:
        if self.ok and chain is not None:
            self.broken_chain, self.broken_sequence = chain, sequence
        self.ok = False
        self.problems.append(problem)

    def as_body(self) -> JournalReport:
        """The report as `verify_journal --json` shows it: the first 20 problems."""
        return JournalReport.model_construct(
            ok=self.ok,
            events=self.events,
            transfers=self.transfers,
            chains=self.chains,
            first_broken=None
            if self.broken_chain is None
            else BrokenAt.model_construct(chain=self.broken_chain, sequence=self.broken_sequence),
            problems=self.problems[:20],
            balances={
                str(pool): {AccountKind(kind): cents for kind, cents in kinds.items()}
                for pool, kinds in self.balances.items()
            },
        )


#: A batch: the chain's next events, each with its transfers in the order written as one JSON
#: array, in one statement. The time and the array are read as text: parsing them here
#: (`_iso`, orjson) costs a fraction of the driver's loaders, once per event.
_BATCH_SQL = {
    "postgresql": (
        "to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US')",
        "(SELECT json_agg(json_build_array(t.id, t.pool_id, t.code, t.debit_id, t.credit_id,"
        " t.amount_cents, t.round_id, t.award_id) ORDER BY t.id)::text"
        " FROM jackpot_transfer t WHERE t.event_id = e.id)",
    ),
    "sqlite": (  # make run's embedded file: times are stored as UTC text already
        "e.occurred_at",
        "(SELECT json_group_array(json_array(t.id, t.pool_id, t.code, t.debit_id, t.credit_id,"
        " t.amount_cents, t.round_id, t.award_id)) FROM (SELECT * FROM jackpot_transfer"
        " WHERE event_id = e.id ORDER BY id) t)",
    ),
}
_BATCH = (
    "SELECT e.sequence, e.kind, e.actor, {occurred_at}, e.payload, e.prev_hash, e.hash,"
    " {transfers}, e.content_format FROM jackpot_auditevent e"
    " WHERE e.chain = %s AND e.sequence > %s ORDER BY e.sequence LIMIT %s"
)


def _json(value: Any) -> Any:
    return loads(value) if isinstance(value, str | bytes) else value


def _iso(value: datetime | str) -> str:
    """A time as `_BATCH` reads it, as the chain hashes it (`datetime.isoformat` in UTC, which
    leaves out a zero fraction): PostgreSQL's `to_char` text, or SQLite's naive UTC time."""
    if isinstance(value, str) and len(value) == 26:  # to_char's YYYY-MM-DDTHH:MI:SS.US
        return (value[:19] if value.endswith(".000000") else value) + "+00:00"
    found = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return (found if found.tzinfo else found.replace(tzinfo=UTC)).astimezone(UTC).isoformat()


def _batches(cursor: Any, vendor: str, chain: str, after: int) -> Iterator[list[tuple[Any, ...]]]:
    """The chain's events after sequence `after`, `BATCH` at a time, with their transfers."""
    occurred_at, transfers = _BATCH_SQL.get(vendor, _BATCH_SQL["postgresql"])
    sql = _BATCH.format(occurred_at=occurred_at, transfers=transfers)
    while True:
        cursor.execute(sql, [chain, after, BATCH])
        rows = cursor.fetchall()
        if not rows:
            return
        yield rows
        after = rows[-1][0]


class _Reader:
    """The chains' batches, each chain from its start, in the order given.

    On PostgreSQL, in a transaction that has written nothing (a verification's own snapshot; not
    in a savepoint, which cannot export its snapshot), a second connection reads one batch ahead
    in the same snapshot (`pg_export_snapshot`), so the database's work on the next batch
    overlaps this process's on the current one. Elsewhere (a caller's transaction that wrote
    rows, which an imported snapshot would not see; SQLite) the batches are read in turn on the
    connection itself. Either way the same rows."""

    AHEAD = 2  # batches read ahead at most

    def __init__(self, starts: list[tuple[str, int]]) -> None:
        self.queue: queue.Queue[tuple[str, str | None, Any]] = queue.Queue(self.AHEAD)
        self.stop = threading.Event()
        self.starts, self.helper, self.thread = starts, self._helper(), None
        if self.helper is not None:
            self.thread = threading.Thread(target=self._read, name="journal-reader", daemon=True)
            self.thread.start()

    @staticmethod
    def _helper() -> Any:
        connection = reading()
        if connection.vendor != "postgresql" or any(connection.savepoint_ids):
            return None  # a subtransaction cannot export its snapshot
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_current_xact_id_if_assigned() IS NULL,"
                " current_setting('transaction_isolation'), current_setting('statement_timeout')"
            )
            clean, isolation, timeout = cursor.fetchone()
            if not clean or isolation != "repeatable read":
                return None
            cursor.execute("SELECT pg_export_snapshot()")
            (snapshot,) = cursor.fetchone()
        helper = connection.get_new_connection(connection.get_connection_params())
        helper.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        helper.read_only = True
        helper.execute(psycopg.sql.SQL("SET TRANSACTION SNAPSHOT {}").format(snapshot))
        helper.execute("SELECT set_config('statement_timeout', %s, true)", [timeout])
        return helper

    def _read(self) -> None:
        try:
            with self.helper.cursor() as cursor:
                for chain, after in self.starts:
                    for rows in _batches(cursor, "postgresql", chain, after):
                        if self.stop.is_set():
                            return
                        self.queue.put(("rows", chain, rows))
                    self.queue.put(("end", chain, None))
        except BaseException as error:  # handed to the walk, which raises it
            self.queue.put(("error", None, error))

    def batches(self, chain: str, after: int) -> Iterator[list[tuple[Any, ...]]]:
        """The chain's batches; a walk that stops early (a broken chain) leaves the rest."""
        if self.thread is None:
            connection = reading()
            with connection.cursor() as cursor:
                yield from _batches(cursor, connection.vendor, chain, after)
            return
        ended = False
        try:
            while True:
                what, of, rows = self.queue.get()
                if what == "error":
                    raise rows
                if of != chain:
                    raise RuntimeError(f"the reader is on chain {of}, the walk on {chain}")
                if what == "end":
                    ended = True
                    return
                yield rows
        finally:
            while not ended:  # the walk left this chain early: skip what was read of it
                what, of, rows = self.queue.get()
                if what == "error":
                    raise rows
                ended = what == "end"

    def close(self) -> None:
        if self.thread is None:
            return
        self.stop.set()
        while self.thread.is_alive():  # unblock a put, then let it see the stop
            with contextlib.suppress(queue.Empty):
                self.queue.get(timeout=0.05)
        self.helper.close()


class _Walk:
    """One run: the state it starts from, what it has seen so far."""

    def __init__(
        self,
        report: VerificationReport,
        start: State,
        projections: ProgressiveProjection,
        crosscheck: Crosscheck | None,
        progress: Progress | None,
        reader: _Reader,
    ) -> None:
        self.report, self.start, self.projections = report, start, projections
        self.crosscheck, self.progress, self.reader = crosscheck, progress, reader
        self.key = journal_key()
        self.accounts = {
            pk: (pool, kind) for pk, pool, kind in Account.objects.values_list("pk", "pool", "kind")
        }
        self.balances: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(KINDS, 0))
        for pool, kinds in start.balances.items():
            self.balances[pool].update(kinds)
        self.codes: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for pool, codes in start.codes.items():
            self.codes[pool].update(codes)
        self.positions = dict(start.positions)
        # A routine run's transfers above the start's highest id (a full run counts them all).
        self.transfer_ids: set[int] = set()
        self.top_transfer, self.new_events = start.transfer_id, 0

    def chain(self, chain: str, pools: frozenset[int]) -> bool:
        """Walk one chain from its start; `pools` are the only pools its events may move money
        of. Each event whose link verified is shown to the projections. False: it broke."""
        report = self.report
        sequence, prev_hash = self.positions.get(chain, (0, GENESIS_HASH))
        checkpoint_chain = chain == checkpoints.CHAIN
        for batch in self.reader.batches(chain, sequence):
            for seq, kind, actor, occurred_at, payload, prev, digest, moved, form in batch:
                where = f"chain {chain} sequence {seq}"
                if seq != sequence + 1:
                    report.fail(
                        f"{where}: expected sequence {sequence + 1}",
                        chain=chain,
                        sequence=sequence + 1,
                    )
                    return False
                if prev != prev_hash:
                    report.fail(f"{where}: prev_hash does not link", chain=chain, sequence=seq)
                    return False
                payload, occurred_at = _json(payload), _iso(occurred_at)
                transfers = cast(list[TransferRow], [tuple(t) for t in _json(moved) or ()])
                event = Event(chain, seq, kind, actor, occurred_at, payload)
                hashed = content(
                    chain,
                    seq,
                    kind,
                    actor,
                    occurred_at,
                    payload,
                    [[t[2], t[1], t[3], t[4], t[5], t[6], t[7]] for t in transfers],
                    form,
                )
                if not chain_hash_matches(self.key, prev_hash, hashed, digest):
                    report.fail(
                        f"{where}: content does not match its hash", chain=chain, sequence=seq
                    )
                    return False
                if not self._transfers(where, chain, seq, pools, transfers):
                    return False
                self.projections.observe(event)
                if self.crosscheck is not None:
                    self.crosscheck.observe(event, transfers)
                report.events += 1
                report.transfers += len(transfers)
                self.new_events += not checkpoint_chain
                sequence, prev_hash = seq, digest
            self.positions[chain] = (sequence, prev_hash)
            if self.progress is not None:
                self.progress(report.events, report.transfers)
        self.positions[chain] = (sequence, prev_hash)
        return True

    def _transfers(
        self, where: str, chain: str, seq: int, pools: frozenset[int], transfers: list[TransferRow]
    ) -> bool:
        for pk, pool, code, debit, credit, amount, _round, _award in transfers:
            debited, credited = self.accounts.get(debit), self.accounts.get(credit)
            if pool not in pools:
                self.report.fail(f"{where}: a transfer of another pool", chain=chain, sequence=seq)
                return False
            if debited is None or credited is None or debited[0] != pool or credited[0] != pool:
                self.report.fail(
                    f"{where}: transfer {pk} moves an account of another pool",
                    chain=chain,
                    sequence=seq,
                )
                return False
            balances = self.balances[pool]
            balances[debited[1]] -= amount
            balances[credited[1]] += amount
            self.codes[pool][code] += amount
            if code == CORRECTION:  # its net by the account it corrected (the reports')
                for kind, sign in ((debited[1], -1), (credited[1], 1)):
                    if kind != AccountKind.HOUSE:
                        self.codes[pool][f"{CORRECTION}:{kind}"] += sign * amount
            if not self.report.full and pk > self.start.transfer_id:
                self.transfer_ids.add(pk)
            self.top_transfer = max(self.top_transfer, pk)
        return True


def _heads(
    report: VerificationReport, walk: _Walk, chains: Iterable[str], broken: set[str]
) -> None:
    """Each chain's head row names its last event; a routine run also finds each checkpointed
    position's event unchanged (its hash as the checkpoint recorded it)."""
    heads = dict(AuditChain.objects.values_list("key", "sequence"))
    hashes = dict(AuditChain.objects.values_list("key", "head_hash"))
    for chain in chains:
        if chain in broken:
            continue
        sequence, digest = walk.positions.get(chain, (0, GENESIS_HASH))
        if (heads.get(chain), hashes.get(chain)) != (sequence, digest):
            report.fail(
                f"chain {chain}: the head row does not match its last event {sequence}",
                chain=chain,
                sequence=sequence + 1,
            )
    if report.full or not walk.start.positions:
        return
    with reading().cursor() as cursor:
        for chain, (sequence, digest) in sorted(walk.start.positions.items()):
            cursor.execute(
                "SELECT hash FROM jackpot_auditevent WHERE chain = %s AND sequence = %s",
                [chain, sequence],
            )
            row = cursor.fetchone()
            if row is None or row[0] != digest:
                report.fail(
                    f"chain {chain} sequence {sequence}: the checkpoint's hash is no longer there",
                    chain=chain,
                    sequence=sequence,
                )


def _strays(report: VerificationReport, walk: _Walk) -> None:
    """Transfers written behind the journal: none beyond those the walk read."""
    if report.full:
        total = Transfer.objects.count()
        if total != report.transfers:
            report.fail(f"{total - report.transfers} transfers without an audit event walked")
        return
    written = set(
        Transfer.objects.filter(pk__gt=walk.start.transfer_id).values_list("pk", flat=True)
    )
    strays = written - walk.transfer_ids
    if strays:
        report.fail(f"{len(strays)} transfers without an audit event walked: {sorted(strays)[:5]}")


def _verify_pool(pool: Pool, walk: _Walk, crosscheck: Crosscheck | None) -> None:
    report, totals = walk.report, walk.projections.totals
    balances = dict(walk.balances[pool.pk])
    report.balances[pool.pk] = balances
    checks = [
        ("balances sum to zero", sum(balances.values()), 0),
        ("meter account = meter counter", balances["meter"], pool.meter_units // UNITS_PER_CENT),
        (
            "reserve account = reserve counter",
            balances["reserve"],
            pool.reserve_units // UNITS_PER_CENT,
        ),
        (
            "pending account = pending and verified awards",
            balances["awards_pending"],
            totals.of(pool.pk, AwardStatus.PENDING) + totals.of(pool.pk, AwardStatus.VERIFIED),
        ),
        (
            "payable account = approved awards",
            balances["payable"],
            totals.of(pool.pk, AwardStatus.APPROVED),
        ),
        ("paid account = paid awards", balances["paid"], totals.of(pool.pk, AwardStatus.PAID)),
    ]
    if crosscheck is not None:
        checks.extend(crosscheck.pool_checks(pool, balances))
    for label, actual, wanted in checks:
        if actual != wanted:
            report.fail(f"pool {pool.pk}: {label}: {actual} != {wanted}")


def _start(full: bool, report: VerificationReport) -> tuple[State, ProgressiveProjection]:
    if full:
        return State(), ProgressiveProjection()
    loaded = checkpoints.latest()
    for sequence, problem in loaded.refused:
        report.fail(
            f"chain {checkpoints.CHAIN} sequence {sequence}: checkpoint refused: {problem}",
            chain=checkpoints.CHAIN,
            sequence=sequence,
        )
    if loaded.state is None or loaded.checkpoint is None:
        return State(), ProgressiveProjection()
    report.started_from = loaded.checkpoint.pk
    report.events, report.transfers = loaded.state.events, loaded.state.transfers
    return loaded.state, ProgressiveProjection.resume(loaded.state.projections or {})


def verify_journal(
    *,
    full: bool,
    crosscheck: Callable[[dict[str, Any] | None], Crosscheck] | None = None,
    anchors: Sequence[anchoring.Anchor] = (),
    progress: Progress | None = None,
) -> VerificationReport:
    """Verify in one consistent snapshot (the module's docstring): from the first event
    (`full`) or from the newest checkpoint. `crosscheck` is made, inside the snapshot, from what
    the starting checkpoint carried for it (None: from the first event); `anchors`
    (`jackpot.audit.anchors.read_anchors`) are checked against the live chains; `progress` is told
    the counts after each batch. The report's `state` is the next checkpoint's when it is ok."""
    with rows.snapshot(), _no_cycle_collection():
        return _verify(full, crosscheck, anchors, progress)


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The walk makes millions of short-lived objects (payloads, rows), each freed by its
    reference count, while it holds large projections: the cycle collector's passes over those
    were a third of a full run. It is paused for the walk (its objects make no cycles) and
    restored, running as before, whatever happens."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _verify(
    full: bool,
    make_crosscheck: Callable[[dict[str, Any] | None], Crosscheck] | None,
    anchors: Sequence[anchoring.Anchor],
    progress: Progress | None,
) -> VerificationReport:
    report = VerificationReport(full=full)
    start, projections = _start(full, report)
    crosscheck = (
        make_crosscheck(start.rounds if start.positions else None) if make_crosscheck else None
    )
    heads = AuditChain.objects.values_list("key", flat=True)
    chains = sorted(set(anchoring.chain_keys()) | set(heads) | set(start.positions))
    report.chains = len(chains)
    allowed = {pool_chain(pk): frozenset([pk]) for pk in Pool.objects.values_list("pk", flat=True)}
    if crosscheck is not None:
        allowed.update(crosscheck.chain_pools())
    reader = _Reader([(chain, start.positions.get(chain, (0, ""))[0]) for chain in chains])
    try:
        walk = _Walk(report, start, projections, crosscheck, progress, reader)
        broken = {c for c in chains if not walk.chain(c, allowed.get(c, frozenset()))}
    finally:
        reader.close()
    _heads(report, walk, chains, broken)
    if anchors:
        for found in anchoring.check(list(anchors)):
            report.fail(found.message, chain=found.chain, sequence=found.sequence)
    for problem in projections.problems(broken, since=None if full else start.award_id):
        report.fail(problem.message, chain=problem.chain, sequence=problem.sequence)
    if not broken:  # a broken chain was not read to its end: its transfers are not all seen
        _strays(report, walk)
    for pool in Pool.objects.order_by("pk"):
        _verify_pool(pool, walk, crosscheck)
    for message in notices.problems():  # the notices and the register of orphans
        report.fail(message)
    if crosscheck is not None:
        for message in crosscheck.row_problems(bool(broken)):
            report.fail(message)
    report.new_events = walk.new_events
    report.state = State(
        positions=walk.positions,
        transfer_id=walk.top_transfer,
        award_id=max([start.award_id, *projections.awards]),
        balances={pool: dict(kinds) for pool, kinds in sorted(walk.balances.items())},
        codes={pool: dict(codes) for pool, codes in sorted(walk.codes.items())},
        projections=projections.carried(),
        rounds=crosscheck.carried() if crosscheck is not None else None,
        events=report.events,
        transfers=report.transfers,
    )
    return report
