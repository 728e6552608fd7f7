"""A documented correction against one insider (compliance 55): a manager with every money role
and SQL as the service's database role, but not the journal's key, cannot correct the meter
alone, nor make a correction's money or an award's corrected amount say other than the journal.

- the same person proposing and approving is refused (403 `four_eyes`), also when the proposal's
  row names someone else as its proposer (the authentic proposal event decides);
- a proposal row edited by SQL (its amount) is never applied (409 `change_unexplained`);
- the approver shows a fresh second-factor code;
- an SQL edit of `Award.corrected_cents` is reported by the journal's verification, and one of a
  correction transfer's amount by the chain's HMAC."""

from __future__ import annotations

import pytest
from django.db import connection

from core.errors import ApiError
from jackpot.models import AuditEvent, Award, ParameterChange, Pool, Transfer
from jackpot.pools import corrections
from jackpot.staff.second_factor import present
from tables.audit.verification import verify_full
from tests.conftest import make_floor
from tests.floor.conftest import play_hit
from tests.jackpot.tamper import superuser_sql
from tests.staff import code, enrolled, person, signed_in

pytestmark = pytest.mark.django_db


def _sql(statement: str, *params: object) -> None:
    """SQL as the service's own role can write it (no trigger gone around)."""
    with connection.cursor() as cursor:
        cursor.execute(statement, list(params))


def _propose(user, pool: int, **fields: object) -> ParameterChange:
    asked = {
        "target": "meter",
        "award_id": None,
        "amount_cents": 100_000,
        "reason": "meter board fault",
        "reference": "ANJ-1",
        "evidence": "ticket 7",
        **fields,
    }
    return corrections.correction_propose(pool_id=pool, user=user, **asked)  # type: ignore[arg-type]


def _unchanged(pool: int) -> tuple[int, int, int, int]:
    row = Pool.objects.get(pk=pool)
    moved = AuditEvent.objects.filter(kind="pool.corrected").count()
    return row.meter_units, row.reserve_units, Transfer.objects.count(), moved


def test_one_manager_cannot_correct_alone_even_by_editing_the_proposal(db):
    floor = make_floor()
    max_user, meg = person("max", "manager"), person("meg", "manager")
    before = _unchanged(floor.pool_id)

    change = _propose(max_user, floor.pool_id)
    with pytest.raises(ApiError) as same:
        corrections.correction_approve(pool_id=floor.pool_id, change_id=change.pk, user=max_user)
    assert (same.value.status_code, same.value.code) == (403, "four_eyes")

    # The row says meg proposed it: the journal's proposal event says max did.
    _sql("UPDATE jackpot_parameterchange SET proposed_by_id = %s WHERE id = %s", meg.pk, change.pk)
    with pytest.raises(ApiError) as forged:
        corrections.correction_approve(pool_id=floor.pool_id, change_id=change.pk, user=max_user)
    assert forged.value.code in ("four_eyes", "change_unexplained")
    assert forged.value.status_code in (403, 409)
    assert _unchanged(floor.pool_id) == before

    # Nor does a row inserted by SQL, with meg as its proposer and no event, ever apply.
    _sql(
        "INSERT INTO jackpot_parameterchange (kind, pool_id, changes, before, reason, status,"
        " proposed_by_id, proposed_at, decision_note) VALUES ('pool.correction', %s, %s, '{}',"
        " 'forged', 'proposed', %s, now(), '')",
        floor.pool_id,
        '{"target": "meter", "award": null, "amount_cents": 500000, "reference": "x",'
        ' "evidence": "y"}',
        meg.pk,
    )
    inserted = ParameterChange.objects.get(reason="forged")
    with pytest.raises(ApiError) as unexplained:
        corrections.correction_approve(pool_id=floor.pool_id, change_id=inserted.pk, user=max_user)
    assert unexplained.value.code == "change_unexplained"
    assert _unchanged(floor.pool_id) == before


def test_a_proposal_whose_amount_is_edited_is_never_applied(db):
    floor = make_floor()
    sue, max_user = person("sue", "supervisor"), person("max", "manager")
    change = _propose(sue, floor.pool_id, amount_cents=100)
    _sql(
        "UPDATE jackpot_parameterchange SET changes = jsonb_set(changes, '{amount_cents}', "
        "'900000') WHERE id = %s",
        change.pk,
    )
    before = _unchanged(floor.pool_id)
    with pytest.raises(ApiError) as refused:
        corrections.correction_approve(pool_id=floor.pool_id, change_id=change.pk, user=max_user)
    assert refused.value.code == "change_unexplained"
    assert _unchanged(floor.pool_id) == before


