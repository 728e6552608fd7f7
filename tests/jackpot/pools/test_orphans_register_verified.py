"""The register of orphans verified line by line (issue 40 follow-up, compliance 58): an SQL edit
of any column of an `OrphanEntry` row, by the service's role, is reported by the journal's
verification (`tables.audit.verification.verify_full`), for a line open, recovered and final.
Each edit is undone (a savepoint) before the next."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.db import connection, transaction

from jackpot.models import OrphanEntry, Pool
from jackpot.pools import lifecycle, orphans
from jackpot.pools.corrections import correction_approve, correction_propose
from tables.audit.verification import verify_full
from tables.models import Table
from tables.services import table_update
from tests.conftest import make_floor
from tests.staff import person

pytestmark = pytest.mark.django_db

PARIS = ZoneInfo("Europe/Paris")


def at(day: str, hour: int = 12) -> datetime:
    return datetime.fromisoformat(day).replace(hour=hour, tzinfo=PARIS)


@pytest.fixture
def cast(django_user_model) -> dict:
    return {
        "ana": person("ana", "admin"),
        "bob": person("bob", "admin"),
        "max": person("max", "manager"),
        "meg": person("meg", "manager"),
    }


def _stopped_to_orphans(cast: dict) -> int:
    """A pool with 50,000 cents above its seed and 7,000 on its reserve, stopped to orphans."""
    floor = make_floor(uth_tables=1, seed_cents=100_000)
    for target, amount in (("meter", 50_000), ("reserve", 7_000)):
        change = correction_propose(
            pool_id=floor.pool_id,
            target=target,
            award_id=None,
            amount_cents=amount,
            reason="figures of the test",
            reference="EX-1",
            evidence="the test",
            user=cast["max"],
        )
        correction_approve(pool_id=floor.pool_id, change_id=change.pk, user=cast["meg"])
    for table in Table.objects.filter(pool_id=floor.pool_id):
        table_update(table_id=table.pk, changes={"enabled": False}, actor="test")
    change = lifecycle.pool_stop_propose(
        pool_id=floor.pool_id,
        to="orphan",
        to_pool=None,
        reason="panne",
        user=cast["ana"],
        voluntary=False,
    )
    lifecycle.pool_stop_approve(pool_id=floor.pool_id, change_id=change.pk, user=cast["bob"])
    return floor.pool_id


def _edits(recovered: OrphanEntry, final: OrphanEntry, open_: OrphanEntry, heir: int) -> list:
    """(the line edited, its SET clause): every column of each kind of line."""
    return [
        (open_, f"pool_id = {heir}"),
        (open_, f"change_id = {recovered.change_id}"),
        (open_, "stopped_at = stopped_at - interval '1 second'"),
        (open_, "orphans_cents = orphans_cents + 1"),
        (open_, "deadline = deadline + interval '1 day'"),
        (open_, f"stopped_event_id = {recovered.stopped_event_id}"),
        (open_, "recovered_at = now()"),
        (open_, f"recovered_into_id = {heir}"),
        (open_, f"recovery_id = {recovered.recovery_id}"),
        (open_, "final_at = now()"),
        (open_, f"closed_event_id = {final.closed_event_id}"),
        (recovered, "recovered_at = recovered_at + interval '1 second'"),
        (recovered, f"recovered_into_id = {final.pk}"),
        (recovered, f"recovery_id = {recovered.change_id}"),
        (recovered, "closed_event_id = NULL"),
        (recovered, "recovered_at = NULL, final_at = recovered_at"),
        (
            recovered,
            "recovered_at = NULL, recovered_into_id = NULL, recovery_id = NULL, "
            "closed_event_id = NULL",
        ),
        (final, "final_at = final_at - interval '1 day'"),
        (final, f"closed_event_id = {recovered.closed_event_id}"),
        (final, "final_at = NULL, recovered_at = final_at"),
        (final, "final_at = NULL, closed_event_id = NULL"),
    ]


def _reported(line: OrphanEntry, edit: str, report: Callable) -> list[str]:
    saved = transaction.savepoint()
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE jackpot_orphanentry SET {edit} WHERE pool_id = %s", [line.pk])
        return list(report().problems)
    finally:
        transaction.savepoint_rollback(saved)


def test_an_sql_edit_of_any_column_of_the_register_is_reported(cast):
    with time_machine.travel(at("2027-09-01"), tick=False):
        heir = make_floor(uth_tables=1).pool_id
        recovered_id = _stopped_to_orphans(cast)
        final_id = _stopped_to_orphans(cast)
    with time_machine.travel(at("2027-10-01"), tick=False):
        proposed = orphans.orphans_recover_propose(
            pool_id=recovered_id, to_pool=heir, reason="report", user=cast["max"]
        )
        orphans.orphans_recover_approve(
            pool_id=recovered_id, change_id=proposed.pk, user=cast["meg"]
        )
    with time_machine.travel(at("2027-11-01", 0) + timedelta(minutes=1), tick=False):
        assert orphans.orphans_final() == [final_id]
    with time_machine.travel(at("2027-11-02"), tick=False):
        open_id = _stopped_to_orphans(cast)  # the next season's: open until 1 November 2028
        lines = {line.pk: line for line in OrphanEntry.objects.all()}
        recovered, final, open_ = lines[recovered_id], lines[final_id], lines[open_id]
        assert (recovered.recovered_into_id, recovered.final_at) == (heir, None)
        assert (final.recovered_at, final.final_at is not None) == (None, True)
        assert (open_.closed_event_id, open_.orphans_cents) == (None, 57_000)
        assert Pool.objects.get(pk=open_id).status == "stopped"
        assert verify_full().ok
        missed = []
        for line, edit in _edits(recovered, final, open_, heir):
            problems = _reported(line, edit, verify_full)
            # The line's pool, or the pool it was moved to (`pool_id`): nothing else failed.
            if not any(problem.startswith("orphans of pool ") for problem in problems):
                missed.append((line.pk, edit, problems))
        assert missed == []
        assert verify_full().ok  # every edit undone
