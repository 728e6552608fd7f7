"""simulate_floor: a floor of terminals over real HTTP, checked against the books it leaves.

The command talks HTTP only; the service runs on a real port (`live_service`), and every
assertion about money reads the database the service wrote: rounds, seats, awards, the pool's
meter and the journal's own verification. The strategy, the deals, the pacing and the client's
retries are also tested alone, without a database.
"""

from __future__ import annotations

import doctest
import io
import json
import random
import re
import threading
import time
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.db.models import Count, Sum

from jackpot.models import Award, AwardStatus, Pool
from rules.cards import parse_card
from rules.progressive import ProgressiveAward, progressive_award
from rules.uth import Street, UthDecision
from simulator import floor as floor_module
from simulator import terminal as terminal_module
from simulator.deals import deal_fair, deal_royal, plan_round
from simulator.floor import FloorPlan, eur, load_floor, share_rounds
from simulator.run import Pacer, run_floor
from simulator.strategy import decide
from simulator.terminal import RequestRefused, ServiceGone, TerminalClient, read_pools
from tables.bodies.vocabulary import ROUND_ID_PATTERN
from tables.models import Round, RoundSeat, RoundState
from tests.conftest import assert_journal_ok
from tests.ports import free_port


def _cards(text: str) -> tuple:
    return tuple(parse_card(card) for card in text.split())


# --- against the service -------------------------------------------------------------------------


def _floor_file(tmp_path: Path, tables: int = 3) -> Path:
    buffer = io.StringIO()
    call_command("seed_demo", "--tables", str(tables), "--json", stdout=buffer)
    path = tmp_path / "demo-floor.json"
    path.write_text(buffer.getvalue())
    return path


def _simulate(live_service, floor: Path, *extra: str) -> tuple[dict[str, Any], str]:
    """Run the command; its JSON summary and its progress output (stderr is not a terminal)."""
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "simulate_floor",
        *("--tables", "3", "--rounds", "30", "--base-url", live_service.url),
        *("--floor", str(floor), "--json", "--seed", "7", *extra),
        stdout=out,
        stderr=err,
    )
    return json.loads(out.getvalue()), err.getvalue()


def _failing(live_service, floor: Path, *extra: str) -> tuple[CommandError, dict[str, Any]]:
    out = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command(
            "simulate_floor",
            *("--tables", "3", "--base-url", live_service.url, "--floor", str(floor)),
            *("--json", "--seed", "7", *extra),
            stdout=out,
            stderr=io.StringIO(),
        )
    return raised.value, json.loads(out.getvalue() or "{}")


def _api_meter(live_service, pool: int) -> int:
    with urllib.request.urlopen(f"{live_service.url}/api/v1/pools/{pool}/meter") as answer:
        return json.load(answer)["amount_cents"]


def _awards_by_kind(rounds) -> dict[str, dict[str, int]]:
    rows = (
        Award.objects.filter(round__in=rounds)
        .values("kind")
        .annotate(count=Count("pk"), cents=Sum("amount_cents"))
    )
    return {row["kind"]: {"count": row["count"], "cents": row["cents"]} for row in rows}


def _play_cents(rounds) -> int:
    """Play placed, from what the service stored: each decision's multiple times the Ante."""
    antes = {(seat.round_id, seat.seat): seat.ante_cents for seat in RoundSeat.objects.all()}
    return sum(
        (seat["decision"].get("multiple") or 0) * antes[(rnd.pk, seat["seat"])]
        for rnd in rounds
        for seat in rnd.result["seats"]
    )


