"""The period-end liability (`GET /api/v1/pools/{pool}/liability`, `jackpot.reporting.liability`):
its figures against the journal to the cent, the same whenever asked, the same from a checkpoint or
from the first event, as JSON, CSV and PDF, for whom, and its refusals.

The story (the default pool: stake 500 cents, exactly 100 cents a stake to the meter and 40 to
the reserve, seed 1,000,000, awards of 100,000 and more wait for a supervisor), in the club's
time zone:
- 20 October: r1, the jackpot (1,000,200: the seed and two stakes) and its envy (50,000); the
  jackpot verified, approved and paid that day, the envy (approved at once) left payable;
- November, the period: r2 the jackpot again (1,000,200), verified only, and its envy; r3 a full
  house (5,000) paid; r4 a straight flush (150,000) left pending; r5 a straight flush voided;
  r6 four of a kind (50,000) left payable; on the 15th r1's envy is paid;
- the statement at 1 December, midnight (`AT`), for November (`FROM`);
- 1 December, 10:00, after it: r2's jackpot approved and paid, its envy paid, r7 played.
At `AT`: meter 1,000,400 (the seed and r3 to r6's four stakes), reserve 160, pending r2's
jackpot and r4 (1,150,200), payable r2's envy and r6 (100,000).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from datetime import datetime, time
from zoneinfo import ZoneInfo

import pypdf
import pytest
import time_machine
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db.models import Sum
from django.test import Client

from floor import audit
from jackpot.audit import checkpoints
from jackpot.models import (
    UNITS_PER_CENT,
    Account,
    AuditEvent,
    Award,
    AwardStatus,
    Checkpoint,
    Pool,
    Transfer,
)
from tables.audit.verification import keep_checkpoint, verify_full
from tests.conftest import Floor, assert_journal_ok, make_floor, uth_play, uth_seat
from tests.jackpot.tamper import superuser_sql
from tests.staff import api_clients, surveilled
from tests.winners import PAY

pytestmark = pytest.mark.django_db

PARIS = ZoneInfo("Europe/Paris")
AT = datetime(2026, 12, 1, tzinfo=PARIS)
FROM = datetime(2026, 11, 1, tzinfo=PARIS)
ROYAL = ("Ah Kh Qh 2c 3d", "9s 9d", ["Jh Th", "4c 5c"])
FULL_HOUSE = ("Ks Kd 7c 7h 2d", "Qs Jd", ["Kc 3s"])
STRAIGHT_FLUSH = ("9s 8s 7s 2c 3d", "Kd Qc", ["6s 5s"])
FOUR_OF_A_KIND = ("Qs Qd 7c 2h 3d", "Kd Jc", ["Qc Qh"])


def _paris(month: int, day: int, hour: int) -> datetime:
    return datetime.combine(datetime(2026, month, day).date(), time(hour), tzinfo=PARIS)


class Story:
    def __init__(self, floor: Floor, people: dict[str, Client]) -> None:
        self.floor, self.people, self.awards = floor, people, {}

    def play(self, round_id: str, hand: tuple[str, str, list[str]]) -> list[dict]:
        board, dealer, hands = hand
        terminal = self.floor.uth[0]
        seats = [uth_seat(seat) for seat in range(1, len(hands) + 1)]
        opened = terminal.post("/rounds", {"round_id": round_id, "seats": seats})
        assert opened.status_code == 201, opened.json()
        plays = [uth_play(seat, cards) for seat, cards in enumerate(hands, start=1)]
        result = {"board": board.split(), "dealer": dealer.split(), "seats": plays}
        settled = terminal.post(f"/rounds/{round_id}/result", result)
        assert settled.status_code == 200, settled.json()
        awards = settled.json()["awards"]
        for award in awards:
            self.awards[(round_id, award["kind"])] = award["id"]
        return awards

    def step(self, who: str, round_id: str, kind: str, step: str, body: dict | None = None):
        award = self.awards[(round_id, kind)]
        if step == "pay" and body is None:
            body = PAY  # a jackpot is above the identification threshold: the winner identified
        if step == "approve" and kind == "royal_flush":
            surveilled(award)  # the pool requires surveillance's confirmed review of a jackpot
        answer = self.people[who].post(
            f"/api/v1/awards/{award}/{step}", body or {}, content_type="application/json"
        )
        assert answer.status_code == 200, answer.json()

    def liability(self, **params: str) -> dict:
        answer = self.people["ida"].get(
            f"/api/v1/pools/{self.floor.pool_id}/liability", {"format": "json", **params}
        )
        assert answer.status_code == 200, answer.content
        return answer.json()


def _until_at(django_user_model) -> Story:
    with time_machine.travel(_paris(10, 20, 14), tick=True):
        floor = make_floor(1)
        people = api_clients(ana="supervisor", bob="supervisor", ida="auditor", adam="admin")
        story = Story(floor, people)
        story.play("r1", ROYAL)
        story.step("ana", "r1", "royal_flush", "verify", {"note": "video checked"})
        story.step("bob", "r1", "royal_flush", "approve")
        story.step("ana", "r1", "royal_flush", "pay")
    with time_machine.travel(_paris(11, 10, 21), tick=True):
        story.play("r2", ROYAL)
        story.step("ana", "r2", "royal_flush", "verify", {"note": "video checked"})
    with time_machine.travel(_paris(11, 12, 15), tick=True):
        story.play("r3", FULL_HOUSE)
        story.step("ana", "r3", "full_house", "pay")
        story.play("r4", STRAIGHT_FLUSH)
        story.play("r5", STRAIGHT_FLUSH)
        story.step("ana", "r5", "straight_flush", "void", {"reason": "misread board"})
        story.play("r6", FOUR_OF_A_KIND)
    with time_machine.travel(_paris(11, 15, 10), tick=True):
        story.step("bob", "r1", "envy", "pay")
    return story


def _after_at(story: Story) -> None:
    with time_machine.travel(_paris(12, 1, 10), tick=True):
        story.step("bob", "r2", "royal_flush", "approve")
        story.step("ana", "r2", "royal_flush", "pay")
        story.step("ana", "r2", "envy", "pay")
        story.play("r7", FULL_HOUSE)


@pytest.fixture
def story(django_user_model) -> Story:
    return _until_at(django_user_model)


def _journal_at(pool: int, at: datetime) -> dict[str, int]:
    """Each account's balance from every transfer at or before `at`: the whole journal."""
    balances = {}
    for account in Account.objects.filter(pool_id=pool):
        moved = Transfer.objects.filter(event__occurred_at__lte=at)
        credits = moved.filter(credit=account).aggregate(c=Sum("amount_cents"))["c"] or 0
        debits = moved.filter(debit=account).aggregate(c=Sum("amount_cents"))["c"] or 0
        balances[account.kind] = credits - debits
    return balances


