"""A progressive's life (issue 22 item 3, compliance 36, French art. 56-3-2): an admin suspends a
pool, the tables play on without the progressive and nothing is payable, the sign says so, and
resuming changes no figure; two admins stop it for good, its meter and reserve moved to another
pool or to its orphan account by journal entries that name the decision, exactly to the cent.

Each refusal asserts what was not written (rounds, transfers, events, counters)."""

from __future__ import annotations

import pytest
from django.test import Client

from jackpot.models import AuditEvent, Award, ParameterChange, Pool, Transfer
from tables.models import Round, Table
from tests.conftest import Floor, assert_journal_ok, make_floor, uth_play, uth_seat
from tests.staff import api_clients, person
from tests.winners import PAY_CASH

pytestmark = pytest.mark.django_db

U = 10_000

STRAIGHT_FLUSH = {  # seat 1: 8c 9c with 5c 6c 7c: a straight flush, 150,000 cents, waits
    "board": ["5c", "6c", "7c", "2s", "9h"],
    "dealer": ["Ac", "Qd"],
    "seats": [uth_play(1, "8c 9c")],
}
FULL_HOUSE = {  # seat 1: Kd Ks with Kh 2h 2d: a full house, 5,000 cents, payable at once
    "board": ["Kh", "2h", "2d", "7s", "9c"],
    "dealer": ["Ac", "Qd"],
    "seats": [uth_play(1, "Kd Ks")],
}


@pytest.fixture
def staff(django_user_model) -> dict[str, Client]:
    return api_clients(ana="admin", bob="admin", sam="supervisor", sue="supervisor")


def _post(client: Client, path: str, body: dict | None = None):
    return client.post(f"/api/v1{path}", body or {}, content_type="application/json")


def _meter(pool: int) -> dict:
    response = Client().get(f"/api/v1/pools/{pool}/meter")
    assert response.status_code == 200
    return response.json()


def _written() -> tuple[int, int, int]:
    return Round.objects.count(), Transfer.objects.count(), AuditEvent.objects.count()


def _counters(pool: int) -> tuple[int, int, str]:
    row = Pool.objects.get(pk=pool)
    return row.meter_units, row.reserve_units, row.status


def _set_tables(admin: Client, pool: int, *, enabled: bool) -> None:
    for table in Table.objects.filter(pool_id=pool):
        response = admin.patch(
            f"/api/v1/tables/{table.pk}", {"enabled": enabled}, content_type="application/json"
        )
        assert response.status_code == 200, response.json()


