"""The ledger's two write paths, PostgreSQL's one statement and the portable one (SQLite's, for
`make run`), write the same rows: the same scenario played through the API once on each path
leaves identical journals, rounds and chain heads, and both verify."""

from __future__ import annotations

from typing import Any

import pytest

from jackpot.awards.workflow import award_approve, award_verify, award_void, award_void_confirm
from jackpot.models import AuditChain, AuditEvent, Award, AwardKind, Transfer
from jackpot.money import ledger
from tables.models import Round
from tests.conftest import assert_journal_ok, make_floor, uth_play, uth_seat
from tests.staff import person, surveilled
from tests.winners import pay_identified

pytestmark = pytest.mark.django_db

IDS = {"table", "pool", "round", "id", "award", "name", "review"}  # and the pool's name
IDS |= {"table_pk", "table_name"}  # what an award records of its table: each floor's own
IDS |= {"follows"}  # the award an envy's void followed
TIMES = {"opened_at", "settled_at", "voided_at", "as_of", "at", "occurred_at", "requested_at"}
TIMES |= {"footage_from", "footage_to"}  # a surveillance review's footage, from when it ran


@pytest.fixture(autouse=True)
def _first_table_ids_straddle_a_power_of_ten():
    """The first floor's two tables get ids 10**k - 1 and 10**k (their chains' keys sort the other
    way round from their ids), the second floor's do not: what the rows are compared by must not
    depend on the ids a process's database happens to hand out."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence('tables_table', 'id')")
        (sequence,) = cursor.fetchone()
        cursor.execute(f"SELECT last_value FROM {sequence}")
        (last,) = cursor.fetchone()
        cursor.execute("SELECT setval(%s, %s)", [sequence, 10 ** len(str(last + 2)) - 2])


def _normal(value: Any) -> Any:
    """`value` with database ids and times replaced, so two floors' rows can be compared."""
    if isinstance(value, dict):
        return {
            key: "<id>"
            if key in IDS
            else "<time>"
            if key in TIMES
            else _normal(item)
            if key != "winner_digest"  # a digest of the identity and the award's id
            else "<digest>"
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_normal(item) for item in value]
    return value


def _play(users) -> tuple[int, list[int]]:
    """A round with fixed awards, one with the jackpot (then verified, approved, paid), one
    voided, one with a jackpot whose void (two supervisors) puts the link back."""
    floor = make_floor(meter_share_bp=1250, reserve_share_bp=625, seed_cents=100_000)
    a, b = floor.uth
    a.post("/rounds", {"round_id": "r1", "seats": [uth_seat(1), uth_seat(2), uth_seat(3)]})
    b.post("/rounds", {"round_id": "r2", "seats": [uth_seat(1), uth_seat(2)]})
    a.post(
        "/rounds/r1/result",
        {
            "board": ["7c", "7d", "7h", "Kd", "2s"],
            "dealer": ["9s", "8d"],
            "seats": [uth_play(1, "Kc Ks"), uth_play(2, "7s Ac"), uth_play(3, "9h 8h", "fold")],
        },
    )
    royal = {
        "board": ["Ah", "Kh", "Qh", "2c", "3d"],
        "dealer": ["9s", "9d"],
        "seats": [uth_play(1, "Jh Th"), uth_play(2, "2s 2d", "fold")],
    }
    b.post("/rounds/r2/result", royal)
    a.post("/rounds", {"round_id": "r3", "seats": [uth_seat(1)]})
    a.post("/rounds/r3/void", {"reason": "misdeal"})
    b.post("/rounds", {"round_id": "r4", "seats": [uth_seat(1), uth_seat(2)]})
    b.post("/rounds/r4/result", royal)
    first, second = Award.objects.filter(
        pool_id=floor.pool_id, kind=AwardKind.ROYAL_FLUSH
    ).order_by("pk")
    award_verify(award_id=first.pk, user=users[0], note="video checked")
    surveilled(first.pk)
    award_approve(award_id=first.pk, user=users[1])
    pay_identified(first.pk, users[0])
    award_void(award_id=second.pk, user=users[0], reason="marked cards")
    award_void_confirm(award_id=second.pk, user=users[1])
    return floor.pool_id, [terminal.table_id for terminal in floor.uth]


