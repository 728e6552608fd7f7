"""Names as they were when used (issue 37 item 6): the verification resolves who acted by the
name that person held when the event was written, not by every name anyone ever held.

The insider holds SQL as the service's role and one admin account, which renames staff as the
admin may (`jackpot.staff.accounts.staff_update`, a `staff.changed` event each). Each attack edits a
row so that it names, in today's names, what the journal said in the names of its day, and the
verification (full, and routine from a checkpoint that carries the names' history) reports it;
the same renames done without the edit verify.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import transaction

from jackpot.awards.workflow import award_approve, award_verify
from jackpot.models import AuditEvent, Award, AwardStatus, StaffToken, SurveillanceReview
from jackpot.money import ledger
from jackpot.staff.accounts import snapshot, staff_token_issue, staff_update
from jackpot.staff.roles import role_group
from tables.audit.verification import keep_checkpoint, verify_full, verify_routine
from tests.jackpot.tamper import play_rounds, superuser_sql
from tests.staff import person, surveilled

pytestmark = pytest.mark.django_db

ADMIN = "user:root"  # the insider's own admin account, as the admin's change form names it


def rename(user: User, to: str) -> None:
    """The admin's rename of `user`, as the admin site does it."""
    staff_update(subject=user, values={"username": to}, actor=ADMIN)
    user.refresh_from_db()


def problems() -> list[str]:
    """The full run's problems, and a routine run's from the newest checkpoint (stored here when
    the run passes): both must agree that there are none, or both find the same award's."""
    full = verify_full()
    routine = verify_routine()
    keep_checkpoint(routine)
    assert bool(full.problems) == bool(routine.problems), (full.problems, routine.problems)
    return full.problems + routine.problems


@pytest.fixture
def quads(db):
    """The four of a kind, verified by ana and approved by bob; carl is a third supervisor.
    A checkpoint is stored once it is approved: what follows is a routine run's to find too."""
    play_rounds()
    people = {name: person(name, "supervisor") for name in ("ana", "bob", "carl")}
    award = Award.objects.get(kind="four_of_a_kind")
    award_verify(award_id=award.pk, user=people["ana"], note="video checked")
    award_approve(award_id=award.pk, user=people["bob"])
    assert problems() == []
    return award, people


def test_two_accounts_that_swapped_names_are_not_interchangeable(quads):
    """ana and bob swap names (ana -> tmp, bob -> ana, tmp -> bob): the award, verified by the
    account now called bob and approved by the one now called ana, verifies. The insider then
    swaps the two accounts on the row by SQL: it now says verified by `ana`, approved by `bob`,
    the very names of the events. Before the fix both names were each other's old names, and
    the row passed."""
    award, people = quads
    ana, bob = people["ana"], people["bob"]
    rename(ana, "tmp")
    rename(bob, "ana")
    rename(ana, "bob")
    assert (ana.username, bob.username) == ("bob", "ana")
    assert problems() == []
    events = AuditEvent.objects.count()

    superuser_sql(
        "UPDATE jackpot_award SET verified_by_id = %s, approved_by_id = %s WHERE id = %s",
        [bob.pk, ana.pk, award.pk],
    )
    row = Award.objects.values("verified_by__username", "approved_by__username").get(pk=award.pk)
    assert row == {"verified_by__username": "ana", "approved_by__username": "bob"}

    found = problems()
    assert any(p.startswith(f"award {award.pk}: verified_by is 'ana'") for p in found), found
    assert any(p.startswith(f"award {award.pk}: approved_by is 'bob'") for p in found), found
    assert AuditEvent.objects.count() == events  # the verification wrote nothing


def test_a_verifier_edited_by_sql_is_found_after_four_renames(quads):
    """ana verified. Four renames later (ana -> x, x -> y, carl -> x, x -> z) carl's account is
    `z`, whose earlier names include `x`, a name ana's account once held: the closure of renames
    took `z` for one of ana's names, and an award the insider set to carl's account passed.
    ana's own renames still verify."""
    award, people = quads
    ana, carl = people["ana"], people["carl"]
    rename(ana, "x")
    assert problems() == []  # a checkpoint mid-way: the next routine run carries the names
    rename(ana, "y")
    rename(carl, "x")
    rename(carl, "z")
    assert problems() == []

    superuser_sql("UPDATE jackpot_award SET verified_by_id = %s WHERE id = %s", [carl.pk, award.pk])
    found = problems()
    assert any(p.startswith(f"award {award.pk}: verified_by is 'z'") for p in found), found
    assert Award.objects.get(pk=award.pk).status == AwardStatus.APPROVED  # nothing else moved


