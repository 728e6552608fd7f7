"""The journal check is split by layer: jackpot verifies its journal alone, the tables add the
cross-check of the `stakes` account against the rounds' seat bets. Users still get one check:
a tampered round stake is reported by the command and by the API exactly as before the split."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from jackpot.audit import verification as journal
from jackpot.money.ledger import table_chain
from tables.audit.verification_jobs import verification_run
from tables.models import Round, RoundSeat, Table
from tests.conftest import uth_seat
from tests.staff import person, token_client

pytestmark = pytest.mark.django_db

PROBLEM = "pool {pool}: stakes account = -stakes of rounds not voided: -1000 != -500"
#: The seat's row no longer says what the round's opening event says (tables.audit.records).
BETS = "round {round} (chain table-{table} sequence 1): the row's bets differ from its events"


def problems(floor) -> list[str]:
    found = Round.objects.get(round_id="r-1")
    return [
        PROBLEM.format(pool=floor.pool_id),
        BETS.format(round=found.pk, table=found.table_id),
    ]


@pytest.fixture
def tampered(floor):
    """Given a round with two progressive stakes, when one seat's stake is lowered behind the
    service's back (the round's rows are the tables', not the append-only journal's)."""
    floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    seat = RoundSeat.objects.get(round__round_id="r-1", seat=2)
    RoundSeat.objects.filter(pk=seat.pk).update(progressive_cents=0)
    return floor


def test_verify_journal_command_reports_a_tampered_round_stake(tampered):
    out = StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("verify_journal", stdout=out)
    assert exited.value.code == 1
    lines = out.getvalue().splitlines()
    assert lines == ["BROKEN at balances", *("  " + line for line in problems(tampered))]

    out = StringIO()
    with pytest.raises(SystemExit):
        call_command("verify_journal", "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["ok"] is False and report["first_broken"] is None
    assert report["problems"] == problems(tampered)
    assert report["balances"][str(tampered.pool_id)]["stakes"] == -1000


def test_journal_verify_endpoint_reports_a_tampered_round_stake(tampered, django_user_model):
    # The endpoint reads no journal: a POST queues a full run (a worker's, run here in-process;
    # tests/tables/audit/test_verification_runs.py has the real worker), the GETs answer from it.
    client = token_client(person("a", "auditor"))

    started = client.post("/api/v1/journal/verify")
    assert started.status_code == 202
    job = started.json()
    assert (job["status"], job["full"], job["trigger"]) == ("queued", True, "request")
    assert job["requested_by"] == "a" and started["Location"] == job["url"]
    verification_run(job["id"])

    done = client.get(job["url"]).json()
    assert (done["status"], done["ok"], done["first_broken"]) == ("done", False, None)
    assert done["problems"] == problems(tampered)
    assert done["checkpoint"] is None  # it did not pass: nothing to continue from
    latest = client.get("/api/v1/journal/verify").json()
    assert latest["latest"] == done and latest["latest_full"] == done
    assert latest["running"] is None


class _TablesChains:
    """A crosscheck that names the tables' chains but knows nothing of their rounds."""

    def __init__(self, carried: object) -> None:
        self.chains = {
            table_chain(t): frozenset([p]) for t, p in Table.objects.values_list("pk", "pool_id")
        }

    def chain_pools(self):
        return self.chains

    def observe(self, event, transfers) -> None:
        pass

    def pool_checks(self, pool, balances):
        return []

    def row_problems(self, broken):
        return []

    def carried(self) -> dict:
        return {}


def test_the_journal_alone_is_intact_only_the_rounds_disagree(tampered):
    # jackpot's own check, given the tables' chains but not their rounds, finds nothing wrong:
    # the journal itself was not touched, so the problem above comes from the tables' check.
    report = journal.verify_journal(full=True, crosscheck=_TablesChains)
    assert report.ok, report.problems


def test_the_journal_alone_lets_no_unnamed_chain_move_money(tampered):
    # Without the tables naming their chains, a table's chain may move no pool's money.
    report = journal.verify_journal(full=True)
    assert not report.ok
    assert report.problems[0].endswith("a transfer of another pool")