def test_the_figures_are_the_journals_to_the_cent(story):
    found = story.liability(at=AT.isoformat())
    journal = _journal_at(story.floor.pool_id, AT)

    assert found["at"] == "2026-11-30T23:00:00+00:00"
    assert found["period"]["start"] == "2026-10-31T23:00:00+00:00"  # the month, club time
    assert found["meter_cents"] == journal["meter"] == 1_000_400
    assert found["seed_cents"] == 1_000_000
    assert found["meter_above_seed_cents"] == 400
    assert found["reserve_cents"] == journal["reserve"] == 160
    assert found["pending"] == {"count": 2, "amount_cents": 1_150_200}
    assert found["pending"]["amount_cents"] == journal["awards_pending"]
    assert found["payable"] == {"count": 2, "amount_cents": 100_000}
    assert found["payable"]["amount_cents"] == journal["payable"]
    assert found["owed_cents"] == 1_000_400 + 160 + 1_150_200 + 100_000
    assert found["period"]["granted"] == {"count": 6, "amount_cents": 1_405_200}
    assert found["period"]["jackpots"] == {"count": 1, "amount_cents": 1_000_200}
    assert found["period"]["paid"] == {"count": 2, "amount_cents": 55_000}  # r3, r1's envy
    assert found["period"]["voided"] == {"count": 1, "amount_cents": 150_000}
    assert found["checkpoint"] is None
    # The journal's position: each chain's last event by then, as the journal holds it.
    chains = {at["chain"]: (at["sequence"], at["hash"]) for at in found["journal"]}
    table_chain = f"table-{story.floor.uth[0].table_id}"
    assert set(chains) >= {f"pool-{story.floor.pool_id}", table_chain, "admin"}
    for chain, (sequence, digest) in chains.items():
        last = AuditEvent.objects.filter(chain=chain, occurred_at__lte=AT).latest("sequence")
        assert (last.sequence, last.hash) == (sequence, digest)
    # Every status was there at the instant, and is counted where it belongs.
    statuses = set(Award.objects.values_list("status", flat=True))
    assert statuses == {"pending", "verified", "approved", "paid", "void"}


