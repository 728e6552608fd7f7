"""The jackpot sign's page as the server sends it (what the browser does with it: tests/browser)."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest

from jackpot.awards.workflow import award_void
from jackpot.models import Award
from tests.conftest import uth_play, uth_seat

pytestmark = pytest.mark.django_db


def _inline(html: str, tag: str) -> str:
    (body,) = re.findall(rf"<{tag}>(.*?)</{tag}>", html, flags=re.DOTALL)
    return body


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_the_page_carries_its_own_style_and_script_and_allows_nothing_else(client, floor):
    response = client.get(f"/display/{floor.pool_id}/")
    assert response.status_code == 200
    html = response.content.decode()
    policy = response["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert f"style-src {_csp_hash(_inline(html, 'style'))};" in policy
    assert f"script-src {_csp_hash(_inline(html, 'script'))};" in policy
    assert not re.search(r"(src|href)=\"https?:", html)  # nothing from elsewhere
    assert '<html lang="fr">' in html


def test_the_script_is_told_where_the_pool_is_and_in_which_language(client, floor):
    html = client.get(f"/display/{floor.pool_id}/?lang=en").content.decode()
    config = json.loads(re.search(r'id="sign-config">(.*?)</script>', html).group(1))
    assert config["meterUrl"] == f"/api/v1/pools/{floor.pool_id}/meter"
    assert config["poolUrl"] == f"/api/v1/pools/{floor.pool_id}"
    assert config["text"]["hit"] == "JACKPOT WON!"
    assert config["offlineAfterMs"] > config["pollMs"] + config["fetchTimeoutMs"]
    # Any other language is French, the house's.
    html = client.get(f"/display/{floor.pool_id}/?lang=xx").content.decode()
    assert '<html lang="fr">' in html and "JACKPOT GAGNÉ" in html


def test_an_unknown_pool_is_a_404(client, floor):
    assert client.get(f"/display/{floor.pool_id + 1000}/").status_code == 404


def test_the_sign_lists_the_last_five_hands_that_won_and_never_a_voided_one(
    client, floor, django_capture_on_commit_callbacks, django_user_model
):
    terminal = floor.uth[0]
    with django_capture_on_commit_callbacks(execute=True):
        for number in range(1, 8):  # seven rounds, each a straight flush for seat 1
            terminal.post("/rounds", {"round_id": f"r-{number}", "seats": [uth_seat(1)]})
            terminal.post(
                f"/rounds/r-{number}/result",
                {
                    "board": ["5c", "6c", "7c", "2s", "9h"],
                    "dealer": ["Ac", "Qd"],
                    "seats": [uth_play(1, "8c 9c")],
                },
            )
        newest = Award.objects.order_by("-number").first()  # over the threshold: pending
        # A supervisor's void: a superuser configures and voids nothing (compliance 52).
        admin = django_user_model.objects.create(username="boss")
        award_void(award_id=newest.pk, user=admin, reason="misdeal found on video")
    body = client.get(f"/api/v1/pools/{floor.pool_id}/meter").json()
    hits = body["recent_hits"]
    assert len(hits) == 5
    assert [hit["kind"] for hit in hits] == ["straight_flush"] * 5
    expected = Award.objects.exclude(pk=newest.pk).order_by("-number")[:5]
    assert [hit["at"] for hit in hits] == [award.created_at.isoformat() for award in expected]
    assert body["last_hit"] == hits[0]


def test_a_jackpot_waiting_for_its_checks_is_shown_whatever_was_won_since(
    client, floor, django_capture_on_commit_callbacks
):
    terminal = floor.uth[0]
    rounds = [("Qh Jh Th 2s 3d", "Ah Kh")] + [("7c 7d Kd 2s 9h", "Kc Ks")] * 6
    with django_capture_on_commit_callbacks(execute=True):
        for number, (board, hole) in enumerate(rounds, start=1):
            terminal.post("/rounds", {"round_id": f"r-{number}", "seats": [uth_seat(1)]})
            terminal.post(
                f"/rounds/r-{number}/result",
                {"board": board.split(), "dealer": ["4c", "5c"], "seats": [uth_play(1, hole)]},
            )
    body = client.get(f"/api/v1/pools/{floor.pool_id}/meter").json()
    assert [hit["kind"] for hit in body["recent_hits"]] == ["full_house"] * 5
    assert body["jackpot_pending"] is True
    royal = Award.objects.get(kind="royal_flush")
    assert body["pending_jackpot"] == {
        "table": royal.round.table.name,
        "kind": "royal_flush",
        "amount_cents": royal.amount_cents,
        "at": royal.created_at.isoformat(),
    }