def test_thirty_rounds_on_three_tables_and_the_summary_matches_the_books(
    live_service, tmp_path, django_assert_num_queries
):
    floor = _floor_file(tmp_path)

    with django_assert_num_queries(0):  # the command itself never touches the database
        summary, progress = _simulate(live_service, floor)

    rounds = list(Round.objects.all())
    assert [rnd.state for rnd in rounds] == [RoundState.SETTLED] * 30
    assert sorted(Counter(rnd.table_id for rnd in rounds).values()) == [10, 10, 10]
    assert all(re.fullmatch(r"sim-[0-9a-f]{8}-\d+", rnd.round_id) for rnd in rounds)
    assert all(re.fullmatch(ROUND_ID_PATTERN, rnd.round_id) for rnd in rounds)
    assert summary["outcome"] == "completed"
    assert (summary["rounds_opened"], summary["rounds_settled"]) == (30, 30)
    assert (summary["retries"], summary["errors"], summary["rounds_in_doubt"]) == (0, [], [])

    seats = RoundSeat.objects.all()
    locked = seats.aggregate(a=Sum("ante_cents"), b=Sum("blind_cents"), t=Sum("trips_cents"))
    staked = seats.filter(progressive_cents__gt=0)
    assert summary["seats"] == seats.count()
    assert summary["wagers_cents"] == sum(locked.values()) + _play_cents(rounds)
    assert summary["progressive_stakes"] == {
        "count": staked.count(),
        "cents": staked.aggregate(total=Sum("progressive_cents"))["total"],
    }
    paid = {kind: tally for kind, tally in summary["awards"].items() if tally["count"]}
    assert paid == _awards_by_kind(rounds)

    # Realistic rounds: 3 to 7 seats, the bets of the brief, every decision by the strategy.
    assert all(3 <= rnd.seats.count() <= 7 for rnd in rounds)
    assert {seat.ante_cents for seat in seats} <= {500, 1000, 2500, 5000}
    assert all(seat.blind_cents == seat.ante_cents for seat in seats)
    assert {seat.trips_cents for seat in seats} <= {0, 500, 1000}
    assert {seat.progressive_cents for seat in seats} <= {0, 500}
    for rnd in rounds:
        board = _cards(" ".join(rnd.result["board"]))
        for seat in rnd.result["seats"]:
            expected = decide(_cards(" ".join(seat["cards"])), board)
            assert seat["decision"]["action"] == expected.action
            assert seat["decision"].get("multiple") == expected.multiple

    (pool,) = Pool.objects.all()
    assert summary["pools"] == [
        {
            "pool": pool.pk,
            "stake_cents": 500,
            "meter_before_cents": pool.seed_cents,
            "meter_after_cents": pool.meter_cents,
        }
    ]
    assert pool.meter_cents == _api_meter(live_service, pool.pk)
    assert_journal_ok()
    # stderr is no terminal here: plain lines, no carriage-return redraws, ending at 30/30.
    assert "\r" not in progress
    assert progress.rstrip().splitlines()[-1].startswith("[####################] 30/30 rounds")


def test_force_royal_pays_the_jackpot_and_envy_after_the_meter_has_grown(live_service, tmp_path):
    floor = _floor_file(tmp_path)
    # A first run with the same seed (so the same deals): round ids must still not collide.
    _simulate(live_service, floor, "--rounds", "3")

    summary, _ = _simulate(live_service, floor, "--force-royal")

    assert Round.objects.filter(state=RoundState.SETTLED).count() == 3 + 30
    royal = Award.objects.get(kind="royal_flush")
    assert royal.status == AwardStatus.PENDING  # a jackpot waits for the supervisors
    first_table = json.loads(floor.read_text())["tables"][0]["id"]
    assert royal.round.table_id == first_table
    assert royal.round.round_id == f"{summary['run_id']}-10"  # the first table's last round
    bettors = set(royal.round.seats.filter(progressive_cents__gt=0).values_list("seat", flat=True))
    assert royal.seat in bettors
    envy = Award.objects.filter(round=royal.round, kind="envy")
    assert set(envy.values_list("seat", flat=True)) == bettors - {royal.seat}
    assert summary["awards"]["royal_flush"] == {"count": 1, "cents": royal.amount_cents}
    assert summary["awards"]["envy"]["count"] == envy.count()
    assert summary["jackpots"] == [
        {
            "table": first_table,
            "table_name": royal.round.table.name,
            "round_id": royal.round.round_id,
            "seat": royal.seat,
            "amount_cents": royal.amount_cents,
            "status": "pending",
        }
    ]

    # Each stake adds exactly 100 cents to the meter (20% of 500). The jackpot took the meter
    # as it stood, and it restarted from the seed: so after the run it holds the seed plus the
    # stakes that came after the hit, i.e. all this run's stakes less those in the jackpot.
    pool = Pool.objects.get()
    (meter,) = summary["pools"]
    stakes = RoundSeat.objects.filter(
        round__round_id__startswith=summary["run_id"], progressive_cents__gt=0
    ).count()
    grown_before_hit = royal.amount_cents - meter["meter_before_cents"]
    assert grown_before_hit > 0
    assert meter["meter_after_cents"] == pool.seed_cents + 100 * stakes - grown_before_hit
    assert pool.meter_cents == meter["meter_after_cents"] == _api_meter(live_service, pool.pk)
    assert_journal_ok()