def _rows(pool_id: int, tables: list[int]) -> dict[str, Any]:
    chains = [f"pool-{pool_id}", *(f"table-{table}" for table in tables)]
    names = {chain: f"chain{n}" for n, chain in enumerate(chains)}
    # Ordered by these names, not by the keys: "table-10" sorts before "table-9", so two floors
    # whose table ids straddle a power of ten would list their chains in different orders.
    return {
        "events": sorted(
            (names[e.chain], e.sequence, e.kind, e.actor.split(":")[0], _normal(e.payload))
            for e in AuditEvent.objects.filter(chain__in=chains)
        ),
        "transfers": [
            (
                t.code,
                t.debit.kind,
                t.credit.kind,
                t.amount_cents,
                t.round_id is not None,
                t.award_id is not None,
                t.created_at == t.event.occurred_at,
                names[t.event.chain],
                t.event.sequence,
            )
            for t in Transfer.objects.filter(pool_id=pool_id).order_by("pk")
        ],
        "rounds": [
            (r.round_id, r.state, _normal(r.open_response), _normal(r.close_response), r.result)
            for r in Round.objects.filter(table_id__in=tables).order_by("pk")
        ],
        "heads": sorted(
            (
                names[c.key],
                c.sequence,
                c.head_hash == AuditEvent.objects.get(chain=c.key, sequence=c.sequence).hash,
            )
            for c in AuditChain.objects.filter(key__in=chains)
        ),
    }


def test_the_one_statement_and_the_portable_path_write_the_same_rows(
    django_user_model, monkeypatch
):
    users = [person(name, "supervisor") for name in ("ann", "bob")]
    assert ledger.in_one_statement()  # the suite runs on PostgreSQL
    one_statement = _rows(*_play(users))

    monkeypatch.setattr(ledger, "in_one_statement", lambda: False)
    portable = _rows(*_play(users))

    # The void gives back both parts of its reset, and its envy's amount (compliance 53).
    assert len(one_statement["transfers"]) == 30
    assert portable == one_statement
    assert_journal_ok()


def test_stakes_written_with_the_pool_rows_statement_or_after_it_write_the_same_rows(
    django_user_model, monkeypatch
):
    """A round's open writes its event before the statement that takes the pool row when the
    counters it read still hold then (jackpot.money.movements.take_stakes_last), and after it
    when another table moved them in between (the first write rolled back): the same rows
    either way."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    users = [person(name, "supervisor") for name in ("ann", "bob")]
    with CaptureQueriesContext(connection) as gated:
        before_the_row = _rows(*_play(users))
    # Each open: its event, then the pool row (E, P).
    assert _steps(gated.captured_queries).count("EP") == 4

    _guesses_go_wrong(monkeypatch)
    with CaptureQueriesContext(connection) as missed:
        after_it = _rows(*_play(users))
    # Each open: its event and the pool row, rolled back (R); the row, then the event again.
    assert _steps(missed.captured_queries).count("EPRPE") == 4

    assert after_it == before_the_row
    assert_journal_ok()


def _guesses_go_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every guess at the pool's counters wrong from now on, as if another table's stakes always
    committed between the read and the UPDATE."""
    from jackpot.money import meter

    expected = meter.expected_stakes

    def another_table_moved_it(**kwargs: Any) -> tuple[int, ...] | None:
        found = expected(**kwargs)
        return None if found is None else (found[0] + 1, *found[1:])

    monkeypatch.setattr(meter, "expected_stakes", another_table_moved_it)


def _steps(queries: list[dict[str, str]]) -> str:
    """The round.opened events written (E), the pool's stakes UPDATEs (P) and the rollbacks to a
    savepoint (R), in the order run."""
    steps = []
    for query in queries:
        sql = query["sql"]
        if sql.startswith("WITH event AS") and "round.opened" in sql:
            steps.append("E")
        elif sql.startswith("UPDATE jackpot_pool SET meter_units"):
            steps.append("P")
        elif sql.startswith("ROLLBACK TO SAVEPOINT"):
            steps.append("R")
    return "".join(steps)


def test_a_pool_suspended_between_the_read_and_the_update_refuses_the_round_whole(monkeypatch):
    """Given the counters read while the pool was active, when it is suspended before the
    statement that takes its row, then that statement finds no active pool, the event written
    before it is rolled back, and the open is the 409 a suspended pool gives: nothing stays."""
    from django.utils import timezone

    from jackpot.models import Pool
    from jackpot.money import meter
    from tables.models import Round

    floor = make_floor()
    expected = meter.expected_stakes

    def then_suspended(**kwargs: Any) -> tuple[int, ...] | None:
        found = expected(**kwargs)
        Pool.objects.filter(pk=floor.pool_id).update(
            status="suspended", status_reason="fault", status_since=timezone.now()
        )
        return found

    events, transfers = AuditEvent.objects.count(), Transfer.objects.count()
    counters = Pool.objects.values_list("meter_units", "reserve_units").get(pk=floor.pool_id)
    monkeypatch.setattr(meter, "expected_stakes", then_suspended)
    refused = floor.uth[0].post("/rounds", {"round_id": "r1", "seats": [uth_seat(1)]})

    assert refused.status_code == 409, refused.json()
    assert refused.json()["error"]["code"] == "pool_suspended"
    assert not Round.objects.filter(round_id="r1").exists()
    assert (AuditEvent.objects.count(), Transfer.objects.count()) == (events, transfers)
    after = Pool.objects.values_list("meter_units", "reserve_units").get(pk=floor.pool_id)
    assert after == counters


