"""Documented corrections (issue 39 item 4, compliance 55): a supervisor or a manager proposes a
correction of the meter, the reserve or an award's amount due, with its reason, the regulator's
reference and the evidence; another manager approves it; its money moves by `correction`
transfers in one `pool.corrected` event, exactly the amount, every other account unchanged.

Each refusal asserts what was not written."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from floor.amounts import amount_in_figures
from floor.slips import slip_rows
from jackpot.awards.workflow import award_approve, award_verify
from jackpot.models import AuditEvent, Award, ParameterChange, Pool, Transfer
from jackpot.money import ledger
from jackpot.reporting.liability import pool_liability
from jackpot.reporting.statements import liability_csv
from jackpot.selectors import payment_slip
from tables.club.sessions import close_session, open_session
from tables.models import SessionPool
from tests.conftest import Floor, assert_journal_ok, uth_play, uth_seat
from tests.floor.conftest import play_hit
from tests.staff import person, surveilled, token_client
from tests.winners import PAY, PAY_CASH

pytestmark = pytest.mark.django_db

U = 10_000
KINDS = (
    "stakes",
    "meter",
    "reserve",
    "house",
    "awards_pending",
    "payable",
    "paid",
    "orphan",
    "moved",
)


@pytest.fixture
def staff(django_user_model) -> dict[str, Client]:
    people = {
        "sue": person("sue", "supervisor"),
        "max": person("max", "manager"),
        "meg": person("meg", "manager"),
        "ada": person("ada", "admin"),
        "aud": person("aud", "auditor"),
    }
    return {name: token_client(user) for name, user in people.items()}


def balances(pool_id: int) -> dict[str, int]:
    """Each account of the pool, credits minus debits, from the transfers."""
    found = dict.fromkeys(KINDS, 0)
    for debit, credit, amount in Transfer.objects.filter(pool_id=pool_id).values_list(
        "debit__kind", "credit__kind", "amount_cents"
    ):
        found[debit] -= amount
        found[credit] += amount
    return found


def _post(client: Client, path: str, body: dict | None = None):
    return client.post(f"/api/v1{path}", body or {}, content_type="application/json")


def propose(client: Client, pool: int, **fields: object):
    body = {
        "target": "meter",
        "amount_cents": 2_500,
        "reason": "the meter board lost 25 euros of stakes during the fault",
        "reference": "ANJ-2026-0412",
        "evidence": "ticket INC-881, board log of 12 April",
        **fields,
    }
    return _post(client, f"/pools/{pool}/corrections", body)


def approve(client: Client, pool: int, change: int, note: str = "checked with the regulator"):
    return _post(client, f"/pools/{pool}/corrections/{change}/approve", {"note": note})


def _played(floor: Floor) -> None:
    """Three rounds' stakes on the meter and the reserve (each round opened, then voided: the
    meter and the reserve keep their shares)."""
    for n in range(3):
        opened = floor.uth[0].post("/rounds", {"round_id": f"r{n}", "seats": [uth_seat(1)]})
        assert opened.status_code == 201, opened.json()
        voided = floor.uth[0].post(f"/rounds/r{n}/void", {"reason": "misdeal"})
        assert voided.status_code == 200, voided.json()


def _corrected(pool_id: int) -> AuditEvent:
    return AuditEvent.objects.get(kind="pool.corrected", chain=f"pool-{pool_id}")


@pytest.mark.parametrize(
    ("target", "amount", "account"),
    [
        ("meter", 2_500, "meter"),
        ("meter", -700, "meter"),
        ("reserve", -100, "reserve"),
        ("reserve", 4_000, "reserve"),
    ],
)
def test_two_managers_move_exactly_the_amount(staff, floor: Floor, target, amount, account):
    _played(floor)
    pool_before = Pool.objects.get(pk=floor.pool_id)
    before = balances(floor.pool_id)

    proposed = propose(staff["sue"], floor.pool_id, target=target, amount_cents=amount)
    assert proposed.status_code == 201, proposed.json()
    body = proposed.json()
    assert (body["status"], body["target"], body["amount_cents"]) == ("proposed", target, amount)
    assert body["before"] == {
        "meter_cents": pool_before.meter_cents,
        "reserve_cents": pool_before.reserve_units // U,
    }
    assert balances(floor.pool_id) == before  # nothing moves until approved

    applied = approve(staff["max"], floor.pool_id, body["id"])
    assert applied.status_code == 200, applied.json()
    assert applied.json()["status"] == "applied"

    after = balances(floor.pool_id)
    assert after[account] == before[account] + amount
    assert after["house"] == before["house"] - amount
    assert {k: v for k, v in after.items() if k not in (account, "house")} == {
        k: v for k, v in before.items() if k not in (account, "house")
    }
    pool = Pool.objects.get(pk=floor.pool_id)
    if target == "meter":
        assert pool.meter_units == pool_before.meter_units + amount * U
        assert pool.meter_version == pool_before.meter_version + 1
        assert pool.reserve_units == pool_before.reserve_units
    else:
        assert pool.reserve_units == pool_before.reserve_units + amount * U
        assert pool.meter_units == pool_before.meter_units
    event = _corrected(floor.pool_id)
    assert set(event.payload) == {
        "pool",
        "change",
        "target",
        "award",
        "amount_cents",
        "reason",
        "reference",
        "evidence",
        "meter_after_cents",
        "reserve_after_cents",
        "proposed_by",
        "proposed_at",
        "approved_by",
        "note",
    }
    assert event.payload["amount_cents"] == amount and event.payload["award"] is None
    assert (event.payload["proposed_by"], event.payload["approved_by"]) == ("sue", "max")
    assert event.payload["meter_after_cents"] == pool.meter_cents
    assert event.payload["reserve_after_cents"] == pool.reserve_units // U
    assert [t.code for t in event.transfers.all()] == ["correction"]
    listed = staff["aud"].get(f"/api/v1/pools/{floor.pool_id}/corrections").json()
    assert [c["status"] for c in listed["results"]] == ["applied"]
    # The auditors' meter identity counts the meter's corrections, to the unit.
    report = staff["aud"].get(f"/api/v1/pools/{floor.pool_id}/report").json()
    assert report["meter_identity"]["holds"] is True, report["meter_identity"]
    assert report["meter_identity"]["meter_units"] == pool.meter_units
    assert_journal_ok()


def test_the_same_person_never_proposes_and_approves(staff, floor: Floor):
    proposed = propose(staff["max"], floor.pool_id).json()
    refused = approve(staff["max"], floor.pool_id, proposed["id"])
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "four_eyes"
    # A supervisor proposes, but approves nothing.
    by_supervisor = approve(staff["sue"], floor.pool_id, proposed["id"])
    assert by_supervisor.status_code == 403
    assert not AuditEvent.objects.filter(kind="pool.corrected").exists()
    assert ParameterChange.objects.get(pk=proposed["id"]).status == "proposed"


def test_an_admin_neither_proposes_nor_approves(staff, floor: Floor):
    assert propose(staff["ada"], floor.pool_id).status_code == 403
    proposed = propose(staff["sue"], floor.pool_id).json()
    assert approve(staff["ada"], floor.pool_id, proposed["id"]).status_code == 403
    # Nor through the admins' change endpoints: those decide configuration only.
    through_changes = _post(
        staff["ada"], f"/pools/{floor.pool_id}/changes/{proposed['id']}/reject", {"note": "no"}
    )
    assert through_changes.status_code == 404
    assert ParameterChange.objects.get(pk=proposed["id"]).status == "proposed"


@pytest.mark.parametrize("field", ["reason", "reference", "evidence"])
def test_a_correction_without_its_documents_is_400_naming_the_field(staff, floor: Floor, field):
    full = {
        "target": "meter",
        "amount_cents": 100,
        "reason": "a fault",
        "reference": "REF-1",
        "evidence": "ticket 1",
    }
    left_out = {k: v for k, v in full.items() if k != field}
    for body in (left_out, {**full, field: "   "}, {**full, field: ""}):
        response = _post(staff["sue"], f"/pools/{floor.pool_id}/corrections", body)
        assert response.status_code == 400, response.json()
        assert response.json()["error"]["param"] == field
    assert not ParameterChange.objects.filter(kind="pool.correction").exists()


def test_bad_targets_and_amounts_are_400(staff, floor: Floor):
    for fields, param in (
        ({"target": "stakes"}, "target"),
        ({"amount_cents": 0}, "amount_cents"),
        ({"amount_cents": 1.5}, "amount_cents"),
        ({"target": "award"}, "award"),
        ({"target": "meter", "award": 1}, "award"),
    ):
        response = propose(staff["sue"], floor.pool_id, **fields)
        assert response.status_code == 400, (fields, response.json())
        assert response.json()["error"]["param"] == param, fields
    assert not ParameterChange.objects.filter(kind="pool.correction").exists()


def test_a_lowering_below_zero_and_a_stopped_pool_are_409(staff, floor: Floor):
    meter_cents = Pool.objects.get(pk=floor.pool_id).meter_cents
    below = propose(staff["sue"], floor.pool_id, amount_cents=-(meter_cents + 1))
    assert below.status_code == 409 and below.json()["error"]["code"] == "correction_below_zero"
    reserve = propose(staff["sue"], floor.pool_id, target="reserve", amount_cents=-1)
    assert reserve.status_code == 409
    # Proposed while it fits, refused at approval once it no longer does.
    fits = propose(staff["sue"], floor.pool_id, amount_cents=-meter_cents).json()
    other = propose(staff["meg"], floor.pool_id, amount_cents=-1).json()
    assert approve(staff["max"], floor.pool_id, fits["id"]).status_code == 200
    late = approve(staff["max"], floor.pool_id, other["id"])
    assert late.status_code == 409 and late.json()["error"]["code"] == "correction_below_zero"
    assert AuditEvent.objects.filter(kind="pool.corrected").count() == 1
    Pool.objects.filter(pk=floor.pool_id).update(status="stopped")
    stopped = propose(staff["sue"], floor.pool_id, amount_cents=10)
    assert stopped.status_code == 409 and stopped.json()["error"]["code"] == "pool_stopped"


def test_a_corrected_award_is_approved_and_paid_its_corrected_amount(staff, floor: Floor):
    jackpot, _envy = play_hit(floor.uth[0])
    sue, max_user, meg = (
        person("sue2", "supervisor"),
        person("max3", "manager"),
        person("meg3", "manager"),
    )
    before = balances(floor.pool_id)
    raised = propose(
        staff["sue"], floor.pool_id, target="award", award=jackpot["id"], amount_cents=1_234
    ).json()
    assert raised["before"]["award_due_cents"] == jackpot["amount_cents"]
    assert approve(staff["max"], floor.pool_id, raised["id"]).status_code == 200
    mid = balances(floor.pool_id)
    assert mid["awards_pending"] == before["awards_pending"] + 1_234
    assert mid["house"] == before["house"] - 1_234
    award = Award.objects.get(pk=jackpot["id"])
    assert (award.corrected_cents, award.due_cents) == (1_234, jackpot["amount_cents"] + 1_234)
    shown = staff["sue"].get(f"/api/v1/awards?pool={floor.pool_id}").json()["results"]
    row = next(a for a in shown if a["id"] == jackpot["id"])
    assert (row["amount_cents"], row["corrected_cents"], row["due_cents"]) == (
        jackpot["amount_cents"],
        1_234,
        jackpot["amount_cents"] + 1_234,
    )

    award_verify(award_id=jackpot["id"], user=sue, note="video checked")
    surveilled(jackpot["id"])
    award_approve(award_id=jackpot["id"], user=max_user)
    # Corrected again once approved: the payable account moves.
    lowered = propose(
        staff["meg"], floor.pool_id, target="award", award=jackpot["id"], amount_cents=-34
    ).json()
    assert approve(staff["max"], floor.pool_id, lowered["id"]).status_code == 200
    paid = _post(token_client(meg), f"/awards/{jackpot['id']}/pay", PAY)
    assert paid.status_code == 200, paid.json()
    due = jackpot["amount_cents"] + 1_200
    assert Transfer.objects.get(award_id=jackpot["id"], code="award_paid").amount_cents == due
    after = balances(floor.pool_id)
    assert after["paid"] == before["paid"] + due
    assert after["awards_pending"] == before["awards_pending"] - jackpot["amount_cents"]
    assert after["payable"] == before["payable"]
    # Paid: no more correction.
    refused = propose(
        staff["sue"], floor.pool_id, target="award", award=jackpot["id"], amount_cents=1
    )
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "award_paid"
    # The payment slip prints what was paid: the amount due.
    rows = {row.key: row.value for row in slip_rows(payment_slip(jackpot["id"]), "en")}
    assert rows["amount"] == amount_in_figures(due, "EUR", "en")
    assert_journal_ok()


def test_an_award_is_never_corrected_to_nothing_nor_once_void(staff, floor: Floor):
    opened = floor.uth[0].post("/rounds", {"round_id": "fh", "seats": [uth_seat(1)]})
    assert opened.status_code == 201
    settled = (
        floor.uth[0]
        .post(
            "/rounds/fh/result",
            {
                "board": ["5c", "6c", "7c", "2s", "9h"],
                "dealer": ["Ac", "Qd"],
                "seats": [uth_play(1, "8c 9c")],
            },
        )
        .json()
    )
    (award,) = settled["awards"]  # a straight flush, 150,000 cents, pending
    nothing = propose(
        staff["sue"],
        floor.pool_id,
        target="award",
        award=award["id"],
        amount_cents=-award["amount_cents"],
    )
    assert nothing.status_code == 409
    assert nothing.json()["error"]["code"] == "award_due_not_positive"
    lowered = propose(
        staff["sue"], floor.pool_id, target="award", award=award["id"], amount_cents=-50_000
    ).json()
    assert approve(staff["max"], floor.pool_id, lowered["id"]).status_code == 200
    before = balances(floor.pool_id)
    voided = _post(staff["sue"], f"/awards/{award['id']}/void", {"reason": "misread the cards"})
    assert voided.status_code == 200, voided.json()
    after = balances(floor.pool_id)
    assert after["awards_pending"] == before["awards_pending"] - 100_000
    assert after["house"] == before["house"] + 100_000
    codes = sorted(
        Transfer.objects.filter(award_id=award["id"], event__kind="award.void").values_list(
            "code", "amount_cents"
        )
    )
    assert codes == [("award_void_house", 150_000), ("correction", 50_000)]
    void = propose(staff["sue"], floor.pool_id, target="award", award=award["id"], amount_cents=1)
    assert void.status_code == 409 and void.json()["error"]["code"] == "award_void"
    assert_journal_ok()


def test_a_proposal_is_rejected_or_withdrawn_by_the_money_deciders(staff, floor: Floor):
    first = propose(staff["sue"], floor.pool_id).json()
    second = propose(staff["sue"], floor.pool_id).json()
    assert (
        _post(
            staff["meg"], f"/pools/{floor.pool_id}/corrections/{second['id']}/withdraw"
        ).status_code
        == 403
    )
    withdrawn = _post(staff["sue"], f"/pools/{floor.pool_id}/corrections/{second['id']}/withdraw")
    assert withdrawn.status_code == 200 and withdrawn.json()["status"] == "withdrawn"
    rejected = _post(
        staff["meg"],
        f"/pools/{floor.pool_id}/corrections/{first['id']}/reject",
        {"note": "no reference on file"},
    )
    assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
    assert approve(staff["max"], floor.pool_id, first["id"]).status_code == 409
    kinds = sorted(
        AuditEvent.objects.filter(chain=ledger.pool_chain(floor.pool_id))
        .filter(kind__startswith="pool.change_")
        .values_list("kind", flat=True)
    )
    assert kinds == [
        "pool.change_proposed",
        "pool.change_proposed",
        "pool.change_rejected",
        "pool.change_withdrawn",
    ]
    listed = staff["max"].get(f"/api/v1/pools/{floor.pool_id}/corrections").json()
    assert [c["status"] for c in listed["results"]] == ["withdrawn", "rejected"]
    assert not AuditEvent.objects.filter(kind="pool.corrected").exists()


def test_a_full_house_paid_cash_is_unaffected(staff, floor: Floor):
    """An award never corrected is approved and paid its amount, as ever."""
    opened = floor.uth[0].post("/rounds", {"round_id": "fh", "seats": [uth_seat(1)]})
    assert opened.status_code == 201
    settled = (
        floor.uth[0]
        .post(
            "/rounds/fh/result",
            {
                "board": ["Kh", "2h", "2d", "7s", "9c"],
                "dealer": ["Ac", "Qd"],
                "seats": [uth_play(1, "Kd Ks")],
            },
        )
        .json()
    )
    (award,) = settled["awards"]
    paid = _post(staff["sue"], f"/awards/{award['id']}/pay", PAY_CASH)
    assert paid.status_code == 200, paid.json()
    assert Transfer.objects.get(award_id=award["id"], code="award_paid").amount_cents == 5_000


def test_the_liability_shows_the_periods_corrections_and_rolls_forward(staff, floor: Floor):
    jackpot, _envy = play_hit(floor.uth[0])
    pool = Pool.objects.get(pk=floor.pool_id)
    start = timezone.now()
    opening = pool_liability(pool, at=start, start=start)
    for fields in (
        {"amount_cents": 2_500},
        {"target": "reserve", "amount_cents": 300},
        {"target": "award", "award": jackpot["id"], "amount_cents": 777},
    ):
        change = propose(staff["sue"], floor.pool_id, **fields).json()
        assert approve(staff["max"], floor.pool_id, change["id"]).status_code == 200
    closing = pool_liability(pool, at=timezone.now(), start=start)
    corrections = closing.period.corrections
    assert (corrections.count, corrections.meter_cents, corrections.reserve_cents) == (
        3,
        2_500,
        300,
    )
    assert (corrections.pending_cents, corrections.payable_cents) == (777, 0)
    # The roll-forward: what is owed moved by the period's corrections, to the cent.
    assert closing.owed_cents == opening.owed_cents + 2_500 + 300 + 777
    assert closing.pending.amount_cents == opening.pending.amount_cents + 777
    figures = dict(
        line.split(",", 1) for line in liability_csv(closing).decode().splitlines()[1:-1]
    )
    assert figures["corrections_meter_cents"] == "2500"
    assert figures["corrections_reserve_cents"] == "300"
    assert figures["corrections_pending_cents"] == "777"


def test_the_history_and_the_auditors_page_show_the_corrections(staff, floor: Floor):
    _played(floor)
    meter = propose(staff["sue"], floor.pool_id, amount_cents=2_500).json()
    assert approve(staff["max"], floor.pool_id, meter["id"]).status_code == 200
    reserve = propose(staff["sue"], floor.pool_id, target="reserve", amount_cents=40).json()
    assert approve(staff["max"], floor.pool_id, reserve["id"]).status_code == 200

    history = staff["aud"].get(f"/api/v1/pools/{floor.pool_id}/history").json()
    listed = [(c["target"], c["amount_cents"], c["reference"]) for c in history["corrections"]]
    assert listed == [("meter", 2_500, "ANJ-2026-0412"), ("reserve", 40, "ANJ-2026-0412")]
    (today,) = history["meter"]
    assert today["corrections_cents"] == 2_500
    # The day's change is the stakes' shares and the correction together, to the cent.
    assert today["closing_cents"] == Pool.objects.get(pk=floor.pool_id).meter_cents

    auditor = person("ann", "auditor")
    page = Client()
    page.force_login(auditor)
    shown = page.get(f"/audit/pools/{floor.pool_id}/?lang=en")
    assert shown.status_code == 200
    body = shown.content.decode()
    assert 'id="corrections-table"' in body and "Documented corrections" in body
    assert "Regulator&#x27;s reference" in body or "Regulator's reference" in body


def test_a_sessions_register_8_ter_counts_its_meter_corrections(staff, floor: Floor):
    """The contract with the club's sessions (tables.club.snapshot): the `pool.corrected` events
    of a session with target `meter`, their signed `amount_cents` summed."""
    ana = person("ana-session", "supervisor")
    session = open_session(user=ana)
    for fields in (
        {"amount_cents": 2_500},
        {"amount_cents": -400},
        {"target": "reserve", "amount_cents": 70},  # not the meter's: not counted
    ):
        change = propose(staff["sue"], floor.pool_id, **fields).json()
        assert approve(staff["max"], floor.pool_id, change["id"]).status_code == 200
    close_session(session_id=session.pk, user=ana)
    shown = SessionPool.objects.get(session=session, pool_id=floor.pool_id)
    assert (shown.corrections, shown.corrections_cents) == (2, 2_100)
    assert shown.displayed_cents == Pool.objects.get(pk=floor.pool_id).meter_cents