def test_a_missing_floor_file_exits_2_and_says_how_to_make_one(tmp_path):
    missing = tmp_path / "nowhere.json"

    with pytest.raises(CommandError) as raised:
        call_command("simulate_floor", "--tables", "3", "--rounds", "30", "--floor", str(missing))

    assert raised.value.returncode == 2
    assert f"no floor file at {missing}" in str(raised.value)
    assert f"python manage.py seed_demo --tables 3 --json > {missing}" in str(raised.value)


def test_a_floor_file_with_too_few_tables_exits_2(tmp_path):
    floor = tmp_path / "small.json"
    tables = [
        {"id": 1, "name": "UTH 1", "game": "uth", "pool": 1, "token": "term_a"},
        {"id": 2, "name": "UTH 2", "game": "uth", "pool": None, "token": "term_b"},  # no pool
        {"id": 3, "name": "Stud 1", "game": "stud", "pool": None, "token": "term_c"},
        {"id": 4, "name": "UTH 3", "game": "uth", "pool": 1, "token": "term_d"},
    ]
    floor.write_text(json.dumps({"pools": [{"id": 1}], "tables": tables}))

    with pytest.raises(CommandError) as raised:
        call_command("simulate_floor", "--tables", "3", "--rounds", "30", "--floor", str(floor))

    assert raised.value.returncode == 2
    assert "has 2 Ultimate Texas Hold'em tables linked to a pool" in str(raised.value)
    assert "seed_demo --tables 3 --json >" in str(raised.value)
    assert [table.id for table in load_floor(floor, 2)] == [1, 4]


@pytest.mark.parametrize("url", ["ftp://host", "http://", "127.0.0.1:8000", "http://h:port"])
def test_a_bad_base_url_exits_2(url):
    with pytest.raises(CommandError, match=r"--base-url: .* is not an http") as raised:
        call_command("simulate_floor", "--tables", "1", "--rounds", "1", "--base-url", url)

    assert raised.value.returncode == 2


def test_a_stopped_server_fails_fast_with_a_clear_error(live_service, tmp_path):
    floor = _floor_file(tmp_path)
    live_service.stop()
    started = time.monotonic()

    error, _ = _failing(live_service, floor, "--rounds", "30", "--wait", "1")

    assert error.returncode == 1
    assert f"{live_service.url}/healthz did not answer 200 within 1 s" in str(error)
    assert time.monotonic() - started < 5
    assert not Round.objects.exists()


def _stop_once_settled(live_service, count: int) -> threading.Thread:
    """Stop the service once `count` rounds are settled, mid-run: a fixed delay stopped it, on a
    busy machine, before the first round was played."""

    def watch() -> None:
        deadline = time.monotonic() + 60
        settled = Round.objects.filter(state=RoundState.SETTLED)
        try:
            while time.monotonic() < deadline and settled.count() < count:
                time.sleep(0.02)
        finally:
            connection.close()  # this thread's own
            live_service.stop()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    return watcher


