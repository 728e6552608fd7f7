"""The admin's login is throttled per user name and per address (Redis counters that fail open),
and the security log gets logins, failed logins, throttle refusals and every change of a
parameter or of access, made in the admin or through a service."""

from __future__ import annotations

import logging
import uuid

import pytest
from django.test import override_settings

from core import circuit
from jackpot.pools.parameters import change_approve, change_propose
from tables.models import Table
from tables.pools import POOL_TABLES
from tables.services import table_update
from tests.staff import PASSWORD, person

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"


@pytest.fixture
def fresh_counters(settings, throttle_clock):
    # A fresh prefix: counters of an earlier test in the same minute must not count here.
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}
    }
    settings.THROTTLE_ADMIN_LOGIN = "3/min"


@pytest.fixture
def staff(django_user_model):
    return person("croupier-chief", "admin", is_staff=True)  # the admin site's pages need the role


def _login(client, username, password, address="10.1.1.1"):
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address)


def _security(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "jackpot.security"]


def test_a_few_failed_logins_for_a_user_stop_its_logins_for_the_minute(
    client, staff, fresh_counters, caplog
):
    with caplog.at_level(logging.INFO, logger="jackpot.security"):
        # Given three failed logins for one user, each from another address
        for n in range(3):
            assert _login(client, staff.username, "wrong", f"10.0.0.{n}").status_code == 200
        # When the right password comes, from a fourth address
        refused = _login(client, staff.username, PASSWORD, "10.0.0.9")
    # Then it is refused before the password is checked, and nobody is logged in
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert "_auth_user_id" not in client.session
    messages = _security(caplog)
    assert messages.count("admin login failed user='croupier-chief' from=10.0.0.0") == 1
    assert messages[-1] == (
        "admin login refused (too many failed logins) user='croupier-chief' from=10.0.0.9"
    )


def test_a_few_failed_logins_from_an_address_stop_its_logins(client, staff, fresh_counters):
    for name in ("alice", "bob", "carol"):
        assert _login(client, name, "guess", "10.2.2.2").status_code == 200
    assert _login(client, staff.username, PASSWORD, "10.2.2.2").status_code == 429
    # Another address still logs the user in
    assert _login(client, staff.username, PASSWORD, "10.3.3.3").status_code == 302


def test_a_login_is_logged_and_counts_no_failure(client, staff, fresh_counters, caplog):
    with caplog.at_level(logging.INFO, logger="jackpot.security"):
        for _ in range(4):
            assert _login(client, staff.username, PASSWORD, "10.4.4.4").status_code == 302
            client.logout()
    assert _security(caplog) == ["admin login user='croupier-chief' from=10.4.4.4"] * 4


def test_logins_go_on_when_redis_is_down(client, staff, fresh_counters, caplog):
    circuit.redis_circuit.close()
    try:
        with (
            override_settings(REDIS_URL="redis://127.0.0.1:1/0"),
            caplog.at_level(logging.WARNING),
        ):
            for _ in range(5):  # over the limit, but nothing can count: let through
                assert _login(client, staff.username, "wrong", "10.5.5.5").status_code == 200
            assert _login(client, staff.username, PASSWORD, "10.5.5.5").status_code == 302
    finally:
        circuit.redis_circuit.close()  # the breaker is the process's: leave it closed
    assert any("Redis unavailable" in r.getMessage() for r in caplog.records)


def test_parameter_changes_by_a_service_are_in_the_security_log(
    floor, caplog, django_capture_on_commit_callbacks, django_user_model
):
    manager, second = (django_user_model.objects.create(username=n) for n in ("manager", "nina"))
    with (
        caplog.at_level(logging.INFO, logger="jackpot.security"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        for table in Table.objects.filter(pool_id=floor.pool_id):
            table_update(table_id=table.pk, changes={"enabled": False}, actor="user:floor-manager")
    with (
        caplog.at_level(logging.INFO, logger="jackpot.security"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        change = change_propose(
            pool_id=floor.pool_id,
            changes={"verification_threshold_cents": 250_000},
            reason="EUR 2,500",
            user=manager,
        )
    with (
        caplog.at_level(logging.INFO, logger="jackpot.security"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        change_approve(
            pool_id=floor.pool_id, change_id=change.pk, user=second, pool_tables=POOL_TABLES
        )
    messages = _security(caplog)
    assert any(
        m.startswith("table.changed by user:floor-manager at ")
        and '{"after": {"enabled": false}, "before": {"enabled": true}' in m
        for m in messages
    ), messages
    assert any(
        m.startswith("pool.change_proposed by user:manager at ")
        and '"changes": {"verification_threshold_cents": 250000}' in m
        for m in messages
    ), messages
    assert any(
        m.startswith("pool.changed by user:nina at ")
        and '"after": {"verification_threshold_cents": 250000}, "approved_by": "nina", '
        '"before": {"verification_threshold_cents": 100000}'
        in m
        and '"proposed_by": "manager"' in m
        for m in messages
    ), messages


def test_a_refused_change_is_not_logged_as_made(
    floor, caplog, django_capture_on_commit_callbacks, django_user_model
):
    from core.errors import Conflict

    manager, second = (django_user_model.objects.create(username=n) for n in ("manager", "nina"))
    change = change_propose(
        pool_id=floor.pool_id,
        changes={"verification_threshold_cents": 250_000},
        reason="EUR 2,500",
        user=manager,
    )
    with (
        caplog.at_level(logging.INFO, logger="jackpot.security"),
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(Conflict),  # the tables are open
    ):
        change_approve(
            pool_id=floor.pool_id, change_id=change.pk, user=second, pool_tables=POOL_TABLES
        )
    assert not [m for m in _security(caplog) if m.startswith("pool.changed")]


def test_a_change_in_the_admin_is_in_the_security_log(
    client, staff, floor, caplog, django_capture_on_commit_callbacks
):
    client.force_login(staff)
    table = Table.objects.filter(pool_id=floor.pool_id).first()
    with (
        caplog.at_level(logging.INFO, logger="jackpot.security"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = client.post(
            f"/admin/tables/table/{table.pk}/change/",
            {"name": "Renamed", "pool": floor.pool_id, "seats": table.seats, "enabled": "on"},
        )
    assert response.status_code == 302, response.content[:2000]
    assert any(
        m.startswith("table.changed by user:croupier-chief at ") and '"name": "Renamed"' in m
        for m in _security(caplog)
    ), _security(caplog)
