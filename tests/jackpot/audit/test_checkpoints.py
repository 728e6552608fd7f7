"""Checkpoints (compliance requirement 46): a routine run walks only what was added since the
newest checkpoint; a row edited after it is found by the next routine run, one edited before it
by the next full run; a checkpoint forged, edited or deleted without the journal's key is
reported, never trusted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.db import connection, transaction

from jackpot.audit import checkpoints, verification
from jackpot.audit.anchors import chain_keys as anchor_chain_keys
from jackpot.audit.anchors import read_anchors, write_anchor
from jackpot.awards.workflow import award_pay
from jackpot.models import (
    AuditChain,
    AuditEvent,
    Award,
    AwardStatus,
    Checkpoint,
    PaymentMethod,
    Transfer,
)
from jackpot.money import rows
from tables.audit.verification import keep_checkpoint, verify_full, verify_routine
from tests.jackpot.tamper import play_rounds, superuser_sql
from tests.staff import person

pytestmark = pytest.mark.django_db

EDIT = "UPDATE jackpot_transfer SET amount_cents = amount_cents + 100 WHERE id = %s"


def routine() -> tuple[bool, list[str], int]:
    report = verify_routine()
    keep_checkpoint(report)
    return report.ok, report.problems, report.new_events


@pytest.fixture
def checkpointed():
    """Two rounds played and a routine run passed: the newest checkpoint reaches them."""
    floor = play_rounds()
    ok, problems, _new = routine()
    assert ok, problems
    return floor


def _more(floor, prefix: str = "s") -> int:
    """Void the open round and play the same two again; the first new transfer's id."""
    first = Transfer.objects.order_by("-pk").values_list("pk", flat=True).first()
    floor.uth[0].post("/rounds/r-2/void", {"reason": "misdeal"})
    play_rounds(floor, prefix=prefix)
    return first + 1


def test_a_routine_run_walks_only_what_was_added_since_the_newest_checkpoint(checkpointed):
    newest = Checkpoint.objects.latest("pk")
    before = AuditEvent.objects.count()
    _more(checkpointed)
    added = AuditEvent.objects.count() - before

    report = verify_routine()
    assert report.ok, report.problems
    assert report.started_from == newest.pk and report.new_events == added
    assert report.events == AuditEvent.objects.count()  # counted from the first event
    # Nothing added since: nothing walked, nothing stored.
    keep_checkpoint(report)
    again = verify_routine()
    assert again.ok and again.new_events == 0 and keep_checkpoint(again) is None
    # And it carries the figures forward exactly: the full run from the first event agrees.
    full = verify_full()
    assert full.ok, full.problems
    assert full.state.balances == again.state.balances
    assert full.state.codes == again.state.codes
    assert full.state.projections["totals"] == again.state.projections["totals"]
    assert full.state.rounds["stakes"] == again.state.rounds["stakes"]


def test_an_edit_after_the_checkpoint_is_found_by_the_next_routine_run(checkpointed):
    first_new = _more(checkpointed)
    victim = Transfer.objects.filter(pk__gte=first_new).order_by("pk").first()
    superuser_sql(EDIT, [victim.pk])

    report = verify_routine()
    assert not report.ok and keep_checkpoint(report) is None
    assert (report.broken_chain, report.broken_sequence) == (
        victim.event.chain,
        victim.event.sequence,
    )
    assert "content does not match its hash" in report.problems[0]


def test_an_edit_before_the_checkpoint_is_the_full_runs_to_find(checkpointed):
    seed = Transfer.objects.get(pool_id=checkpointed.pool_id, code="pool_seed")
    superuser_sql(EDIT, [seed.pk])
    # The routine run starts after it: it does not read that event again (docs/operations.md).
    assert routine()[0] is True
    report = verify_full()
    assert not report.ok
    assert (report.broken_chain, report.broken_sequence) == (seed.event.chain, seed.event.sequence)


