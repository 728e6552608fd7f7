"""The floor's login, its refusals, and the award queue's page and the API it reads."""

from __future__ import annotations

import logging

import pytest
from django.test import Client

from tests.floor.conftest import play_hit, signed_in
from tests.staff import PASSWORD

pytestmark = pytest.mark.django_db


def test_the_queue_sends_a_visitor_to_the_login_page_and_back():
    response = Client().get("/floor/awards/")
    assert response.status_code == 302
    assert response["Location"] == "/floor/login/?next=/floor/awards/"
    page = Client().get(response["Location"])
    assert page.status_code == 200 and '<html lang="fr">' in page.content.decode()
    assert 'name="next" value="/floor/awards/"' in page.content.decode()
    assert "form-action 'self'" in page["Content-Security-Policy"]
    # The language switch keeps the page's query: English, then back to the queue.
    assert 'href="/floor/login/?next=%2Ffloor%2Fawards%2F&amp;lang=en"' in page.content.decode()


def test_a_supervisor_signs_in_and_the_login_is_logged(people, caplog):
    client = Client()
    with caplog.at_level(logging.INFO, logger="jackpot.security"):
        response = client.post(
            "/floor/login/?next=/floor/awards/",
            {"username": "ana", "password": PASSWORD, "next": "/floor/awards/"},
        )
    assert response.status_code == 302 and response["Location"] == "/floor/awards/"
    assert "floor login user='ana' from=127.0.0.1" in caplog.messages
    assert client.get("/floor/awards/").status_code == 200


def test_a_login_never_sends_anyone_off_the_site(people):
    response = Client().post(
        "/floor/login/", {"username": "ana", "password": PASSWORD, "next": "https://evil.example/"}
    )
    assert response["Location"] == "/floor/awards/"


def test_wrong_passwords_are_refused_logged_and_throttled(people, caplog, settings, throttle_clock):
    settings.THROTTLE_ADMIN_LOGIN = "2/min"
    client = Client(REMOTE_ADDR="10.9.9.9")
    with caplog.at_level(logging.INFO, logger="jackpot.security"):
        for _ in range(2):
            wrong = client.post("/floor/login/?lang=en", {"username": "bob", "password": "no"})
            assert wrong.status_code == 200
            assert "Wrong user name or password." in wrong.content.decode()
        stopped = client.post("/floor/login/", {"username": "bob", "password": PASSWORD})
    assert stopped.status_code == 429 and int(stopped["Retry-After"]) >= 1
    assert "Too many failed attempts" in stopped.content.decode()  # the language remembered
    assert caplog.messages.count("floor login failed user='bob' from=10.9.9.9") == 2
    assert "floor login refused (too many failed logins) user='bob' from=10.9.9.9" in (
        caplog.messages
    )


def test_staff_without_a_role_are_told_why_they_cannot_come_in(people):
    refused = Client().post("/floor/login/", {"username": "tom", "password": PASSWORD})
    assert refused.status_code == 200
    assert "aucun rôle du service" in refused.content.decode()
    # Signed in some other way (the admin's door), the pages still refuse, and say why.
    client = Client()
    client.force_login(people["tom"])
    page = client.get("/floor/awards/?lang=en")
    assert page.status_code == 403
    assert "Your account (tom) holds none of the service" in page.content.decode()


def test_sign_out_is_a_post(people):
    client = signed_in("ana")
    assert client.get("/floor/logout/").status_code == 405
    assert client.get("/floor/awards/").status_code == 200  # still signed in
    assert client.post("/floor/logout/")["Location"] == "/floor/login/"
    assert client.get("/floor/awards/").status_code == 302


def test_the_queue_page_gives_its_script_the_user_roles_and_csrf_token(people):
    html = signed_in("ida").get("/floor/awards/?lang=en").content.decode()
    assert '"user": "ida"' in html and '"canAct": false' in html and '"csrfToken": "' in html
    assert '"awardsUrl": "/api/v1/awards"' in html and "Awards to handle" in html
    html = signed_in("ana").get("/floor/awards/").content.decode()
    assert '"canAct": true' in html and "Gains à traiter" in html


def test_the_queue_polls_the_list_with_a_session_and_etag(floor, people):
    """The page's reads: cards and the winning five in each award, and a 304 until any award
    changes."""
    ana = signed_in("ana")
    jackpot, envy = play_hit(floor.uth[0])
    assert (jackpot["status"], envy["status"]) == ("pending", "approved")  # under the threshold
    listed = {award["id"]: award for award in ana.get("/api/v1/awards").json()["results"]}
    royal = listed[jackpot["id"]]
    assert royal["table_name"] == f"UTH {floor.pool_id}-1" and royal["round_id"] == "r-1"
    assert royal["cards"] == ["Jh", "Th"] and royal["board"] == ["Ah", "Kh", "Qh", "2c", "3d"]
    assert sorted(royal["winning_five"]) == sorted(["Ah", "Kh", "Qh", "Jh", "Th"])
    assert listed[envy["id"]]["winning_five"] == []  # won by seat 1's cards, not its own

    first = ana.get("/api/v1/awards?status=pending")
    assert [award["id"] for award in first.json()["results"]] == [jackpot["id"]]
    etag = first["ETag"]
    unchanged = ana.get("/api/v1/awards?status=pending", HTTP_IF_NONE_MATCH=etag)
    assert unchanged.status_code == 304 and unchanged["ETag"] == etag
    # Another filter is another list: it has its own ETag.
    assert ana.get("/api/v1/awards?status=paid")["ETag"] != etag

    verified = ana.post(
        f"/api/v1/awards/{jackpot['id']}/verify",
        {"note": "video"},
        content_type="application/json",
        HTTP_X_CSRFTOKEN=ana.cookies["csrftoken"].value,
    )
    assert verified.status_code == 200, verified.json()
    again = ana.get("/api/v1/awards?status=pending", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 200 and again["ETag"] != etag
    assert again.json()["results"] == []


def test_a_session_without_its_csrf_token_cannot_move_an_award(floor, people):
    jackpot, _ = play_hit(floor.uth[0])
    ana = Client(enforce_csrf_checks=True)
    ana.force_login(people["ana"])
    refused = ana.post(
        f"/api/v1/awards/{jackpot['id']}/verify", {"note": "x"}, content_type="application/json"
    )
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["error"]["message"]