def test_a_server_gone_mid_run_stops_every_table_and_still_sums_up(live_service, tmp_path):
    floor = _floor_file(tmp_path)
    # Four settled: at most one a table (three) can have lost its answer with the server.
    watcher = _stop_once_settled(live_service, 4)

    error, summary = _failing(
        live_service, floor, "--rounds", "600", "--rate", "30", "--give-up", "0.5"
    )
    watcher.join()

    assert error.returncode == 1
    assert summary["outcome"] == "service_gone"
    assert "the service is gone (no answer for 0.5 s" in summary["message"]
    assert summary["retries"] > 0
    assert summary["pools"][0]["meter_after_cents"] is None
    # A round whose answer was lost with the server may have been settled without our knowing:
    # at most one per table, and each is listed for the operator to read back.
    settled = Round.objects.filter(state=RoundState.SETTLED).count()
    assert 0 < summary["rounds_settled"] <= settled <= summary["rounds_settled"] + 3
    unknown = {(row["table"], row["round_id"]) for row in summary["rounds_in_doubt"]}
    not_known_settled = Round.objects.exclude(state=RoundState.SETTLED)
    assert set(not_known_settled.values_list("table_id", "round_id")) <= unknown
    assert_journal_ok()


def test_an_interrupted_run_stops_between_rounds_and_leaves_no_round_open(live_service, tmp_path):
    floor = _floor_file(tmp_path)
    tables = load_floor(floor, 3)
    plan = FloorPlan(base_url=live_service.url, tables=tables, rounds=600, rate=40.0, seed=7)
    pools = read_pools(plan.base_url, [tables[0].pool], give_up_s=5)
    pressed = threading.Event()

    def ctrl_c_after_five_rounds(progress) -> None:
        if progress.settled >= 5 and not pressed.is_set():
            pressed.set()
            raise KeyboardInterrupt

    summary = run_floor(plan, pools, on_progress=ctrl_c_after_five_rounds)

    assert (summary.outcome, summary.exit_status) == ("interrupted", 130)
    assert not Round.objects.exclude(state=RoundState.SETTLED).exists()
    assert 5 <= Round.objects.count() == summary.tally.rounds_settled < 600
    assert summary.pools[0].after_cents == Pool.objects.get().meter_cents
    assert_journal_ok()