def test_a_gated_record_checks_the_foreign_keys_before_its_gate_not_at_the_commit():
    """Django's foreign keys are checked at COMMIT unless told otherwise, which for a round's
    open is while the pool row is held. `record_gated` checks them with the event's statement,
    before the gate runs: a transfer naming a round that does not exist fails there, and the
    gate's statement is never sent."""
    from django.db import IntegrityError, connection, transaction
    from django.test.utils import CaptureQueriesContext

    from jackpot.models import TransferCode
    from jackpot.money.accounting import Posting
    from jackpot.money.locks import chain_slot

    floor = make_floor()
    missing_round = Round.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    stake = Posting(TransferCode.CONTRIBUTION_METER, 100, round_pk=missing_round + 1000)
    gate = ledger.Gate("SELECT 'the gate'", [], ("the gate",))
    with (
        CaptureQueriesContext(connection) as sent,
        pytest.raises(IntegrityError),
        transaction.atomic(),
    ):
        ledger.record_gated(
            gate,
            chain=chain_slot(ledger.pool_chain(floor.pool_id)),
            kind="round.opened",
            actor="test",
            payload={},
            pool_id=floor.pool_id,
            postings=[stake],
        )
    assert not [q for q in sent.captured_queries if "the gate" in q["sql"]]


@pytest.mark.django_db(transaction=True)
def test_a_guess_at_counters_another_table_moved_leaves_the_pool_row_unlocked():
    """Given the counters read, then another transaction moving them and committing, when the
    round's UPDATE runs at the version read, then it moves nothing and returns no row, and the
    pool row is free at once for the next table (no lock held while the open finds out and rolls
    back); the same UPDATE without the version takes the row and holds it."""
    from django.db import OperationalError, connection, connections, transaction
    from django.utils import timezone

    from jackpot.models import Pool
    from jackpot.money import meter

    floor = make_floor()
    pool = Pool.objects.get(pk=floor.pool_id)
    stake = {"pool_id": pool.pk, "stakes": 1, "stake_cents": pool.stake_cents}
    read = pool.meter_version
    meter.add_stakes(**stake, now=timezone.now())  # another table's, committed

    def next_table_waits(*, at_version: int | None) -> bool:
        with transaction.atomic():
            sql, params = meter.stakes_update(**stake, now=timezone.now(), at_version=at_version)
            with connection.cursor() as cursor:
                cursor.execute(sql, params)
                returned = cursor.fetchone()
            assert (returned is None) == (at_version is not None)
            other = connections.create_connection("default")
            try:
                with other.cursor() as cursor:
                    cursor.execute(
                        "SELECT 1 FROM jackpot_pool WHERE id = %s FOR UPDATE NOWAIT", [pool.pk]
                    )
                return False
            except OperationalError:  # "could not obtain lock on row"
                return True
            finally:
                other.close()

    assert next_table_waits(at_version=read) is False
    assert next_table_waits(at_version=None) is True
    assert Pool.objects.get(pk=pool.pk).meter_version == read + 2  # the other's and the last


@pytest.mark.django_db(transaction=True)
def test_a_pool_whose_guesses_go_wrong_is_taken_first_and_guessed_at_now_and_then(monkeypatch):
    """Given a pool where every guess at its counters is wrong (another table always moved them
    first), when its tables keep opening rounds, then after six wrong guesses an open takes the
    pool row before writing its event (no guess, no rollback), guessing again once in eight
    opens; when the guesses come right again, every open guesses again. The rows are the same
    either way (the test above)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from jackpot.money import movements

    monkeypatch.setattr(movements, "GUESSES", movements.GuessOdds())
    floor = make_floor(1)
    terminal = floor.uth[0]

    def opens(first: int, count: int) -> list[str]:
        steps = []
        for number in range(first, first + count):
            with CaptureQueriesContext(connection) as sent:
                opened = terminal.post(
                    "/rounds", {"round_id": f"r{number}", "seats": [uth_seat(1)]}
                )
            assert opened.status_code == 201, opened.json()
            steps.append(_steps(sent.captured_queries))
            assert (
                terminal.post(f"/rounds/r{number}/void", {"reason": "misdeal"}).status_code == 200
            )
        return steps

    with monkeypatch.context() as while_wrong:
        _guesses_go_wrong(while_wrong)
        wrong = opens(0, 22)
    assert wrong == ["EPRPE"] * 6 + ["PE"] * 7 + ["EPRPE"] + ["PE"] * 7 + ["EPRPE"]
    # Right probes bring the share of wrong guesses (0.66 after eight wrong) under half: the
    # third one does (0.57, 0.50, 0.44).
    right = opens(22, 24)
    assert right == (["PE"] * 7 + ["EP"]) * 3
    assert opens(46, 3) == ["EP"] * 3
    assert_journal_ok()
