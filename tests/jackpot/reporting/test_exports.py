"""The auditors' payout log: CSV rows tied to the audit chain, streamed, with a digest."""

from __future__ import annotations

import csv
import hashlib
import io
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from jackpot.models import AuditEvent
from tests.conftest import uth_play, uth_seat
from tests.staff import person, surveilled, token_client

pytestmark = pytest.mark.django_db


def _around_now(days: int = 1) -> str:
    """`days` either side of now: export.csv takes a bounded range (EXPORT_SYNC_MAX_DAYS)."""
    now, span = timezone.now(), timedelta(days=days)
    return f"from={(now - span).strftime(ISO)}&to={(now + span).strftime(ISO)}"


ISO = "%Y-%m-%dT%H:%M:%SZ"
EXPORT = "/api/v1/awards/export.csv"


def _staff(django_user_model, name: str, role: str) -> Client:
    return token_client(person(name, role))


@pytest.fixture
def played(floor):
    terminal = floor.uth[0]
    terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    terminal.post(
        "/rounds/r-1/result",
        {
            "board": ["Ah", "Kh", "Qh", "2c", "3d"],
            "dealer": ["9s", "9d"],
            "seats": [uth_play(1, "Jh Th"), uth_play(2, "4c 5c", "fold")],
        },
    )
    return floor


def test_export_rows_digest_and_event_hashes(played, django_user_model):
    auditor = _staff(django_user_model, "ida", "auditor")
    response = auditor.get(f"{EXPORT}?{_around_now()}")
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"].startswith("text/csv")
    text = b"".join(response.streaming_content).decode()
    *lines, last = text.splitlines(keepends=True)
    assert last == f"# sha256 {hashlib.sha256(''.join(lines).encode()).hexdigest()}\n"

    rows = list(csv.DictReader(io.StringIO("".join(lines))))
    assert [(r["seat"], r["combination"], r["amount_cents"], r["status"]) for r in rows] == [
        ("1", "royal_flush", "1000200", "pending"),
        ("2", "envy", "50000", "approved"),
    ]
    settled = AuditEvent.objects.get(kind="round.settled", payload__round_id="r-1")
    assert {r["event_hash"] for r in rows} == {settled.hash}
    assert rows[0]["table"].startswith("UTH") and rows[0]["round"] == "r-1"
    assert rows[0]["won_at_utc"].endswith("+00:00")
    # The register's fields (compliance 34): the game, the winning cards, who paid and when.
    assert (rows[0]["game"], rows[0]["hole_cards"], rows[0]["board"]) == (
        "uth",
        "Jh Th",
        "Ah Kh Qh 2c 3d",
    )
    assert rows[1]["hole_cards"] == "4c 5c"  # the envy seat's own hand
    assert rows[0]["paid_by"] == rows[0]["paid_at_utc"] == ""  # not paid yet


def test_export_names_who_paid_and_when(played, django_user_model):
    from jackpot.awards.workflow import award_approve, award_verify
    from jackpot.models import Award
    from tests.winners import pay_identified

    ana, bob = (_user(django_user_model, name) for name in ("ana", "bob"))
    royal = Award.objects.get(kind="royal_flush")
    award_verify(award_id=royal.pk, user=ana, note="video checked")
    surveilled(royal.pk)
    award_approve(award_id=royal.pk, user=bob)
    pay_identified(royal.pk, ana)
    auditor = _staff(django_user_model, "ida", "auditor")
    text = b"".join(auditor.get(f"{EXPORT}?{_around_now()}").streaming_content).decode()
    row = next(csv.DictReader(io.StringIO(text)))
    assert (row["status"], row["verified_by"], row["approved_by"], row["paid_by"]) == (
        "paid",
        "ana",
        "bob",
        "ana",
    )
    assert row["paid_at_utc"].endswith("+00:00")


def _user(django_user_model, name: str):
    return person(name, "supervisor")


def test_export_filters_and_rights(played, django_user_model):
    auditor = _staff(django_user_model, "ida", "auditor")
    supervisor = _staff(django_user_model, "ana", "supervisor")

    def count(query: str) -> int:
        response = auditor.get(f"{EXPORT}?{query}&{_around_now()}")
        assert response.status_code == 200, response
        return len(b"".join(response.streaming_content).decode().splitlines()) - 2

    assert count("kind=envy") == 1
    assert count("status=pending") == 1
    assert count("pool=999999") == 0
    before = auditor.get(f"{EXPORT}?from=2000-01-01T00:00:00Z&to=2000-01-31T00:00:00Z")
    assert (
        len(b"".join(before.streaming_content).decode().splitlines()) == 2
    )  # none, then the digest
    assert auditor.get(f"{EXPORT}?from=yesterday&to=2026-01-01T00:00:00Z").status_code == 400
    assert (
        auditor.get(f"{EXPORT}?from=2026-01-01T00:00:00&to=2026-01-02T00:00:00Z").status_code == 400
    )
    assert supervisor.get(f"{EXPORT}?{_around_now()}").status_code == 403
    assert Client().get(f"{EXPORT}?{_around_now()}").status_code == 401


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("", "from"),  # no range at all: the whole journal
        ("from=2026-01-01T00:00:00Z", "to"),  # open after
        ("to=2026-01-01T00:00:00Z", "from"),  # open before
        ("from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:01Z", "from"),  # 31 days and a second
        ("from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z&kind=royal_flush", "from"),  # a year
    ],
)
def test_a_range_longer_than_the_bound_is_refused_towards_a_background_export(
    played, django_user_model, query, param
):
    auditor = _staff(django_user_model, "ida", "auditor")
    answer = auditor.get(f"{EXPORT}?{query}")
    assert answer.status_code == 400 and not answer.streaming
    error = answer.json()["error"]
    assert (error["type"], error["code"], error["param"]) == (
        "invalid_request",
        "range_too_large",
        param,
    )
    assert "POST /api/v1/awards/exports" in error["message"]
    assert "31 days" in error["message"]
    # The bound is the setting's; 31 days exactly is within it, and a background export takes
    # the refused range.
    exact = auditor.get(f"{EXPORT}?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z")
    assert exact.status_code == 200
    background = {k: v for k, v in (p.split("=") for p in query.split("&") if p)}
    started = auditor.post("/api/v1/awards/exports", background, content_type="application/json")
    assert started.status_code == 202, started.content


def test_the_bound_is_a_setting(played, django_user_model, settings):
    settings.EXPORT_SYNC_MAX_DAYS = 1
    auditor = _staff(django_user_model, "ida", "auditor")
    week = auditor.get(f"{EXPORT}?{_around_now(days=3)}")
    assert week.json()["error"]["code"] == "range_too_large"
    assert "at most 1 days" in week.json()["error"]["message"]
    day = auditor.get(f"{EXPORT}?{_around_now(days=0)}")
    assert day.status_code == 200
