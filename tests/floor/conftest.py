"""The floor's people and a paid jackpot, made through the services and the API."""

from __future__ import annotations

import pytest
from django.test import Client

from jackpot.awards.workflow import award_approve, award_verify
from tests.conftest import uth_play, uth_seat
from tests.staff import PASSWORD, person, surveilled
from tests.winners import pay_identified


@pytest.fixture
def people(django_user_model):
    """ana and bob (supervisors), ida (auditor), and tom (staff with no role)."""
    cast = (("ana", "supervisor"), ("bob", "supervisor"), ("ida", "auditor"), ("tom", None))
    return {name: person(name, *([role] if role else [])) for name, role in cast}


def signed_in(name: str) -> Client:
    client = Client()
    response = client.post("/floor/login/", {"username": name, "password": PASSWORD})
    assert response.status_code == 302, response.content
    return client


def play_hit(terminal, round_id: str = "r-1") -> list[dict]:
    """A round with a jackpot royal (seat 1, Jh Th on Ah Kh Qh) and an envy (seat 2)."""
    terminal.post("/rounds", {"round_id": round_id, "seats": [uth_seat(1), uth_seat(2)]})
    return terminal.post(
        f"/rounds/{round_id}/result",
        {
            "board": ["Ah", "Kh", "Qh", "2c", "3d"],
            "dealer": ["9s", "9d"],
            "seats": [uth_play(1, "Jh Th"), uth_play(2, "4c 5c", "fold")],
        },
    ).json()["awards"]


@pytest.fixture
def paid_jackpot(floor, people):
    jackpot, _ = play_hit(floor.uth[0])
    award_verify(award_id=jackpot["id"], user=people["ana"], note="video checked")
    surveilled(jackpot["id"])
    award_approve(award_id=jackpot["id"], user=people["bob"])
    pay_identified(jackpot["id"], people["bob"])
    return jackpot