def test_the_statement_of_a_past_instant_is_the_same_whenever_asked(story):
    before = story.liability(at=AT.isoformat(), **{"from": FROM.isoformat()})
    _after_at(story)
    with time_machine.travel(_paris(12, 1, 11), tick=True):
        keep_checkpoint(verify_full())  # a checkpoint after the instant changes nothing either
        again = story.liability(at=AT.isoformat(), **{"from": FROM.isoformat()})
    assert again == before
    # ...while the pool's counters moved on.
    pool = Pool.objects.get(pk=story.floor.pool_id)
    assert pool.meter_units // UNITS_PER_CENT == 1_000_500 != before["meter_cents"]


def test_at_now_it_is_the_counters_and_the_books(story):
    _after_at(story)
    with time_machine.travel(_paris(12, 1, 12), tick=True):
        now = story.liability()
        books = assert_journal_ok()["balances"][str(story.floor.pool_id)]
    pool = Pool.objects.get(pk=story.floor.pool_id)
    assert now["meter_cents"] == pool.meter_units // UNITS_PER_CENT == books["meter"] == 1_000_500
    assert now["reserve_cents"] == pool.reserve_units // UNITS_PER_CENT == books["reserve"]
    assert now["pending"]["amount_cents"] == books["awards_pending"] == 150_000
    assert now["payable"]["amount_cents"] == books["payable"] == 50_000 + 5_000
    awards = Award.objects.filter(pool_id=story.floor.pool_id)
    waiting = awards.filter(status__in=[AwardStatus.PENDING, AwardStatus.VERIFIED])
    assert now["pending"]["count"] == waiting.count() == 1
    assert now["payable"]["count"] == awards.filter(status=AwardStatus.APPROVED).count() == 2
    # December to date: r2's jackpot and envy paid, r7's full house won.
    assert now["period"]["paid"] == {"count": 2, "amount_cents": 1_050_200}
    assert now["period"]["granted"] == {"count": 1, "amount_cents": 5_000}


def test_from_a_checkpoint_or_from_the_first_event_the_same(django_user_model, monkeypatch):
    with time_machine.travel(_paris(10, 1, 9), tick=True):
        make_floor(1)  # another pool's table: its entries are in the checkpoint, not in ours
    story = _until_at(django_user_model)
    with time_machine.travel(_paris(11, 20, 9), tick=True):
        assert keep_checkpoint(verify_full()) is not None
        story.play("r8", FOUR_OF_A_KIND)  # after the checkpoint, before the instant
    _after_at(story)
    with time_machine.travel(_paris(12, 1, 12), tick=True):
        from_checkpoint = story.liability(at=AT.isoformat())
        monkeypatch.setattr(
            "jackpot.reporting.liability.checkpoints.at_or_before",
            lambda instant: checkpoints.Loaded(None, None),
        )
        from_first = story.liability(at=AT.isoformat())
    assert from_checkpoint["checkpoint"] == Checkpoint.objects.get().pk
    assert from_first["checkpoint"] is None
    from_checkpoint.pop("checkpoint"), from_first.pop("checkpoint")
    assert from_checkpoint == from_first
    assert from_first["payable"] == {"count": 3, "amount_cents": 150_000}  # r8's too
    assert from_first["meter_cents"] == _journal_at(story.floor.pool_id, AT)["meter"] == 1_000_500


