"""A session's close, timed on a young journal and on an aged one: its cost is the session's.

    .venv/bin/python bench/session_close.py [--rounds 200] [--aged 10000,30000] [--ballast N]
        [--fresh]

The journal is grown by `bench/aging.py`'s own play (real 7-seat rounds through `round_open` and
`round_settle` on its 10 tables, the clock moved by `time_machine`), in a database of its own
(SESSION_BENCH_DATABASE, default jackpot_bench_session, at DATABASE_URL's server; migrated,
rebuilt with --fresh). A supervisor (her role granted with its `staff.changed` event, as the
service grants one) then opens a session, `--rounds` rounds are played, and the close
(`tables.club.sessions.close_session`: the journal's cut, the snapshot's ranged read, the rows
and the `session.closed` event) is timed; first on the journal as it is (empty after --fresh),
then again after the journal is aged to each size of `--aged` rounds (100,000 rounds are about
200,000 events), and, with `--ballast N`, once more after N copies of those events were added by
SQL under chains of their own (a big journal quickly, for timing only: they do not verify). For
each close it prints and records (bench/results/session-close.json): the journal's events before
the session, the close's wall and CPU seconds, the events in the session's ranges (what the
snapshot should read), and the journal's rows the close's statements read and how (each
statement that reads `jackpot_auditevent`, captured during the close and run again under EXPLAIN
ANALYZE on the same data: the scans' actual rows and the rows their filters removed).
"""

# ruff: noqa: E402 (the project's modules are imported once Django is set up)

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["AGING_DATABASE"] = os.environ.get("SESSION_BENCH_DATABASE", "jackpot_bench_session")

from bench import aging  # sets the database and Django up (its module's first lines)

DATABASE = aging.DATABASE  # (a statement: the imports below come after Django's set-up)

from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext

from bench.results import write_result
from jackpot.models import AuditEvent
from jackpot.money import ledger
from jackpot.staff.accounts import snapshot as staff_snapshot
from jackpot.staff.roles import role_group
from tables.club import snapshot
from tables.club.sessions import close_session, open_session

SUPERVISOR = "bench-session-supervisor"
JOURNAL = "jackpot_auditevent"
# Ballast: copies of the table and pool chains' events under chains of their own (`ballast-<n>-`
# and the chain's name), as many as asked, by SQL: rows no session's range names, in the same
# table and indexes. They are not on any hash chain the service keeps (they do not verify).
_BALLAST = (
    "INSERT INTO jackpot_auditevent"
    " (chain, sequence, kind, actor, occurred_at, payload, prev_hash, hash, content_format)"
    " SELECT left('ballast-' || %s || '-' || chain, 40), sequence, kind, actor, occurred_at,"
    " payload, prev_hash, hash, content_format FROM jackpot_auditevent"
    " WHERE chain LIKE 'table-%%' OR chain LIKE 'pool-%%' ORDER BY id LIMIT %s"
)


def _supervisor() -> User:
    """A supervisor whose role the journal explains (a `staff.changed` event, as
    `jackpot.staff.accounts` writes one for an approved change)."""
    user, created = User.objects.get_or_create(username=SUPERVISOR)
    if created:
        with transaction.atomic():
            before = staff_snapshot(user)
            user.groups.add(role_group("supervisor"))
            ledger.record(
                chain=ledger.ADMIN_CHAIN,
                kind="staff.changed",
                actor="system:bench-session",
                payload={"user": user.username, "before": before, "after": staff_snapshot(user)},
            )
    return user


def _journal_reads(plan: Any) -> tuple[int, list[str]]:
    """The journal's rows an executed plan read (its scans of the events' table) and how."""
    rows, how = 0, []
    stack = [plan]
    while stack:
        node = stack.pop()
        if node.get("Relation Name") == JOURNAL:  # EXPLAIN's rows are per loop
            per_loop = int(node["Actual Rows"]) + int(node.get("Rows Removed by Filter", 0))
            rows += per_loop * int(node.get("Actual Loops", 1))
            how.append(node["Node Type"])
        stack.extend(node.get("Plans", []))
    return rows, sorted(set(how))


def _plans(queries: list[dict[str, str]]) -> tuple[int, list[str]]:
    """Each statement of the close that read the journal, run again under EXPLAIN ANALYZE (the
    same SQL, its parameters in it, on the same data): the events' rows read and the scans."""
    rows, how = 0, set()
    writes = ("INSERT", "UPDATE", "DELETE")
    with transaction.atomic(), connection.cursor() as cursor:
        for query in queries:
            sql = query["sql"].lstrip()
            if JOURNAL not in sql or any(word in sql.upper() for word in writes):
                continue
            try:
                with transaction.atomic():
                    cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
            except DatabaseError as refused:
                print(f"  not explained ({refused}): {sql[:200]}", flush=True)
                continue
            found = cursor.fetchone()
            assert found is not None
            document = found[0] if isinstance(found[0], list) else json.loads(found[0])
            read, scans = _journal_reads(document[0]["Plan"])
            rows += read
            how.update(scans)
        transaction.set_rollback(True)  # reads only, and nothing kept even so
    return rows, sorted(how)