def test_a_round_an_earlier_run_left_open_is_voided_first_and_the_run_plays_on(
    live_service, tmp_path
):
    floor = _floor_file(tmp_path)
    first = load_floor(floor, 3)[0]
    # An earlier run was killed between an open and its result: the round stays open, and the
    # service opens no other round at that table until it is closed (409 round_in_progress).
    request = urllib.request.Request(
        f"{live_service.url}/api/v1/tables/{first.id}/rounds",
        data=json.dumps(
            {
                "round_id": "killed-run-1",
                "seats": [
                    {
                        "seat": 1,
                        "bets": {"ante_cents": 500, "blind_cents": 500, "progressive_cents": 500},
                    }
                ],
            }
        ).encode(),
        headers={"Authorization": f"Bearer {first.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as opened:
        assert opened.status == 201

    summary, _ = _simulate(live_service, floor)

    assert summary["outcome"] == "completed", summary["errors"]
    assert summary["left_open_voided"] == [{"table": first.id, "round_id": "killed-run-1"}]
    assert Round.objects.get(round_id="killed-run-1").state == RoundState.VOID
    assert Round.objects.filter(state=RoundState.SETTLED).count() == 30
    assert_journal_ok()


# --- the players' strategy (pure) ----------------------------------------------------------------

PREFLOP = UthDecision.play(Street.PREFLOP, 4)
FLOP = UthDecision.play(Street.FLOP, 2)
RIVER = UthDecision.play(Street.RIVER, 1)
FOLD = UthDecision.fold()
BLANK_BOARD = "2c 7d 9h 4s 3c"  # pairs nothing below, completes no straight or flush


@pytest.mark.parametrize(
    ("hole", "board", "decision"),
    [
        ("3c 3d", BLANK_BOARD.replace("3c", "Qs"), PREFLOP),  # pair of 3s or better
        ("Ah 2d", BLANK_BOARD, PREFLOP),  # any ace
        ("Kh 2h", BLANK_BOARD, PREFLOP),  # K suited
        ("Kh 5d", BLANK_BOARD, PREFLOP),  # K5 offsuit
        ("Qh 8d", BLANK_BOARD, PREFLOP),
        ("Qh 6h", BLANK_BOARD, PREFLOP),
        ("Jh Td", BLANK_BOARD, PREFLOP),
        ("Jh 8h", BLANK_BOARD, PREFLOP),
        ("Kh 4d", "Ks 8c 5h Qd 3s", FLOP),  # K4 offsuit: too weak before, a hidden pair after
        ("Qh 7d", "Qs Jd 2h 5c 3s", FLOP),  # Q7 offsuit: hidden pair of queens on the flop
        ("2h 2d", "Ks 9c 5d Qd 8s", RIVER),  # pocket 2s: no 2x on the flop, 1x at the river
        ("2h 2d", "2s 9c 5d Qd Ks", FLOP),  # pocket 2s that made trips on the flop
        ("Th 4h", "8h 3h Kc 6d 2s", FLOP),  # four to a flush with a hidden ten of hearts
        ("9h 4h", "8h 3h Kc 6d 2s", FOLD),  # four to a flush, hidden card below a ten: no
        ("9c 6d", "Kh Kd 2s 2h 7c", FOLD),  # the board's two pair is everyone's
        ("9c 5d", "8h 7s 2c 6d Qh", RIVER),  # a straight the hole cards complete at the river
        ("Jc 4d", "9s 8h 2c 4h Kd", RIVER),  # a hidden pair of fours at the river
        ("Tc 4d", BLANK_BOARD.replace("4s", "Jd"), FOLD),  # T4 offsuit: nothing
    ],
)
def test_the_strategy_decides_as_the_basic_strategy_says(hole, board, decision):
    assert decide(_cards(hole), _cards(board)) == decision


def test_two_pair_on_the_flop_bets_2x_and_board_trips_count_as_made():
    assert decide(_cards("9c 6d"), _cards("9h 6s 2d Kc 3h")) == FLOP  # two pair, hidden
    assert decide(_cards("8c 6d"), _cards("7h 7s 7d Kc 3h")) == FLOP  # trips on the board


# --- deals, shares, money, pacing (pure) ---------------------------------------------------------


def test_a_fair_deal_uses_distinct_cards_from_one_deck():
    for seed in range(50):
        deal = deal_fair(random.Random(seed), 7)
        cards = [*deal.board, *deal.dealer, *(card for hole in deal.holes for card in hole)]
        assert len(cards) == len(set(cards)) == 5 + 2 + 14


def test_the_stacked_deal_gives_one_seat_a_jackpot_royal_and_nothing_else_is_fixed():
    for seed in range(200):
        rng = random.Random(seed)
        deal = deal_royal(rng, 6, royal_seat=seed % 6)
        cards = [*deal.board, *deal.dealer, *(card for hole in deal.holes for card in hole)]
        assert len(cards) == len(set(cards)) == 5 + 2 + 12
        awards = [progressive_award(hole=hole, board=deal.board) for hole in deal.holes]
        assert awards[seed % 6] == ProgressiveAward.ROYAL_FLUSH  # never the community royal


def test_a_forced_royal_goes_to_a_seat_with_a_progressive_stake():
    for seed in range(100):
        plan = plan_round(random.Random(seed), round_id="r", stake_cents=500, force_royal=True)
        winners = [
            bets
            for bets, hole in zip(plan.seats, plan.deal.holes, strict=True)
            if progressive_award(hole=hole, board=plan.deal.board) == ProgressiveAward.ROYAL_FLUSH
        ]
        assert len(winners) == 1
        assert winners[0].progressive_cents == 500


def test_rounds_are_shared_out_and_money_is_printed_from_cents():
    assert share_rounds(30, 3) == (10, 10, 10)
    assert share_rounds(100_000, 6) == (16_667, 16_667, 16_667, 16_667, 16_666, 16_666)
    assert share_rounds(2, 3) == (1, 1, 0)
    assert eur(1_000_000) == "EUR 10,000.00"
    assert eur(7) == "EUR 0.07"
    assert eur(-50_000) == "-EUR 500.00"


@pytest.mark.parametrize(("module", "examples"), [(floor_module, 2), (terminal_module, 1)])
def test_the_module_examples_hold(module, examples):
    failures, attempted = doctest.testmod(module)
    assert attempted >= examples and not failures


def test_the_pacer_spreads_round_starts_and_a_stop_wakes_a_waiter():
    stop = threading.Event()
    pacer = Pacer(rate=100.0)
    started = time.monotonic()
    assert all(pacer.wait_turn(stop) for _ in range(11))
    assert time.monotonic() - started >= 0.095  # ten intervals of 10 ms after the first start

    slow = Pacer(rate=0.01)  # a start every 100 s
    assert slow.wait_turn(stop)
    threading.Timer(0.05, stop.set).start()
    started = time.monotonic()
    assert not slow.wait_turn(stop)
    assert time.monotonic() - started < 5


# --- the terminal's client and its retries (a scripted stub server) ------------------------------


class _Scripted(BaseHTTPRequestHandler):
    """Answers each request with the next (status, headers, body) of `script`; records bodies."""

    script: ClassVar[list[tuple[int, dict[str, str], bytes]]] = []
    received: ClassVar[list[bytes]] = []

    def do_POST(self) -> None:
        self.received.append(self.rfile.read(int(self.headers["Content-Length"])))
        status, headers, body = self.script.pop(0)
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def stub():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Scripted.script, _Scripted.received = [], []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _client(base_url: str, retries: list[int], give_up_s: float = 5.0) -> TerminalClient:
    return TerminalClient(
        base_url,
        "term_x",
        stop=threading.Event(),
        give_up_s=give_up_s,
        on_retry=lambda: retries.append(1),
    )


def test_a_5xx_and_a_429_are_resent_with_the_same_body(stub):
    _Scripted.script = [
        (503, {}, b"down for a moment"),
        (429, {"Retry-After": "0"}, b'{"error": {"code": "throttled"}}'),
        (201, {}, b'{"round_id": "r-1", "state": "open"}'),
    ]
    retries: list[int] = []

    answer = _client(stub, retries).post("/api/v1/tables/1/rounds", {"round_id": "r-1"})

    assert answer == {"round_id": "r-1", "state": "open"}
    assert len(retries) == 2
    assert _Scripted.received == [b'{"round_id":"r-1"}'] * 3


def test_another_4xx_is_refused_with_the_service_body(stub):
    error = {"error": {"type": "invalid_request", "code": "invalid_card", "param": "board[0]"}}
    _Scripted.script = [(400, {}, json.dumps(error).encode())]

    with pytest.raises(RequestRefused) as refused:
        _client(stub, []).post("/api/v1/tables/1/rounds/r-1/result", {"board": ["1x"]})

    assert (refused.value.status, refused.value.body) == (400, error)
    assert len(_Scripted.received) == 1  # never resent


def test_no_answer_for_the_give_up_time_means_the_service_is_gone(stub):
    _Scripted.script = [(502, {}, b"bad gateway")] * 100
    retries: list[int] = []
    started = time.monotonic()

    with pytest.raises(ServiceGone, match=r"no answer for 0.3 s .* \(last: HTTP 502\)") as gone:
        _client(stub, retries, give_up_s=0.3).post("/api/v1/tables/1/rounds", {})

    assert 0.3 <= time.monotonic() - started < 3
    assert len(retries) >= 2
    assert gone.value.maybe_delivered  # behind a 502, the service may have stored the round


def test_refused_connections_prove_nothing_was_delivered():
    port = free_port()  # nothing listens on it
    with pytest.raises(ServiceGone, match="ConnectionRefusedError") as gone:
        _client(f"http://127.0.0.1:{port}", [], give_up_s=0.2).post("/api/v1/tables/1/rounds", {})

    assert not gone.value.maybe_delivered