def test_from_a_checkpoint_nothing_before_it_is_read_again(story, monkeypatch):
    # The cost: a statement from a checkpoint takes the balances the checkpoint carried and
    # reads only the entries after it. An insider's edit of the seed's transfer, before the
    # checkpoint, is seen by a statement from the first event only (and by the next full
    # verification, docs/operations.md).
    with time_machine.travel(_paris(11, 20, 9), tick=True):
        keep_checkpoint(verify_full())
    seed = Transfer.objects.get(pool_id=story.floor.pool_id, code="pool_seed")
    superuser_sql(
        "UPDATE jackpot_transfer SET amount_cents = amount_cents + 1 WHERE id = %s", [seed.pk]
    )
    from_checkpoint = story.liability(at=AT.isoformat())
    monkeypatch.setattr(
        "jackpot.reporting.liability.checkpoints.at_or_before",
        lambda instant: checkpoints.Loaded(None, None),
    )
    from_first = story.liability(at=AT.isoformat())
    assert from_checkpoint["checkpoint"] is not None
    assert from_checkpoint["meter_cents"] == 1_000_400
    assert from_first["meter_cents"] == 1_000_401


def test_a_checkpoint_later_than_the_instant_is_not_used(story):
    with time_machine.travel(_paris(12, 1, 9), tick=True):
        keep_checkpoint(verify_full())
        found = story.liability(at=AT.isoformat())
    assert found["checkpoint"] is None
    with time_machine.travel(_paris(12, 1, 9), tick=True):
        loaded = checkpoints.at_or_before(AT)
    assert loaded.checkpoint is None


def test_the_period_agrees_with_the_payout_log(story):
    found = story.liability(at=AT.isoformat(), **{"from": FROM.isoformat()})
    # Every award won since October: the period's were won in November, its payments are those
    # whose payment time is in November (r1's envy was won in October).
    rows = []
    for start, end in ((_paris(10, 15, 0), FROM), (FROM, AT)):  # at most 31 days each
        answer = story.people["ida"].get(
            "/api/v1/awards/export.csv",
            {"pool": story.floor.pool_id, "from": start.isoformat(), "to": end.isoformat()},
        )
        assert answer.status_code == 200, answer.content
        lines = b"".join(answer.streaming_content).decode().splitlines()
        rows += list(csv.DictReader(line for line in lines if not line.startswith("#")))

    def within(moment: str) -> bool:
        return bool(moment) and FROM <= datetime.fromisoformat(moment) < AT

    won = [row for row in rows if within(row["won_at_utc"])]
    paid = [row for row in rows if within(row["paid_at_utc"])]
    assert found["period"]["granted"] == {
        "count": len(won),
        "amount_cents": sum(int(row["amount_cents"]) for row in won),
    }
    assert found["period"]["paid"] == {
        "count": len(paid),
        "amount_cents": sum(int(row["amount_cents"]) for row in paid),
    }
    assert len(paid) == 2 and len(won) == 6


def test_csv_and_pdf_say_the_same_figures(story):
    url = f"/api/v1/pools/{story.floor.pool_id}/liability"
    params = {"at": AT.isoformat(), "from": FROM.isoformat()}
    body = story.liability(**params)
    answer = story.people["ida"].get(url, {**params, "format": "csv"})
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("text/csv")
    assert "liability-pool-" in answer["Content-Disposition"]
    text = answer.content.decode()
    content, digest = text.rsplit("# sha256 ", 1)
    assert hashlib.sha256(content.encode()).hexdigest() == digest.strip()
    cells = dict(csv.reader(io.StringIO(content)))
    assert cells.pop("figure") == "value"
    assert int(cells["meter_cents"]) == body["meter_cents"] == 1_000_400
    assert int(cells["owed_cents"]) == body["owed_cents"]
    assert int(cells["pending_count"]) == 2 and int(cells["payable_cents"]) == 100_000
    assert int(cells["paid_cents"]) == 55_000 and int(cells["jackpots_count"]) == 1
    assert cells["at_utc"] == body["at"]
    for at in body["journal"]:
        assert cells[f"journal:{at['chain']}"] == f"{at['sequence']} {at['hash']}"

    pdf = story.people["ida"].get(url, {**params, "format": "pdf"})
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    read = " ".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf.content)).pages)
    pool = Pool.objects.get(pk=story.floor.pool_id)
    for expected in (
        settings.CLUB_NAME,
        pool.name,
        "2026-11-30T23:00:00+00:00",
        "01/12/2026 00:00:00 CET",
        "10 004,00 EUR",  # the meter, 1,000,400 cents
        "4,00 EUR",  # above the seed
        "2 · 11 502,00 EUR",  # pending
        "2 · 1 000,00 EUR",  # payable
        "2 · 550,00 EUR",  # paid in the period
        "22 507,60 EUR",  # owed
        "signature",
    ):
        assert expected in read, read
    table_chain = next(at for at in body["journal"] if at["chain"].startswith("table-"))
    assert table_chain["hash"][:32] in read.replace("\n", "")


