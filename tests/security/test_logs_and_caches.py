"""Logs and caches that cannot be fooled (issue 20, item 7), each attack played.

- The security log names the client, not the proxy, and never an address the client wrote: the
  same reading as the throttles (`core.throttling.client_address`), REMOTE_ADDR with
  NUM_PROXIES at 0, the entry nginx appended to X-Forwarded-For with NUM_PROXIES at 1.
- Whoever can write to Redis cannot put a figure on the signs (`jackpot.sign.display`): a part that
  fails its signature, an older part signed for another version, another pool's part, a meter
  below the seed are all refused; the sign shows PostgreSQL's figure, the entry is replaced, the
  security log and the forged counter say so, and nothing in the database moved.
"""

from __future__ import annotations

import json
import logging

import pytest
from django.test import Client

from core.metrics import REGISTRY
from jackpot.models import AuditEvent, Pool, Transfer
from jackpot.sign import display
from tests.conftest import make_floor, uth_play, uth_seat
from tests.staff import person

pytestmark = pytest.mark.django_db

SECURITY = "jackpot.security"
NGINX = "127.0.0.1"  # the proxy gunicorn is connected from
CLIENT = "198.51.100.7"  # the address nginx appends: the one it was connected from
SPOOFED = "203.0.113.66"  # what the client wrote in X-Forwarded-For itself


def _security(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == SECURITY]


def _proxies(settings, count: int) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": count}


def _database(pool_id: int) -> tuple[object, ...]:
    """What a refused request or a forged cache must leave as it was."""
    pool = Pool.objects.get(pk=pool_id)
    return (
        pool.meter_units,
        pool.meter_version,
        pool.award_version,
        Transfer.objects.count(),
        AuditEvent.objects.count(),
    )


# --- the security log's address -----------------------------------------------------------------


@pytest.mark.parametrize(("proxies", "logged"), [(0, NGINX), (1, CLIENT)])
def test_a_refusal_is_logged_with_the_clients_address_never_a_forged_one(
    settings, caplog, floor, proxies, logged
):
    _proxies(settings, proxies)
    before = _database(floor.pool_id)
    with caplog.at_level(logging.WARNING, logger=SECURITY):
        response = Client().get(
            "/api/v1/journal",
            REMOTE_ADDR=NGINX,
            HTTP_X_FORWARDED_FOR=f"{SPOOFED}, {CLIENT}",
            HTTP_AUTHORIZATION="Bearer staff_nope-not-a-token",
        )
    assert response.status_code == 401
    (line,) = [line for line in _security(caplog) if line.startswith("refused GET /api/v1/journal")]
    assert line.endswith(f"from={logged}")
    assert SPOOFED not in line
    assert _database(floor.pool_id) == before


@pytest.mark.parametrize(("proxies", "logged"), [(0, NGINX), (1, CLIENT)])
def test_a_refused_stake_is_logged_with_the_clients_address(
    settings, caplog, floor, proxies, logged
):
    _proxies(settings, proxies)
    before = _database(floor.pool_id)
    body = {"round_id": "r-1", "seats": [uth_seat(1, progressive=100)]}
    with caplog.at_level(logging.WARNING, logger=SECURITY):
        response = floor.uth[0].post(
            "/rounds", body, REMOTE_ADDR=NGINX, HTTP_X_FORWARDED_FOR=f"{SPOOFED}, {CLIENT}"
        )
    assert response.status_code == 400
    (line,) = [line for line in _security(caplog) if "progressive stake refused" in line]
    assert line.endswith(f"from={logged}") and SPOOFED not in line
    assert _database(floor.pool_id) == before


def test_the_login_throttle_and_its_log_read_the_same_address(settings, caplog, django_user_model):
    _proxies(settings, 1)
    person("ada")
    with caplog.at_level(logging.INFO, logger=SECURITY):
        response = Client().post(
            "/admin/login/",
            {"username": "ada", "password": "wrong"},
            REMOTE_ADDR=NGINX,
            HTTP_X_FORWARDED_FOR=f"{SPOOFED}, {CLIENT}",
        )
    assert response.status_code == 200  # the form again
    assert _security(caplog)[-1] == f"admin login failed user='ada' from={CLIENT}"


# --- the signs' cache ---------------------------------------------------------------------------


def _meter(pool_id: int) -> dict:
    response = Client().get(f"/api/v1/pools/{pool_id}/meter")
    assert response.status_code == 200
    return response.json()


def _key(pool_id: int) -> str:
    committed = display._committed(pool_id)
    assert committed is not None
    return display._key(committed[2], pool_id)


def _forged_count() -> float:
    return REGISTRY.get_sample_value("jackpot_sign_cache_lookups_total", {"result": "forged"}) or 0


def _assert_refused(pool_id: int, truth: dict, before: tuple[object, ...], caplog) -> None:
    """The sign shows the database's figure, the forgery is counted and logged, the entry now
    holds the figures this service signed, and the database did not move."""
    forged = _forged_count()
    with caplog.at_level(logging.WARNING, logger=SECURITY):
        shown = _meter(pool_id)
    assert shown == truth
    assert _forged_count() == forged + 1
    assert any("fails its signature or is below the seed" in line for line in _security(caplog))
    assert _database(pool_id) == before
    # Replaced by the service's own signed figures: the next read is a plain hit.
    held = display._redis().hgetall(_key(pool_id))
    committed = display._committed(pool_id)
    assert display._from_cache(held, _key(pool_id), committed)[0] == "hit"
    assert _meter(pool_id) == truth and _forged_count() == forged + 1