def _session_events(opened: dict[str, int], closed: dict[str, int]) -> int:
    """The events in the session's ranges of the table and pool chains: what the close reads."""
    return sum(high - low for _, low, high in snapshot._ranges(opened, closed))


def one_close(floor: aging.Floor, supervisor: User, rounds: int, played: Any) -> dict[str, Any]:
    """Open a session, play `rounds` rounds, and time its close."""
    before = AuditEvent.objects.count()
    session = open_session(user=supervisor)
    aging.play(floor, aging._rounds() + rounds, played)
    aging.maintain()  # as autovacuum would have; out of the timed call
    with CaptureQueriesContext(connection) as captured:
        wall, cpu = time.perf_counter(), time.process_time()
        closed = close_session(session_id=session.pk, user=supervisor)
        seconds, cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
    journal_rows, scans = _plans(captured.captured_queries)
    return {
        "journal_events_before_session": before,
        "session": closed.number,
        "session_rounds": rounds,
        "session_events_read": _session_events(closed.opened_heads, closed.closed_heads or {}),
        "close_seconds": round(seconds, 4),
        "close_cpu_seconds": round(cpu_seconds, 4),
        "close_statements": len(captured.captured_queries),
        "journal_rows_read": journal_rows,
        "journal_scans": scans,
        "load_1m": round(os.getloadavg()[0], 2),
    }


def add_ballast(events: int) -> int:
    """Copy the table and pool chains' events under ballast chains until `events` are added."""
    added, copy = 0, 0
    with aging._statement_timeout(0), connection.cursor() as cursor:
        while added < events:
            copy += 1
            cursor.execute(_BALLAST, [copy, events - added])
            if cursor.rowcount <= 0:
                break
            added += cursor.rowcount
    return added


def _print(label: str, figure: dict[str, Any]) -> None:
    print(
        f"{label:<7} journal {figure['journal_events_before_session']:>9,} events  "
        f"session {figure['session_rounds']} rounds, {figure['session_events_read']:,} events "
        f"in its ranges  close {figure['close_seconds'] * 1000:8.1f} ms "
        f"(CPU {figure['close_cpu_seconds'] * 1000:.1f} ms)  journal rows read "
        f"{figure['journal_rows_read']:,} by {', '.join(figure['journal_scans'])}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200, help="the session's rounds")
    parser.add_argument(
        "--aged", default="100000", help="rounds of the aged journal, or several: 20000,100000"
    )
    parser.add_argument("--fresh", action="store_true", help="rebuild the database")
    parser.add_argument("--result", default="session-close", help="bench/results/<name>.json")
    parser.add_argument(
        "--ballast", type=int, default=0, help="events copied by SQL after the last size (below)"
    )
    # One club day for the whole journal by default: bench/aging.py's day-end award steps are
    # not this bench's subject (nor its supervisors, who hold their role without the journal).
    parser.add_argument("--per-day", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    aging._database(args.fresh)
    call_command("migrate", verbosity=0)
    floor = aging._floor(args.per_day, args.seed)
    supervisor = _supervisor()
    played = aging.Played(vacuum=aging.autovacuum_off())
    figures: dict[str, Any] = {"start": one_close(floor, supervisor, args.rounds, played)}
    _print("start", figures["start"])
    figures["aged"] = []
    for size in (int(each) for each in args.aged.split(",")):
        print(f"ageing the journal to {size:,} rounds (bench/aging.py's play)", flush=True)
        aging.play(floor, size, played)
        figures["aged"].append(one_close(floor, supervisor, args.rounds, played))
        _print("aged", figures["aged"][-1])
        figures["ageing_play"] = played.as_json()
        path = write_result(  # after each size: a run cut short keeps what it measured
            args.result,
            figures,
            command="bench/session_close.py " + " ".join(sys.argv[1:]),
            database=DATABASE,
            rounds=args.rounds,
            aged=args.aged,
            per_day=args.per_day,
            seed=args.seed,
        )
    if args.ballast:
        print(f"adding {args.ballast:,} ballast events by SQL (chains no session names)")
        figures["ballast_events"] = add_ballast(args.ballast)
        figures["ballast"] = one_close(floor, supervisor, args.rounds, played)
        _print("ballast", figures["ballast"])
        path = write_result(
            args.result,
            figures,
            command="bench/session_close.py " + " ".join(sys.argv[1:]),
            database=DATABASE,
            rounds=args.rounds,
            aged=args.aged,
            ballast=args.ballast,
            per_day=args.per_day,
            seed=args.seed,
        )
    print(f"figures in bench/results/{path.name}")


if __name__ == "__main__":
    main()