def test_a_suspended_pool_refuses_stakes_plays_on_and_resumes_unchanged(
    staff, floor: Floor, caplog
):
    terminal = floor.uth[0]
    assert terminal.post("/rounds", {"round_id": "r1", "seats": [uth_seat(1)]}).status_code == 201
    before_meter = _meter(floor.pool_id)
    assert before_meter["status"] == "active"

    suspended = _post(staff["ana"], f"/pools/{floor.pool_id}/suspend", {"reason": "meter fault"})
    assert suspended.status_code == 200, suspended.json()
    assert suspended.json()["status"] == "suspended"
    assert suspended.json()["reason"] == "meter fault"
    counters = _counters(floor.pool_id)
    written = _written()

    # A progressive stake: 409 naming the suspension, nothing written.
    other = floor.uth[1]
    with caplog.at_level("WARNING", logger="jackpot.security"):
        refused = other.post("/rounds", {"round_id": "r2", "seats": [uth_seat(1), uth_seat(2)]})
    # A significant event in the security log, as any refused stake (requirement 13).
    assert any(
        "progressive stake refused" in record.getMessage() and "meter fault" in record.getMessage()
        for record in caplog.records
        if record.name == "jackpot.security"
    )
    assert refused.status_code == 409, refused.json()
    error = refused.json()["error"]
    assert error["code"] == "pool_suspended"
    assert "meter fault" in error["message"] and "suspended since" in error["message"]
    assert _written() == written
    assert _counters(floor.pool_id) == counters

    # A round without the progressive opens and settles as ever.
    plain = other.post("/rounds", {"round_id": "r3", "seats": [uth_seat(1, progressive=0)]})
    assert plain.status_code == 201, plain.json()
    settled = other.post(
        "/rounds/r3/result",
        {
            "board": ["2c", "7d", "9h", "Js", "3c"],
            "dealer": ["4d", "5s"],
            "seats": [uth_play(1, "Ah Kd")],
        },
    )
    assert settled.status_code == 200, settled.json()
    assert _counters(floor.pool_id) == counters

    # The sign says suspended; the figure stands still.
    shown = _meter(floor.pool_id)
    assert shown["status"] == "suspended"
    assert shown["amount_cents"] == before_meter["amount_cents"]

    # Suspending twice is refused; resuming restores the sign and play, no figure changed.
    again = _post(staff["bob"], f"/pools/{floor.pool_id}/suspend", {"reason": "again"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "pool_suspended"
    resumed = _post(staff["bob"], f"/pools/{floor.pool_id}/resume", {"reason": "fixed"})
    assert resumed.status_code == 200, resumed.json()
    assert resumed.json()["status"] == "active"
    assert _counters(floor.pool_id) == (counters[0], counters[1], "active")
    assert _meter(floor.pool_id)["status"] == "active"
    assert _meter(floor.pool_id)["amount_cents"] == before_meter["amount_cents"]
    not_suspended = _post(staff["bob"], f"/pools/{floor.pool_id}/resume", {"reason": "again"})
    assert not_suspended.json()["error"]["code"] == "pool_not_suspended"
    opened = other.post("/rounds", {"round_id": "r4", "seats": [uth_seat(1)]})
    assert opened.status_code == 201, opened.json()

    kinds = list(
        AuditEvent.objects.filter(kind__in=["pool.suspended", "pool.resumed"])
        .order_by("pk")
        .values_list("chain", "kind", "actor", "payload__reason")
    )
    chain = f"pool-{floor.pool_id}"
    assert kinds == [
        (chain, "pool.suspended", "user:ana", "meter fault"),
        (chain, "pool.resumed", "user:bob", "fixed"),
    ]
    assert_journal_ok()


def test_nothing_is_payable_while_suspended_and_rounds_opened_before_settle(staff, floor: Floor):
    terminal, other = floor.uth
    assert terminal.post("/rounds", {"round_id": "sf", "seats": [uth_seat(1)]}).status_code == 201
    assert other.post("/rounds", {"round_id": "fh", "seats": [uth_seat(1)]}).status_code == 201
    assert (
        _post(staff["ana"], f"/pools/{floor.pool_id}/suspend", {"reason": "fault"}).status_code
        == 200
    )

    # Opened before the suspension: settled on their terms, their awards granted.
    straight = terminal.post("/rounds/sf/result", STRAIGHT_FLUSH).json()["awards"][0]
    full = other.post("/rounds/fh/result", FULL_HOUSE).json()["awards"][0]
    assert (straight["kind"], straight["status"]) == ("straight_flush", "pending")
    assert (full["kind"], full["status"]) == ("full_house", "approved")

    verified = _post(staff["sam"], f"/awards/{straight['id']}/verify", {"note": "video ok"})
    assert verified.status_code == 200, verified.json()
    written = _written()
    for client, award, step in ((staff["sue"], straight, "approve"), (staff["sam"], full, "pay")):
        refused = _post(client, f"/awards/{award['id']}/{step}", PAY_CASH if step == "pay" else {})
        assert refused.status_code == 409, refused.json()
        assert refused.json()["error"]["code"] == "pool_suspended"
        assert "fault" in refused.json()["error"]["message"]
    assert _written() == written
    assert dict(Award.objects.values_list("pk", "status")) == {
        straight["id"]: "verified",
        full["id"]: "approved",
    }

    assert (
        _post(staff["bob"], f"/pools/{floor.pool_id}/resume", {"reason": "ok"}).status_code == 200
    )
    assert _post(staff["sue"], f"/awards/{straight['id']}/approve").status_code == 200
    assert _post(staff["sam"], f"/awards/{full['id']}/pay", PAY_CASH).status_code == 200
    assert_journal_ok()


def _play(floor: Floor, rounds: int) -> None:
    terminal = floor.uth[0]
    for n in range(rounds):
        opened = terminal.post(
            "/rounds", {"round_id": f"p{n}", "seats": [uth_seat(1), uth_seat(2)]}
        )
        assert opened.status_code == 201, opened.json()
        settled = terminal.post(
            f"/rounds/p{n}/result",
            {
                "board": ["2c", "7d", "9h", "Js", "3c"],
                "dealer": ["4d", "5s"],
                "seats": [uth_play(1, "Ah Kd"), uth_play(2, "8s 8h", "fold")],
            },
        )
        assert settled.status_code == 200, settled.json()


def _propose_stop(client: Client, pool: int, **disposition) -> dict:
    proposed = _post(
        client,
        f"/pools/{pool}/stop",
        {"reason": "decommissioned", "voluntary": False, **disposition},
    )
    assert proposed.status_code == 201, proposed.json()
    return proposed.json()


def test_a_stop_moves_the_liability_to_another_pool_exactly(staff):
    stopped, heir = make_floor(), make_floor()
    _play(stopped, 3)
    _play(heir, 1)
    meter_a, reserve_a = (
        Pool.objects.get(pk=stopped.pool_id).meter_units // U,
        Pool.objects.get(pk=stopped.pool_id).reserve_units // U,
    )
    heir_row = Pool.objects.get(pk=heir.pool_id)
    units_a = (
        Pool.objects.get(pk=stopped.pool_id).meter_units % U,
        Pool.objects.get(pk=stopped.pool_id).reserve_units % U,
    )

    change = _propose_stop(staff["ana"], stopped.pool_id, to="pool", to_pool=heir.pool_id)
    assert (change["kind"], change["changes"]) == (
        "pool.stop",
        {"to": "pool", "to_pool": heir.pool_id, "voluntary": False, "effective_at": None},
    )
    path = f"/pools/{stopped.pool_id}/changes/{change['id']}/approve"
    # Tables open: refused; nothing moved.
    refused = _post(staff["bob"], path)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "pool_tables_open"
    _set_tables(staff["ana"], stopped.pool_id, enabled=False)
    # The proposer cannot approve it.
    alone = _post(staff["ana"], path)
    assert alone.status_code == 403 and alone.json()["error"]["code"] == "four_eyes"
    assert Pool.objects.get(pk=stopped.pool_id).status == "active"

    approved = _post(staff["bob"], path, {"note": "as agreed"})
    assert approved.status_code == 200, approved.json()
    assert approved.json()["status"] == "applied"

    after_a = Pool.objects.get(pk=stopped.pool_id)
    after_b = Pool.objects.get(pk=heir.pool_id)
    assert (after_a.status, after_a.meter_units, after_a.reserve_units) == ("stopped", *units_a)
    assert after_b.meter_units == heir_row.meter_units + meter_a * U
    assert after_b.reserve_units == heir_row.reserve_units + reserve_a * U
    moved = [
        (
            t.pool_id,
            t.code,
            t.debit.kind,
            t.credit.kind,
            t.amount_cents,
            t.event.kind,
            t.event.payload.get("change"),
        )
        for t in Transfer.objects.filter(code__startswith="stop_")
        .select_related("debit", "credit", "event")
        .order_by("pk")
    ]
    a, b, c = stopped.pool_id, heir.pool_id, change["id"]
    assert moved == [
        (a, "stop_meter_out", "meter", "moved", meter_a, "pool.stopped", c),
        (a, "stop_reserve_out", "reserve", "moved", reserve_a, "pool.stopped", c),
        (b, "stop_meter_in", "moved", "meter", meter_a, "pool.liability_received", c),
        (b, "stop_reserve_in", "moved", "reserve", reserve_a, "pool.liability_received", c),
    ]
    balances = assert_journal_ok()["balances"]
    assert balances[str(a)]["meter"] == 0 and balances[str(a)]["reserve"] == 0
    assert balances[str(a)]["moved"] == meter_a + reserve_a == -balances[str(b)]["moved"]
    assert balances[str(b)]["meter"] == after_b.meter_cents
    assert _meter(a)["status"] == "stopped" and _meter(a)["amount_cents"] == 0
    assert _meter(b)["amount_cents"] == after_b.meter_cents

    # A stopped pool takes no stake, even with its table open again, and never comes back.
    _set_tables(staff["ana"], stopped.pool_id, enabled=True)
    written = _written()
    refused = stopped.uth[0].post("/rounds", {"round_id": "late", "seats": [uth_seat(1)]})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "pool_stopped"
    assert _written() == written
    for step in ("suspend", "resume"):
        again = _post(staff["bob"], f"/pools/{a}/{step}", {"reason": "back"})
        assert again.status_code == 409 and again.json()["error"]["code"] == "pool_stopped"
    twice = _post(
        staff["bob"], f"/pools/{a}/stop", {"to": "orphan", "reason": "again", "voluntary": False}
    )
    assert twice.status_code == 409 and twice.json()["error"]["code"] == "pool_stopped"
    changed = _post(
        staff["ana"], f"/pools/{a}/changes", {"changes": {"stake_cents": 1000}, "reason": "x"}
    )
    assert changed.status_code == 409 and changed.json()["error"]["code"] == "pool_stopped"
    # Nor is a table linked to it again.
    _set_tables(staff["ana"], heir.pool_id, enabled=False)
    relinked = _post(
        staff["ana"], f"/tables/{heir.uth[1].table_id}/moves", {"pool": a, "reason": "back"}
    )
    assert relinked.status_code == 409 and relinked.json()["error"]["code"] == "pool_stopped"
    assert_journal_ok()


def test_a_stop_to_the_orphan_account_and_its_refusals(staff, floor: Floor):
    _play(floor, 2)
    terminal = floor.uth[0]
    assert terminal.post("/rounds", {"round_id": "sf", "seats": [uth_seat(1)]}).status_code == 201
    change = _propose_stop(staff["ana"], floor.pool_id, to="orphan")
    path = f"/pools/{floor.pool_id}/changes/{change['id']}/approve"
    _set_tables(staff["ana"], floor.pool_id, enabled=False)
    open_round = _post(staff["bob"], path)
    assert open_round.status_code == 409 and open_round.json()["error"]["code"] == "pool_round_open"
    award = terminal.post("/rounds/sf/result", STRAIGHT_FLUSH).json()["awards"][0]
    unpaid = _post(staff["bob"], path)
    assert unpaid.status_code == 409, unpaid.json()
    assert unpaid.json()["error"]["code"] == "pool_awards_unpaid"
    assert f"award {award['id']} (pending)" in unpaid.json()["error"]["message"]
    assert (
        _post(staff["sam"], f"/awards/{award['id']}/void", {"reason": "misread"}).status_code == 200
    )
    row = Pool.objects.get(pk=floor.pool_id)
    meter_cents, reserve_cents = row.meter_cents, row.reserve_units // U

    assert _post(staff["bob"], path).status_code == 200
    assert ParameterChange.objects.get(pk=change["id"]).status == "applied"
    balances = assert_journal_ok()["balances"][str(floor.pool_id)]
    # The orphans: the meter above the seed and the reserve; the seed back to the house.
    orphans = meter_cents - row.seed_cents + reserve_cents
    assert balances["orphan"] == orphans
    assert (balances["meter"], balances["reserve"], balances["moved"]) == (0, 0, 0)
    assert sum(balances.values()) == 0
    event = AuditEvent.objects.get(kind="pool.stopped")
    assert event.payload["disposition"] == {"to": "orphan"}
    assert event.payload["moved"] == {
        "meter_cents": meter_cents,
        "reserve_cents": reserve_cents,
        "orphans_cents": orphans,
        "seed_back_cents": row.seed_cents,
    }
    assert (event.payload["proposed_by"], event.payload["approved_by"]) == ("ana", "bob")


def test_a_stop_names_a_valid_disposition(staff):
    one, two = make_floor(), make_floor()
    for body, field in (
        ({"to": "pool"}, "to_pool"),
        ({"to": "pool", "to_pool": one.pool_id}, "to_pool"),
        ({"to": "pool", "to_pool": 999_999}, "to_pool"),
        ({"to": "orphan", "to_pool": two.pool_id}, "to_pool"),
    ):
        refused = _post(
            staff["ana"], f"/pools/{one.pool_id}/stop", {"reason": "x", "voluntary": False, **body}
        )
        assert refused.status_code == 400, refused.json()
        assert (refused.json()["error"]["code"], refused.json()["error"]["param"]) == (
            "invalid_disposition",
            field,
        )
    assert not ParameterChange.objects.exists()


def test_checkpoints_reconciliation_and_the_report_understand_a_stop(staff):
    """The routine run from a checkpoint taken before the stop, the scheduled reconciliation and
    each pool's report (the meter identity) after it; a status edited behind the journal's back
    is found."""
    from tables.audit import reconciliation
    from tables.audit.verification import keep_checkpoint, verify_full, verify_routine
    from tests.jackpot.tamper import superuser_sql

    stopped, heir = make_floor(), make_floor()
    _play(stopped, 2)
    assert keep_checkpoint(verify_full()) is not None
    _set_tables(staff["ana"], stopped.pool_id, enabled=False)
    change = _propose_stop(staff["ana"], stopped.pool_id, to="pool", to_pool=heir.pool_id)
    path = f"/pools/{stopped.pool_id}/changes/{change['id']}/approve"
    assert _post(staff["bob"], path).status_code == 200
    _play(heir, 1)

    routine = verify_routine()
    assert routine.ok and not routine.full, routine.problems
    stored = reconciliation.reconcile()
    assert stored.ok, stored.problems
    for pool in (stopped.pool_id, heir.pool_id):
        report = staff["ana"].get(f"/api/v1/pools/{pool}/report")
        assert report.status_code == 200, report.json()
        identity = report.json()["meter_identity"]
        assert identity["holds"], identity

    superuser_sql("UPDATE jackpot_pool SET status = 'active' WHERE id = %s", [stopped.pool_id])
    found = verify_full()
    assert not found.ok
    assert any(
        f"pool {stopped.pool_id}: status is 'active', the journal says 'stopped'" in problem
        for problem in found.problems
    ), found.problems


def test_the_pool_page_and_the_sign_page_say_the_status_in_french_and_english(floor: Floor):
    from tests.staff import signed_in

    auditor = signed_in(person("aude", "auditor"))
    page = auditor.get(f"/audit/pools/{floor.pool_id}/").content.decode()
    assert 'data-status="active"' in page and "État\u00a0: actif" in page
    from jackpot.pools.lifecycle import pool_suspend

    pool_suspend(pool_id=floor.pool_id, reason="panne du compteur", user=person("ana", "admin"))
    page = auditor.get(f"/audit/pools/{floor.pool_id}/").content.decode()
    assert 'data-status="suspended"' in page
    assert "État\u00a0: suspendu depuis le" in page and "panne du compteur" in page
    english = auditor.get(f"/audit/pools/{floor.pool_id}/?lang=en").content.decode()
    assert "Status: suspended since" in english

    sign = Client().get(f"/display/{floor.pool_id}/").content.decode()
    assert '"suspended": "SUSPENDU"' in sign
    assert (
        '"suspended": "SUSPENDED"'
        in Client().get(f"/display/{floor.pool_id}/?lang=en").content.decode()
    )


def test_a_cached_meter_of_another_status_is_never_served(staff, floor: Floor):
    """A meter part signed under the committed version but saying `suspended` for an active pool
    (a leaked key, a publisher's bug) is a forgery: the sign gets the database's status."""
    from jackpot.sign import display

    truth = _meter(floor.pool_id)
    assert truth["status"] == "active"
    committed = display._committed(floor.pool_id)
    assert committed is not None
    key = display._key(committed[2], floor.pool_id)
    meter_part = {name: truth[name] for name in ("pool", "amount_cents", "currency", "sequence")}
    lying = {**meter_part, "as_of": truth["as_of"], "status": "suspended"}
    display._redis().hset(key, "meter", display._signed(key, "meter", truth["sequence"], lying))
    assert _meter(floor.pool_id) == truth