def test_a_legitimate_rename_of_a_token_holder_is_no_problem(quads):
    """ana holds a staff token; the admin renames her (a legitimate change with its event): the
    token is still hers, and the journal verifies (it reported the token before the fix). A
    token moved by SQL to bob, after the two swapped names so that bob's account now bears the
    name the issuing event gave, is reported."""
    _award, people = quads
    ana, bob = people["ana"], people["bob"]
    staff_token_issue(user=ana, revoke_others=False, actor="test")
    token = StaffToken.objects.get(user=ana)
    rename(ana, "anna")
    assert problems() == []

    rename(bob, "ana")  # the name ana's token was issued under, now bob's
    assert problems() == []
    superuser_sql("UPDATE jackpot_stafftoken SET user_id = %s WHERE id = %s", [bob.pk, token.pk])
    found = problems()
    assert f"staff token {token.pk}: the row's user differ from its events" in found, found


def test_a_name_given_after_the_step_does_not_reach_back(quads):
    """A name given to another account after the step is not the step's: carl takes the name
    `ana` left (ana -> anna, carl -> ana) and the row moved to carl by SQL names `ana`, as the
    verification's event does: reported."""
    award, people = quads
    ana, carl = people["ana"], people["carl"]
    rename(ana, "anna")
    rename(carl, "ana")
    assert problems() == []
    superuser_sql("UPDATE jackpot_award SET verified_by_id = %s WHERE id = %s", [carl.pk, award.pk])
    found = problems()
    assert any(p.startswith(f"award {award.pk}: verified_by is 'ana'") for p in found), found


def test_names_swapped_by_sql_do_not_hide_another_account_on_the_row(quads):
    """Without any event: the insider renames ana's account away and carl's to `ana` by SQL,
    then puts carl's account on the row. The row's name is the journal's; its account is not
    the one the events showed holding `ana` (their snapshots give its id): reported."""
    award, people = quads
    ana, carl = people["ana"], people["carl"]
    superuser_sql("UPDATE auth_user SET username = 'ana-old' WHERE id = %s", [ana.pk])
    superuser_sql("UPDATE auth_user SET username = 'ana' WHERE id = %s", [carl.pk])
    superuser_sql("UPDATE jackpot_award SET verified_by_id = %s WHERE id = %s", [carl.pk, award.pk])
    found = problems()
    assert any(p.startswith(f"award {award.pk}: verified_by is 'ana'") for p in found), found


def test_a_review_moved_to_the_account_that_took_its_reviewers_name_is_found(db):
    """Surveillance's sam reviews the four of a kind, is renamed (the review still verifies),
    and carl takes the name `sam`; the review's row moved by SQL to carl names `sam`, as its
    event does: reported."""
    play_rounds()
    award = Award.objects.get(kind="four_of_a_kind")
    surveilled(award.pk, by="sam")
    sam, carl = User.objects.get(username="sam"), person("carl", "surveillance")
    rename(sam, "samuel")
    rename(carl, "sam")
    assert problems() == []
    review = SurveillanceReview.objects.get(award=award)
    superuser_sql(
        "UPDATE jackpot_surveillancereview SET reviewer_id = %s WHERE id = %s", [carl.pk, review.pk]
    )
    found = problems()
    assert any(p.startswith(f"review {review.pk}: the row's by differ") for p in found), found


def _without_id(user: User) -> dict[str, object]:
    return {name: value for name, value in snapshot(user).items() if name != "id"}


def test_events_written_before_ids_still_resolve_names_in_time(db):
    """A journal written before snapshots gave ids: the accounts' roles and renames are events
    that name them only. The swap (ana -> tmp, bob -> ana, tmp -> bob) is resolved by the names'
    history alone: the legitimate rows verify, the rows swapped by SQL do not."""
    play_rounds()
    people = {}
    for name in ("ana", "bob"):
        people[name] = User.objects.create(username=name)
        with transaction.atomic():
            before = _without_id(people[name])
            people[name].groups.add(role_group("supervisor"))
            ledger.record(
                chain=ledger.ADMIN_CHAIN,
                kind="staff.changed",
                actor="test",
                payload={"user": name, "before": before, "after": _without_id(people[name])},
            )
    ana, bob = people["ana"], people["bob"]
    award = Award.objects.get(kind="four_of_a_kind")
    award_verify(award_id=award.pk, user=ana, note="video checked")
    award_approve(award_id=award.pk, user=bob)
    for user, to in ((ana, "tmp"), (bob, "ana"), (ana, "bob")):
        with transaction.atomic():
            before = _without_id(user)
            user.username = to
            user.save(update_fields=["username"])
            ledger.record(
                chain=ledger.ADMIN_CHAIN,
                kind="staff.changed",
                actor=ADMIN,
                payload={"user": to, "before": before, "after": _without_id(user)},
            )
    staff_events = AuditEvent.objects.filter(kind="staff.changed")
    assert not any("id" in event.payload["after"] for event in staff_events)
    assert problems() == []

    superuser_sql(
        "UPDATE jackpot_award SET verified_by_id = %s, approved_by_id = %s WHERE id = %s",
        [bob.pk, ana.pk, award.pk],
    )
    found = problems()
    assert any(p.startswith(f"award {award.pk}: verified_by is 'ana'") for p in found), found
    assert any(p.startswith(f"award {award.pk}: approved_by is 'bob'") for p in found), found