def test_a_figure_written_into_redis_under_the_current_version_is_never_shown(
    floor, caplog, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    truth = _meter(floor.pool_id)  # from Redis now, signed by the service
    before = _database(floor.pool_id)
    redis_client, key = display._redis(), _key(floor.pool_id)
    held = redis_client.hgetall(key)
    assert int(held[b"meter:version"]) == truth["sequence"]

    # The attacker writes a figure of their own under the committed version: as bare JSON, and
    # as JSON behind a tag of their making.
    fake = {**truth, "amount_cents": 99_999_999}
    for value in (json.dumps(fake), "0" * 64 + json.dumps(fake)):
        redis_client.hset(key, "meter", value)
        _assert_refused(floor.pool_id, truth, before, caplog)


def test_a_part_signed_for_an_older_version_cannot_pass_for_the_current_one(
    floor, caplog, django_capture_on_commit_callbacks
):
    first = _meter(floor.pool_id)
    redis_client, key = display._redis(), _key(floor.pool_id)
    old_meter = redis_client.hget(key, "meter")  # signed by the service, for version 0
    with django_capture_on_commit_callbacks(execute=True):
        floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    truth = _meter(floor.pool_id)
    assert truth["sequence"] == first["sequence"] + 1
    before = _database(floor.pool_id)

    # Replayed under the new version number: its tag covers version 0.
    redis_client.hset(key, "meter", old_meter)
    _assert_refused(floor.pool_id, truth, before, caplog)


def test_another_pools_signed_part_cannot_be_moved_onto_this_pools_sign(floor, caplog):
    other = make_floor(uth_tables=1, seed_cents=5_000_000)  # same versions, another figure
    truth, theirs = _meter(floor.pool_id), _meter(other.pool_id)
    assert (truth["sequence"], truth["amount_cents"]) == (0, 1_000_000)
    assert (theirs["sequence"], theirs["amount_cents"]) == (0, 5_000_000)
    before = _database(floor.pool_id)
    redis_client = display._redis()
    moved = redis_client.hget(_key(other.pool_id), "meter")
    redis_client.hset(_key(floor.pool_id), "meter", moved)
    _assert_refused(floor.pool_id, truth, before, caplog)


def test_a_forged_winner_is_never_shown_either(floor, caplog):
    truth = _meter(floor.pool_id)
    assert truth["jackpot_pending"] is False and truth["last_hit"] is None
    before = _database(floor.pool_id)
    hit = {"table": "UTH 1", "kind": "royal_flush", "amount_cents": 50_000_000, "at": None}
    awards = {
        "last_hit": hit,
        "recent_hits": [hit],
        "jackpot_pending": True,
        "pending_jackpot": hit,
    }
    display._redis().hset(_key(floor.pool_id), "awards", "f" * 64 + json.dumps(awards))
    _assert_refused(floor.pool_id, truth, before, caplog)


def test_a_meter_below_the_seed_is_never_shown_even_signed(floor, caplog):
    # Signed with the service's own key (what a leaked key, or a publisher's bug, could do):
    # still below the seed, which the meter never is (compliance 12).
    truth = _meter(floor.pool_id)
    before = _database(floor.pool_id)
    key = _key(floor.pool_id)
    meter_fields = ("pool", "currency", "sequence", "as_of")
    below = {**{name: truth[name] for name in meter_fields}, "amount_cents": -500}
    display._redis().hset(key, "meter", display._signed(key, "meter", truth["sequence"], below))
    _assert_refused(floor.pool_id, truth, before, caplog)


def test_a_version_that_is_not_a_number_is_a_forgery_not_a_500(floor, caplog):
    truth = _meter(floor.pool_id)
    before = _database(floor.pool_id)
    display._redis().hset(_key(floor.pool_id), "meter:version", "0 or 1")
    _assert_refused(floor.pool_id, truth, before, caplog)


def test_a_jackpot_shown_is_the_databases_after_a_forgery_of_the_reset(
    floor, caplog, django_capture_on_commit_callbacks
):
    # A royal resets the meter to the seed and puts the jackpot "being verified" on the sign;
    # an attacker tries to hide it behind the pre-royal figures, re-labelled as current.
    terminal = floor.uth[0]
    _meter(floor.pool_id)
    redis_client, key = display._redis(), _key(floor.pool_id)
    before_royal = redis_client.hgetall(key)
    with django_capture_on_commit_callbacks(execute=True):
        terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
        terminal.post(
            "/rounds/r-1/result",
            {
                "board": ["Ah", "Kh", "Qh", "2c", "3d"],
                "dealer": ["9s", "9d"],
                "seats": [uth_play(1, "Jh Th")],
            },
        )
    truth = _meter(floor.pool_id)
    assert truth["jackpot_pending"] is True
    before = _database(floor.pool_id)
    held = redis_client.hgetall(key)
    redis_client.hset(
        key,
        mapping={
            "meter": before_royal[b"meter"],
            "awards": before_royal[b"awards"],
            "meter:version": held[b"meter:version"],
            "awards:version": held[b"awards:version"],
        },
    )
    _assert_refused(floor.pool_id, truth, before, caplog)
