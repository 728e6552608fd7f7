"""Refusals are logged, and rate limits hold under concurrency: requirements 13, 41 and 42.

- 13: a contribution other than the pool's stake (above it, below it, or at a table that feeds
  no pool) is refused, moves nothing, and is logged to the security log as a significant event
  with the terminal, its table and the source address (`config.handlers`).
- 41: failed authentications and authorization denials are in the security log with the
  terminal or user (for a credential that did not authenticate, the non-secret prefix it
  presented, which names the terminal or staff token it was issued as) and the source address.
- 42: 100 requests at once over a terminal's limit admit exactly the limit (the counter is one
  Redis INCR, atomic), and so do 100 concurrent HTTP requests to a throttled endpoint.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.test import Client
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from jackpot.models import AuditEvent, Pool, Transfer
from tables.api.authentication import TerminalPrincipal
from tables.api.views import TerminalThrottle
from tables.models import Round, Table, Terminal
from tests import live
from tests.conftest import uth_seat
from tests.staff import person, staff_token

SECURITY = "jackpot.security"


def _security_lines(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == SECURITY]


# --- requirement 13 -----------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("cents", [1000, 501, 100])
def test_a_stake_other_than_the_pools_is_refused_and_logged_as_a_significant_event(
    floor, caplog, cents
):
    terminal = floor.uth[0]
    before = (
        Pool.objects.get(pk=floor.pool_id).meter_units,
        Transfer.objects.count(),
        AuditEvent.objects.count(),
    )
    body = {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2, progressive=cents)]}
    with caplog.at_level(logging.WARNING, logger=SECURITY):
        response = terminal.client().post(
            f"/api/v1/tables/{terminal.table_id}/rounds",
            body,
            content_type="application/json",
            REMOTE_ADDR="10.20.30.40",
        )
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("invalid_bet", "seats[1].bets.progressive_cents")
    # Refused whole: no round, no stake, no meter change.
    assert not Round.objects.exists()
    after = (
        Pool.objects.get(pk=floor.pool_id).meter_units,
        Transfer.objects.count(),
        AuditEvent.objects.count(),
    )
    assert after == before
    # Logged: what, which terminal at which table, from where (the formatter adds the UTC time).
    lines = [line for line in _security_lines(caplog) if "progressive stake refused" in line]
    assert len(lines) == 1, _security_lines(caplog)
    line = lines[0]
    terminal_id = Terminal.objects.get(table_id=terminal.table_id).pk
    assert line.startswith("significant event: ")
    assert f"/api/v1/tables/{terminal.table_id}/rounds" in line
    assert f"user=terminal:{terminal_id}" in line and "from=10.20.30.40" in line
    assert "seats[1].bets.progressive_cents" in line and f"got {cents}" in line


@pytest.mark.django_db
def test_a_stake_at_a_table_without_a_pool_is_logged_too(floor, caplog):
    from tables.models import Game
    from tables.services import operator_terminal_issue, table_create

    unlinked = table_create(name="UTH unlinked", game=Game.UTH, pool=None, actor="test")
    token = operator_terminal_issue(
        table=unlinked, name="t", revoke_others=False, actor="test"
    ).token
    body = {"round_id": "u-1", "seats": [uth_seat(1)]}
    with caplog.at_level(logging.WARNING, logger=SECURITY):
        response = Client(HTTP_AUTHORIZATION=f"Bearer {token}").post(
            f"/api/v1/tables/{unlinked.pk}/rounds", body, content_type="application/json"
        )
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_bet"
    assert any("progressive stake refused" in line for line in _security_lines(caplog))


@pytest.mark.django_db
def test_other_bad_bets_are_not_significant_events(floor, caplog):
    body = {"round_id": "r-1", "seats": [uth_seat(1, ante=-5)]}
    with caplog.at_level(logging.WARNING, logger=SECURITY):
        assert floor.uth[0].post("/rounds", body).status_code == 400
    assert not any("progressive stake" in line for line in _security_lines(caplog))


# --- requirement 41 -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_failed_authentications_and_denials_are_logged_with_who_and_where(
    floor, caplog, django_user_model
):
    own, other = floor.uth
    url = f"/api/v1/tables/{own.table_id}/rounds"
    body = {"round_id": "r-1", "seats": [uth_seat(1)]}
    auditor_token = staff_token(person("ida", "auditor"))
    revoked = Terminal.objects.get(table_id=other.table_id)

    def post(token: str | None, address: str, path: str = url):
        headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
        return Client(REMOTE_ADDR=address, **headers).post(
            path, body, content_type="application/json"
        )

    with caplog.at_level(logging.WARNING, logger=SECURITY):
        # No credential; a forged one; a terminal posting for another table; a revoked terminal;
        # a staff member without the role; a staff token that does not exist.
        assert post(None, "10.0.0.1").status_code == 401
        assert post("term_forgedforgedforged", "10.0.0.2").status_code == 401
        assert post(other.token, "10.0.0.3").status_code == 403
        Terminal.objects.filter(pk=revoked.pk).update(revoked_at="2026-01-01T00:00Z")
        assert (
            post(other.token, "10.0.0.4", f"/api/v1/tables/{other.table_id}/rounds").status_code
            == 401
        )
        assert post(auditor_token, "10.0.0.5", "/api/v1/awards/1/verify").status_code == 403
        assert post("staff_nosuchtoken", "10.0.0.6", "/api/v1/journal").status_code == 401
    lines = _security_lines(caplog)

    def line_from(address: str) -> str:
        found = [line for line in lines if f"from={address}" in line]
        assert len(found) == 1, (address, lines)
        return found[0]

    assert "NotAuthenticated" in line_from("10.0.0.1")
    assert "AuthenticationFailed" in line_from("10.0.0.2") and "token=term_forg" in line_from(
        "10.0.0.2"
    )
    other_terminal = Terminal.objects.get(table_id=other.table_id)
    assert "PermissionDenied" in line_from("10.0.0.3")
    assert f"user=terminal:{other_terminal.pk}" in line_from("10.0.0.3")
    # The revoked terminal is named by the prefix its token was issued with.
    assert "AuthenticationFailed" in line_from("10.0.0.4")
    assert f"token={other_terminal.prefix}" in line_from("10.0.0.4")
    assert "PermissionDenied" in line_from("10.0.0.5") and "user=ida" in line_from("10.0.0.5")
    assert "token=staff_noSu" in line_from("10.0.0.6") or "token=staff_nosu" in line_from(
        "10.0.0.6"
    )
    # Never the secret itself.
    assert not any(other.token in line or auditor_token in line for line in lines)


# --- requirement 42 -----------------------------------------------------------------------------

LIMIT = 10
AT_ONCE = 100


@pytest.fixture
def fresh_counters(settings):
    """A limit of LIMIT a day (no window boundary within the test) and counters of our own."""
    now = time.time()
    if 86_400 - now % 86_400 < 30:  # a day's window ends within the test: wait for the next
        time.sleep(86_400 - now % 86_400 + 1)
    rates = {"anon": f"{LIMIT}/day", "rules": f"{LIMIT}/day", "terminal": f"{LIMIT}/day"}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    }


def _at_once(count: int, call) -> list:
    start = threading.Barrier(count, timeout=60)

    def once(_: int):
        start.wait()
        return call()

    with ThreadPoolExecutor(max_workers=count) as executor:
        return list(executor.map(once, range(count)))


def test_100_requests_at_once_from_one_terminal_admit_exactly_the_limit(fresh_counters):
    # The terminal throttle itself, called by 100 threads at once against the real Redis (the
    # request threads of a server would each run it; no database is needed to count).
    terminal = Terminal(pk=424242, table=Table(pk=4242))
    factory = APIRequestFactory()

    def one() -> bool:
        request = Request(factory.post("/api/v1/tables/4242/rounds"))
        request.user = TerminalPrincipal(terminal)
        return TerminalThrottle().allow_request(request, None)

    admitted = _at_once(AT_ONCE, one)
    assert admitted.count(True) == LIMIT
    # Another terminal has its own budget.
    other = Request(factory.post("/api/v1/tables/4243/rounds"))
    other.user = TerminalPrincipal(Terminal(pk=424243, table=Table(pk=4243)))
    assert TerminalThrottle().allow_request(other, None)


class _WideServer(live._Server):
    request_queue_size = 256  # 100 connections at once: none refused by the listen backlog


def test_100_concurrent_http_requests_over_a_limit_admit_exactly_the_limit(
    fresh_counters, monkeypatch
):
    # Over real HTTP connections, one server thread each: the rules API's per-address limit
    # (the same counter as the terminals'; it needs no database, so 100 at once fit here).
    monkeypatch.setattr(live, "_Server", _WideServer)
    live_service = live.LiveServer()
    body = json.dumps({"cards": ["As", "Ks", "Qs", "Js", "Ts"]}).encode()

    def one() -> int:
        request = urllib.request.Request(
            f"{live_service.url}/api/v1/rules/evaluate",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    try:
        statuses = _at_once(AT_ONCE, one)
    finally:
        live_service.stop()
    assert sorted(set(statuses)) == [200, 429], statuses
    assert statuses.count(200) == LIMIT