def test_an_admin_with_every_flag_neither_proposes_nor_approves(db):
    floor = make_floor()
    root = person("root", "admin", "auditor", is_staff=True, is_superuser=True)
    with pytest.raises(ApiError) as proposing:
        _propose(root, floor.pool_id)
    assert proposing.value.code in ("separation_of_duties", "permission_denied")
    change = _propose(person("sue", "supervisor"), floor.pool_id)
    with pytest.raises(ApiError) as approving:
        corrections.correction_approve(pool_id=floor.pool_id, change_id=change.pk, user=root)
    assert approving.value.code in ("separation_of_duties", "permission_denied")
    # A supervisor given the manager's group by SQL, behind the journal, acts with no power.
    sam = person("sam", "supervisor")
    _sql(
        "INSERT INTO auth_user_groups (user_id, group_id) SELECT %s, id FROM auth_group"
        " WHERE name = 'manager'",
        sam.pk,
    )
    with pytest.raises(ApiError) as unexplained:
        corrections.correction_approve(pool_id=floor.pool_id, change_id=change.pk, user=sam)
    assert (unexplained.value.status_code, unexplained.value.code) == (403, "permission_denied")
    assert ParameterChange.objects.get(pk=change.pk).status == "proposed"


def test_the_approver_shows_a_fresh_code(settings, db):
    settings.STAFF_SECOND_FACTOR_REQUIRED = True
    floor = make_floor()
    sue, max_user = enrolled("sue", "supervisor"), enrolled("max", "manager")
    change = _propose(sue, floor.pool_id)
    with pytest.raises(ApiError) as absent:
        corrections.correction_approve(pool_id=floor.pool_id, change_id=change.pk, user=max_user)
    assert absent.value.code == "second_factor_code_required"
    presence = present(max_user, code(max_user))
    corrections.correction_approve(
        pool_id=floor.pool_id, change_id=change.pk, user=max_user, presence=presence
    )
    assert AuditEvent.objects.filter(kind="pool.corrected").count() == 1


def test_the_verification_reports_an_edited_correction(db):
    floor = make_floor()
    jackpot, _ = play_hit(floor.uth[0])
    sue, max_user = person("sue", "supervisor"), person("max", "manager")
    change = _propose(sue, floor.pool_id, target="award", award_id=jackpot["id"], amount_cents=500)
    corrections.correction_approve(pool_id=floor.pool_id, change_id=change.pk, user=max_user)
    assert verify_full().ok

    # The award's corrected amount raised by SQL: what it would be paid is not the journal's.
    _sql("UPDATE jackpot_award SET corrected_cents = 50000 WHERE id = %s", jackpot["id"])
    report = verify_full()
    assert not report.ok
    assert any(
        f"award {jackpot['id']}: corrected_cents is 50000, the journal says 500" in problem
        for problem in report.problems
    ), report.problems
    _sql("UPDATE jackpot_award SET corrected_cents = 500 WHERE id = %s", jackpot["id"])
    assert verify_full().ok

    # The correction transfer's amount edited (past the append-only trigger): the HMAC breaks.
    moved = Transfer.objects.get(code="correction")
    superuser_sql("UPDATE jackpot_transfer SET amount_cents = 5 WHERE id = %s", [moved.pk])
    report = verify_full()
    assert not report.ok
    assert report.broken_chain == f"pool-{floor.pool_id}"
    assert any("content does not match its hash" in p for p in report.problems), report.problems
    assert Award.objects.get(pk=jackpot["id"]).corrected_cents == 500


def test_the_admin_site_decides_no_correction(db):
    floor = make_floor()
    root = person("root", "admin", "auditor", is_staff=True, is_superuser=True)
    change = _propose(person("sue", "supervisor"), floor.pool_id)
    for action in ("approve", "reject"):
        page = signed_in(root).post(
            "/admin/jackpot/parameterchange/",
            {"action": action, "_selected_action": [change.pk]},
            follow=True,
        )
        assert "done" not in page.content.decode(), action
    assert ParameterChange.objects.get(pk=change.pk).status == "proposed"
    assert not AuditEvent.objects.filter(kind="pool.corrected").exists()