def test_an_award_still_open_is_compared_at_every_routine_run(checkpointed):
    # The four of a kind waits for a supervisor: the checkpoint carries it, so an edit of its
    # row is found by the next routine run even though no event touched it since.
    waiting = Award.objects.get(status=AwardStatus.PENDING)
    superuser_sql("UPDATE jackpot_award SET amount_cents = 1 WHERE id = %s", [waiting.pk])
    report = verify_routine()
    assert not report.ok
    assert any(p.startswith(f"award {waiting.pk}: amount_cents is 1") for p in report.problems)


def test_a_row_written_behind_the_journal_after_the_checkpoint_is_found(checkpointed):
    # A transfer added to an old event (the triggers refuse no INSERT, the key is not needed to
    # insert): its id is above the checkpoint's highest, and no event walked since wrote it.
    old = Transfer.objects.get(pool_id=checkpointed.pool_id, code="pool_seed")
    superuser_sql(
        "INSERT INTO jackpot_transfer (pool_id, event_id, code, debit_id, credit_id,"
        " amount_cents, created_at) SELECT pool_id, event_id, 'correction', credit_id, debit_id,"
        " 1, created_at FROM jackpot_transfer WHERE id = %s",
        [old.pk],
    )
    report = verify_routine()
    assert not report.ok
    assert any("transfers without an audit event walked" in p for p in report.problems)


def _newest_event() -> AuditEvent:
    return AuditEvent.objects.filter(chain=checkpoints.CHAIN).latest("sequence")


def test_a_forged_checkpoint_is_refused_and_the_walk_starts_from_the_one_before(checkpointed):
    """Someone without the key adds a checkpoint that says the journal ends later than it does
    and carries other balances: its event cannot be given a hash that verifies."""
    trusted = Checkpoint.objects.latest("pk")
    state = dict(trusted.state)
    state["balances"] = {pool: {**kinds, "meter": 0} for pool, kinds in state["balances"].items()}
    forged_sha = checkpoints.digest(state)
    head = AuditChain.objects.get(key=checkpoints.CHAIN)
    superuser_sql(
        'INSERT INTO jackpot_checkpoint (created_at, "full", state, sha256)'
        " VALUES (now(), false, %s, %s)",
        [json.dumps(state), forged_sha],
    )
    forged = Checkpoint.objects.latest("pk")
    payload = {"checkpoint": forged.pk, "sha256": forged_sha, "full": False}
    superuser_sql(
        "INSERT INTO jackpot_auditevent (chain, sequence, kind, actor, occurred_at, payload,"
        " prev_hash, hash) VALUES (%s, %s, %s, %s, now(), %s, %s, %s)",
        [
            checkpoints.CHAIN,
            head.sequence + 1,
            checkpoints.KIND,
            checkpoints.ACTOR,
            json.dumps(payload),
            head.head_hash,
            "f" * 64,
        ],
    )
    superuser_sql(
        "UPDATE jackpot_auditchain SET sequence = sequence + 1, head_hash = %s WHERE key = %s",
        ["f" * 64, checkpoints.CHAIN],
    )

    report = verify_routine()
    assert not report.ok and keep_checkpoint(report) is None
    assert report.started_from == trusted.pk  # not the forgery
    assert report.problems[0] == (
        f"chain {checkpoints.CHAIN} sequence {head.sequence + 1}: checkpoint refused: content"
        " does not match its hash"
    )
    assert report.broken_chain == checkpoints.CHAIN


def test_a_checkpoints_state_edited_in_place_is_refused(checkpointed):
    newest = Checkpoint.objects.latest("pk")
    superuser_sql(
        "UPDATE jackpot_checkpoint SET state = jsonb_set(state, '{transfer_id}', '999999')"
        " WHERE id = %s",
        [newest.pk],
    )
    report = verify_routine()
    assert not report.ok and report.started_from != newest.pk
    assert f"checkpoint {newest.pk}'s state does not match the SHA-256" in report.problems[0]