def test_the_command_prints_what_the_api_answers(story, capsys):
    body = story.liability(at=AT.isoformat())
    call_command("liability", "--pool", str(story.floor.pool_id), "--at", AT.isoformat())
    assert json.loads(capsys.readouterr().out) == body
    call_command(
        "liability", "--pool", str(story.floor.pool_id), "--at", AT.isoformat(), "--format", "csv"
    )
    assert "meter_cents,1000400" in capsys.readouterr().out
    with pytest.raises(CommandError, match=r"invalid_parameter \(from\)"):
        call_command(
            "liability",
            "--pool",
            str(story.floor.pool_id),
            "--at",
            FROM.isoformat(),
            "--from",
            AT.isoformat(),
        )


def test_auditors_and_admins_only(story):
    url = f"/api/v1/pools/{story.floor.pool_id}/liability"
    assert story.people["ida"].get(url).status_code == 200
    assert story.people["adam"].get(url).status_code == 200
    refused = story.people["ana"].get(url)  # a supervisor
    assert refused.status_code == 403
    assert Client().get(url).status_code == 401
    terminal = Client(HTTP_AUTHORIZATION=f"Bearer {story.floor.uth[0].token}")
    assert terminal.get(url).status_code == 401
    missing = story.people["ida"].get("/api/v1/pools/99999/liability")
    assert missing.status_code == 404 and missing.json()["error"]["param"] == "pool"


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"at": "2999-01-01T00:00:00+00:00"}, "at"),  # the future
        ({"at": "2026-11-01T00:00:00+01:00", "from": "2026-11-02T00:00:00+01:00"}, "from"),
        ({"at": "yesterday"}, "at"),
        ({"at": "2026-11-01T00:00:00"}, "at"),  # no offset: which midnight?
        ({"from": "1 Nov"}, "from"),
        ({"at": "0001-01-01T00:00:00Z"}, "at"),  # year 1: no month before it to start from
        ({"from": "1969-12-31T23:59:59Z"}, "from"),  # before any journal
        ({"format": "xlsx"}, "format"),
    ],
)
def test_bad_parameters_are_400_naming_the_field(story, params, param):
    answer = story.people["ida"].get(f"/api/v1/pools/{story.floor.pool_id}/liability", params)
    assert answer.status_code == 400, answer.content
    error = answer.json()["error"]
    assert (error["code"], error["param"]) == ("invalid_parameter", param)


def test_the_auditors_page_links_to_the_months_statements(story, client, django_user_model):
    with time_machine.travel(_paris(12, 15, 10), tick=True):
        # Signed in at that hour: a session ends at the shift's limits (core.sessions).
        client.force_login(django_user_model.objects.get(username="ida"))
        page = client.get(f"/audit/pools/{story.floor.pool_id}/?lang=en")
        links = audit._liability_links(story.floor.pool_id, "fr")
        english = audit._liability_links(story.floor.pool_id, "en")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Jackpot liability (for the accountant)" in html
    assert "November 2026&#x27;s close" in html
    assert english[0]["pdf"].replace("&", "&amp;") in html
    assert english[1]["csv"].replace("&", "&amp;") in html
    assert [link["label"] for link in links] == [
        "Clôture de novembre 2026",
        "décembre 2026, à ce jour",
    ]
    assert english[0]["label"] == "November 2026's close"
    closing = links[0]["pdf"]
    assert "at=2026-12-01T00%3A00%3A00%2B01%3A00" in closing
    assert "from=2026-11-01T00%3A00%3A00%2B01%3A00" in closing
    answer = story.people["ida"].get(closing)
    assert answer.status_code == 200 and answer["Content-Type"] == "application/pdf"
    csv_answer = story.people["ida"].get(links[0]["csv"])
    assert "meter_cents,1000400" in csv_answer.content.decode()
    assert "paid_cents,55000" in csv_answer.content.decode()  # November's, the period
    running = story.people["ida"].get(links[1]["csv"]).content.decode()
    assert "period_start_utc,2026-11-30T23:00:00+00:00" in running
