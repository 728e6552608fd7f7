"""A client generated from the service's own OpenAPI schema plays the club's systems against a live
server: a terminal at an Ultimate Texas Hold'em table and one at a Stud table, two supervisors, an
auditor, and a sign reading the meter (issue 10).

Every body is sent through the generated request models and every answer is parsed into the
generated models: `generated_client.Api` records each place where that fails (an untyped object, a
model that cannot hold the body, a parser that crashes, a key the schema does not declare, an amount
that is not an int) and each test ends with `api.finish()`, which lists them all. So a test fails
with the whole list of the schema's lies it met, not just the first one.

The client is generated once per session into a temporary directory (see `generated_client`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import ModuleType

import pytest

from tests.api.generated_client import Api, entry, forget, generate, value
from tests.conftest import make_floor
from tests.staff import person, staff_token
from tests.winners import PAY

# The flows send a few dozen requests from one address: no throttle in the way.
LIMITLESS = {
    "anon": "1000000/min",
    "rules": "1000000/min",
    "terminal": "1000000/min",
    "heavy_read": "1000000/min",
}
ROYAL_BOARD = ["Ah", "Kh", "Qh", "2c", "3d"]
# One process generates the client (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("tests/api/test_generated_client.py")


@pytest.fixture(scope="session")
def generated(tmp_path_factory) -> Iterator[tuple[ModuleType, str]]:
    package, printed = generate(tmp_path_factory.mktemp("generated-client"))
    yield package, printed
    forget(package)


@pytest.fixture
def api(generated, live_service, settings) -> Api:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": LIMITLESS}
    return Api(generated[0], live_service.url)


@pytest.fixture
def staff(live_service, django_user_model) -> dict[str, str]:
    """Bearer tokens: two supervisors (four eyes), an auditor and a surveillance officer."""
    cast = (
        ("supervisor1", "supervisor"),
        ("supervisor2", "supervisor"),
        ("auditor", "auditor"),
        ("surveillance1", "surveillance"),
    )
    return {username: staff_token(person(username, role)) for username, role in cast}


def test_the_client_generates_without_warnings(generated):
    """The generator skips, with a warning, every part of a schema it cannot turn into code."""
    _, printed = generated
    assert "Warning" not in printed and "Unable" not in printed, printed


def uth_open_seat(seat: int, *, trips: int = 0) -> dict:
    bets = {"ante_cents": 500, "blind_cents": 500, "progressive_cents": 500}
    if trips:
        bets["trips_cents"] = trips
    return {"seat": seat, "bets": bets}


def test_uth_round_to_a_paid_jackpot(api, staff):
    floor = make_floor()
    table, terminal = floor.uth[0].table_id, floor.uth[0].token
    pool = floor.pool_id
    since = datetime.now(UTC) - timedelta(minutes=1)

    # The terminal opens a round: three seats, each with the progressive stake.
    opened = api.call(
        "round_open",
        table,
        token=terminal,
        expect=201,
        body=api.body(
            "round_open",
            {
                "round_id": "r-1",
                "seats": [uth_open_seat(1), uth_open_seat(2, trips=100), uth_open_seat(3)],
            },
        ),
    )
    api.check(value(opened.state) == "open", f"round_open: state {opened.state!r}")
    api.check(opened.progressive.stakes == 3, f"round_open: {opened.progressive.stakes} stakes")
    api.check(
        isinstance(opened.meter.amount_cents, int) and opened.meter.amount_cents > 1_000_000,
        f"round_open: meter {opened.meter.amount_cents!r}",
    )
    meter_at_hit = opened.meter.amount_cents

    # Seat 1 makes a royal flush with both hole cards: the jackpot; seats 2 and 3 get the envy.
    result = api.call(
        "round_result",
        table,
        "r-1",
        token=terminal,
        body=api.body(
            "round_result",
            {
                "board": ROYAL_BOARD,
                "dealer": ["9s", "9d"],
                "seats": [
                    {
                        "seat": 1,
                        "cards": ["Jh", "Th"],
                        "decision": {"action": "play", "street": "preflop", "multiple": 4},
                    },
                    {"seat": 2, "cards": ["2s", "2d"], "decision": {"action": "fold"}},
                    {
                        "seat": 3,
                        "cards": ["5c", "6c"],
                        "decision": {"action": "play", "street": "river", "multiple": 1},
                    },
                ],
            },
        ),
    )
    awards = {(award.seat, value(award.kind)): award for award in result.awards}
    api.check(
        set(awards) == {(1, "royal_flush"), (2, "envy"), (3, "envy")},
        f"round_result: awards {sorted(awards)}",
    )
    jackpot = awards[(1, "royal_flush")]
    api.check(jackpot.amount_cents == meter_at_hit, f"jackpot {jackpot.amount_cents!r}")
    api.check(value(jackpot.status) == "pending", f"jackpot status {jackpot.status!r}")
    api.check(
        value(result.seats[0].player_hand.category) == "royal_flush",
        f"seat 1 hand {result.seats[0].player_hand.category!r}",
    )
    api.check(result.seats[0].net_cents == 252_500, f"seat 1 net {result.seats[0].net_cents!r}")

    # The terminal reads the round back.
    detail = api.call("round_detail", table, "r-1", token=terminal)
    api.check(value(detail.state) == "settled", f"round_detail: state {detail.state!r}")
    api.check(detail.opened.round_id == "r-1", "round_detail: opened")
    api.check(
        [award.id for award in detail.closed.awards] == [award.id for award in result.awards],
        "round_detail: the closed answer is not the result's",
    )

    # The sign: the meter (back at the seed, a jackpot waiting) and the pool.
    meter = api.call("pool_meter", pool)
    api.check(meter.amount_cents == 1_000_000, f"pool_meter: {meter.amount_cents!r}")
    api.check(meter.jackpot_pending is True, "pool_meter: no jackpot pending")
    api.check(
        meter.pending_jackpot.amount_cents == jackpot.amount_cents,
        f"pool_meter: pending {meter.pending_jackpot!r}",
    )
    detail_pool = api.call("pool_detail", pool)
    api.check(detail_pool.stake_cents == 500, f"pool_detail: stake {detail_pool.stake_cents!r}")
    api.check(table in detail_pool.tables, f"pool_detail: tables {detail_pool.tables!r}")

    # Supervisor 1 finds the jackpot waiting, filtered by status and time.
    window = {}
    if api.accepts("award_list", "from_", "to"):
        window = {"from_": since, "to": datetime.now(UTC) + timedelta(minutes=1)}
    waiting = api.call(
        "award_list",
        token=staff["supervisor1"],
        status=api.argument("award_list", "status", "pending"),
        pool=pool,
        **window,
    )
    api.check(waiting.count == 1, f"award_list: {waiting.count!r} pending")
    api.check([award.id for award in waiting.results] == [jackpot.id], "award_list: results")
    if window:
        later = api.call(
            "award_list",
            token=staff["auditor"],
            from_=datetime.now(UTC) + timedelta(minutes=1),
            to=datetime.now(UTC) + timedelta(minutes=2),
        )
        api.check(later.count == 0, f"award_list: {later.count!r} awards in the future")

    # Verify (supervisor 1), approve (not supervisor 1: four eyes; supervisor 2), pay.
    verified = api.call(
        "award_verify",
        jackpot.id,
        token=staff["supervisor1"],
        body=api.body("award_verify", {"note": "cards and video checked"}),
    )
    api.check(value(verified.status) == "verified", f"award_verify: {verified.status!r}")
    api.check(verified.verified_by == "supervisor1", "award_verify: verified_by")
    still = api.call(
        "award_list",
        token=staff["auditor"],
        status=api.argument("award_list", "status", "verified"),
    )
    api.check([award.id for award in still.results] == [jackpot.id], "award_list: verified")
    refused = api.call("award_approve", jackpot.id, token=staff["supervisor1"], expect=403)
    api.check(refused.error.code == "four_eyes", f"award_approve: {refused.error.code!r}")
    api.check(value(refused.error.type_) == "permission", "award_approve: error type")
    # The pool requires surveillance's video review before a jackpot's approval.
    waiting = api.call("award_approve", jackpot.id, token=staff["supervisor2"], expect=409)
    api.check(
        waiting.error.code == "surveillance_review_required",
        f"award_approve: {waiting.error.code!r}",
    )
    reviewed = api.call(
        "award_review",
        jackpot.id,
        token=staff["surveillance1"],
        body=api.body(
            "award_review",
            {
                "camera": "UTH-1 overhead",
                "from": (since - timedelta(minutes=5)).isoformat(),
                "to": datetime.now(UTC).isoformat(),
                "verdict": "confirmed",
            },
        ),
    )
    api.check(reviewed.review.reviewer == "surveillance1", f"award_review: {reviewed.review!r}")
    approved = api.call("award_approve", jackpot.id, token=staff["supervisor2"])
    api.check(value(approved.status) == "approved", f"award_approve: {approved.status!r}")
    paid = api.call(
        "award_pay", jackpot.id, token=staff["supervisor1"], body=api.body("award_pay", PAY)
    )
    api.check(value(paid.status) == "paid", f"award_pay: {paid.status!r}")
    api.check(paid.amount_cents == jackpot.amount_cents, "award_pay: amount")
    again = api.call(
        "award_pay",
        jackpot.id,
        token=staff["supervisor1"],
        expect=409,
        body=api.body("award_pay", PAY),
    )
    api.check(again.error.code == "award_wrong_status", f"award_pay: {again.error.code!r}")
    envy = awards[(2, "envy")]
    kept = api.call(
        "award_void",
        envy.id,
        token=staff["supervisor2"],
        expect=409,
        body=api.body("award_void", {"reason": "an approved award is owed: no void"}),
    )
    api.check(kept.error.code == "award_wrong_status", f"award_void: {kept.error.code!r}")

    # The auditor: the journal of the round, its check, the pool report.
    # The generator names the property `round` as `round_` (it shadows a builtin), as it does
    # the parameter; Raw reads both spellings.
    journal = api.call("journal_list", token=staff["auditor"], round_=paid.round_, limit=50)
    codes = {value(transfer.code) for transfer in journal.results}
    api.check({"jackpot_hit", "envy", "award_paid"} <= codes, f"journal_list: codes {codes}")
    api.check(journal.count == len(journal.results), "journal_list: count")
    # A full verification asked for (no worker here: it stays queued), and the answers about it.
    started = api.call("journal_verify_start", token=staff["auditor"], expect=202)
    api.check(value(started.status) == "queued" and started.full, "journal_verify_start")
    run = api.call("journal_verification_get", started.id, token=staff["auditor"])
    api.check(run.id == started.id and run.requested_by == "auditor", "journal_verification_get")
    check = api.call("journal_verify", token=staff["auditor"])
    api.check(check.running.id == started.id, f"journal_verify: {check.running!r}")
    report = api.call("pool_report", pool, token=staff["auditor"])
    api.check(report.hit_count == 1, f"pool_report: hit_count {report.hit_count!r}")
    api.check(report.meter_identity.holds is True, "pool_report: meter identity")
    api.check(report.stakes.count == 3, f"pool_report: stakes {report.stakes.count!r}")

    # A misdeal on another round: opened, then voided (the stakes refunded).
    api.call(
        "round_open",
        table,
        token=terminal,
        expect=201,
        body=api.body("round_open", {"round_id": "r-2", "seats": [uth_open_seat(4)]}),
    )
    voided = api.call(
        "round_void",
        table,
        "r-2",
        token=terminal,
        body=api.body("round_void", {"reason": "misdeal"}),
    )
    api.check(value(voided.state) == "void", f"round_void: {voided.state!r}")
    api.check(voided.progressive_refund_cents == 500, "round_void: refund")
    api.finish()


def test_stud_round(api):
    floor = make_floor(uth_tables=1)
    table, terminal = floor.stud.table_id, floor.stud.token
    opened = api.call(
        "round_open",
        table,
        token=terminal,
        expect=201,
        body=api.body(
            "round_open",
            {
                "round_id": "s-1",
                "seats": [
                    {"seat": 1, "bets": {"ante_cents": 1000, "bonus_cents": 200}},
                    {"seat": 2, "bets": {"ante_cents": 500}},
                    {"seat": 3, "bets": {"ante_cents": 1000, "bonus_cents": 100}},
                ],
            },
        ),
    )
    api.check(opened.progressive is None and opened.meter is None, "round_open: a pool?")
    api.check(
        [seat.bets.bonus_cents for seat in opened.seats] == [200, 0, 100],
        "round_open: the bonus bets",
    )
    result = api.call(
        "round_result",
        table,
        "s-1",
        token=terminal,
        body=api.body(
            "round_result",
            {
                "dealer": ["As", "Kd", "8h", "6c", "3s"],
                "seats": [
                    {
                        "seat": 1,
                        "cards": ["Jc", "Tc", "7c", "4c", "2c"],
                        "decision": {"action": "raise"},
                    },
                    {
                        "seat": 2,
                        "cards": ["Qs", "7d", "5h", "4d", "2s"],
                        "decision": {"action": "fold"},
                    },
                    {
                        "seat": 3,
                        "cards": ["9h", "9d", "5c", "4s", "2h"],
                        "decision": {"action": "buy", "discard": "2h", "draw": "9c"},
                    },
                ],
            },
        ),
    )
    nets = [seat.net_cents for seat in result.seats]
    api.check(nets == [31_000, -500, 5_900], f"round_result: nets {nets}")
    buyer = result.seats[2]
    api.check(entry(buyer.boxes, "purchase").stake_cents == 1000, "round_result: the purchase box")
    api.check(value(buyer.decision.draw) == "9c", "round_result: the buy's draw")
    api.check(
        value(buyer.player_hand.category) == "three_of_a_kind",
        f"round_result: the buyer's hand {buyer.player_hand.category!r}",
    )
    api.check(result.awards == [] and result.meter is None, "round_result: awards or a meter")
    detail = api.call("round_detail", table, "s-1", token=terminal)
    api.check(value(detail.state) == "settled", f"round_detail: {detail.state!r}")
    api.check(
        [seat.net_cents for seat in detail.closed.seats] == nets,
        "round_detail: the closed answer is not the result's",
    )
    api.check(detail.opened.seats[1].bets.ante_cents == 500, "round_detail: the opened bets")
    api.finish()


def test_rules_api(api):
    evaluated = api.call(
        "rules_evaluate",
        body=api.body("rules_evaluate", {"cards": ["Ah", "2c", "3d", "Kd", "4s", "5h", "Kh"]}),
    )
    api.check(value(evaluated.category) == "straight", f"rules_evaluate: {evaluated.category!r}")
    api.check(evaluated.rank == 5854, f"rules_evaluate: rank {evaluated.rank!r}")
    uth = api.call(
        "rules_uth_settle",
        body=api.body(
            "rules_uth_settle",
            {
                "player": ["Ah", "Kh"],
                "dealer": ["9c", "7d"],
                "board": ["Qh", "Jh", "3h", "9s", "4d"],
                "bets": {
                    "ante_cents": 125,
                    "blind_cents": 125,
                    "trips_cents": 100,
                    "progressive_cents": 500,
                },
                "decision": {"action": "play", "street": "preflop", "multiple": 4},
            },
        ),
    )
    api.check(uth.net_cents == 1512, f"rules_uth_settle: net {uth.net_cents!r}")
    api.check(entry(uth.boxes, "blind").net_cents == 187, "rules_uth_settle: the blind box")
    stud = api.call(
        "rules_stud_settle",
        body=api.body(
            "rules_stud_settle",
            {
                "player": ["9h", "9d", "5c", "4s", "2h"],
                "dealer": ["Ac", "Kd", "Jh", "8s", "3c"],
                "bets": {"ante_cents": 100, "bonus_cents": 100},
                "decision": {"action": "buy", "discard": "2h", "draw": "9c"},
            },
        ),
    )
    api.check(stud.net_cents == 500, f"rules_stud_settle: net {stud.net_cents!r}")
    api.check(
        entry(stud.boxes, "purchase").net_cents == -100, "rules_stud_settle: the purchase box"
    )
    paytables = api.call("rules_paytables")
    api.check(paytables.progressive.envy_cents == 50_000, "rules_paytables: the progressive's envy")
    api.check(
        [value(odds.category) for odds in paytables.uth_blind.odds][-1] == "royal_flush",
        "rules_paytables: the blind's odds",
    )
    returned = api.call("rules_progressive_return", jackpot_cents=1_000_000, other_bettors=2)
    api.check(returned.rtp_bp == 5804, f"rules_progressive_return: {returned.rtp_bp!r}")
    api.check(
        returned.break_even_jackpot_cents == 7_814_341,
        f"rules_progressive_return: {returned.break_even_jackpot_cents!r}",
    )
    api.check(returned.rtp.denominator == 508_963, "rules_progressive_return: rtp")
    api.finish()


def test_refusals_parse_into_the_error_model(api):
    """Requests the schema cannot refuse in advance get the one typed error body."""
    floor = make_floor(uth_tables=1)
    # A card twice: valid by any schema (the cross-field check is the service's).
    twice = api.call(
        "rules_evaluate",
        expect=400,
        body=api.body("rules_evaluate", {"cards": ["Ah", "Ah", "3d", "Kd", "5s"]}),
    )
    api.check(twice.error.code == "duplicate_card", f"rules_evaluate: {twice.error.code!r}")
    api.check(twice.error.param == "cards[1]", f"rules_evaluate: param {twice.error.param!r}")
    api.check(value(twice.error.type_) == "invalid_request", "rules_evaluate: error type")
    # No such round; no token at all.
    missing = api.call(
        "round_detail", floor.uth[0].table_id, "r-404", token=floor.uth[0].token, expect=404
    )
    api.check(missing.error.code == "round_not_found", f"round_detail: {missing.error.code!r}")
    api.check(missing.error.param == "round_id", "round_detail: param")
    nobody = api.call("round_detail", floor.uth[0].table_id, "r-404", expect=401)
    api.check(nobody.error.code == "not_authenticated", f"round_detail: {nobody.error.code!r}")
    # Blind and Ante differ: a refusal the schema cannot express.
    unequal = api.call(
        "round_open",
        floor.uth[0].table_id,
        token=floor.uth[0].token,
        expect=400,
        body=api.body(
            "round_open",
            {
                "round_id": "r-1",
                "seats": [{"seat": 1, "bets": {"ante_cents": 500, "blind_cents": 600}}],
            },
        ),
    )
    api.check(unequal.error.code == "invalid_bet", f"round_open: {unequal.error.code!r}")
    api.check(unequal.error.param == "seats[0].bets.blind_cents", "round_open: param")
    api.finish()