def test_a_deleted_checkpoint_is_reported_by_the_head_row_or_else_by_the_anchors(
    checkpointed, tmp_path
):
    _more(checkpointed)
    assert routine()[0]  # a second checkpoint
    write_anchor(Path(tmp_path))
    last = _newest_event()
    row = last.payload["checkpoint"]
    superuser_sql("DELETE FROM jackpot_auditevent WHERE id = %s", [last.pk])
    superuser_sql("DELETE FROM jackpot_checkpoint WHERE id = %s", [row])

    # The head row still names it: missing, and the chain no longer reaches its head.
    report = verify_routine()
    assert not report.ok
    assert f"sequence {last.sequence}: checkpoint refused: is missing" in report.problems[0]
    assert any("head row does not match" in p for p in report.problems)

    # The head row moved back too: the walk is consistent again, the anchors are not.
    superuser_sql(
        "UPDATE jackpot_auditchain SET sequence = %s, head_hash = %s WHERE key = %s",
        [last.sequence - 1, last.prev_hash, checkpoints.CHAIN],
    )
    assert verify_routine().ok  # from the checkpoint before: nothing hidden, only a longer walk
    anchors, unreadable = read_anchors(Path(tmp_path))
    assert len(anchors) == 1 and not unreadable
    report = verify_routine(anchors)
    assert not report.ok
    assert (report.broken_chain, report.broken_sequence) == (checkpoints.CHAIN, last.sequence)


def test_an_award_approved_at_once_is_not_carried_and_its_payment_is_still_checked(
    checkpointed, django_user_model
):
    # The full house is under the threshold: approved at once. The checkpoint does not carry it
    # (its creating event says all of it), so a club whose small awards wait to be paid does
    # not make every checkpoint longer; its payment, later, is checked all the same.
    full_house = Award.objects.get(kind="full_house")
    assert full_house.status == AwardStatus.APPROVED
    carried = Checkpoint.objects.latest("pk").state["projections"]["awards"]
    assert str(full_house.pk) not in carried
    assert str(Award.objects.get(status=AwardStatus.PENDING).pk) in carried

    cashier = person("cashier", "supervisor")
    award_pay(award_id=full_house.pk, user=cashier, method=PaymentMethod.CASH)
    assert verify_routine().ok
    superuser_sql(
        "UPDATE jackpot_award SET paid_at = paid_at - interval '1 hour' WHERE id = %s",
        [full_house.pk],
    )
    report = verify_routine()
    assert not report.ok
    assert any(p.startswith(f"award {full_house.pk}: paid_at is") for p in report.problems)


@pytest.mark.django_db(transaction=True)
def test_the_reader_ahead_reads_the_same_rows_in_the_same_snapshot():
    """A verification's own snapshot is read one batch ahead by a second connection that
    imports it: the same rows as reading in turn, and none committed after it began."""
    floor = play_rounds()
    chains = [(chain, 0) for chain in sorted(anchor_chain_keys())]
    with rows.snapshot(), rows.snapshot():  # as verify_full and the reconciliation nest it
        ahead = verification._Reader(chains)
        assert ahead.helper is not None  # a clean snapshot: read ahead
        play_rounds(floor, prefix="late")  # another connection's commit: not in this snapshot
        try:
            read_ahead = [list(ahead.batches(chain, 0)) for chain, _ in chains]
        finally:
            ahead.close()
        with connection.cursor() as cursor:
            in_turn = [
                list(verification._batches(cursor, "postgresql", chain, 0)) for chain, _ in chains
            ]
    assert read_ahead == in_turn and sum(len(b) for c in in_turn for b in c) > 0
    # A transaction that wrote rows reads in turn (an imported snapshot would not see them).
    with transaction.atomic():
        Checkpoint.objects.exists()
        superuser_sql("UPDATE jackpot_pool SET name = name WHERE id = %s", [floor.pool_id])
        assert verification._Reader(chains).helper is None
