"""The meter as jackpot signs see it: from Redis, written after each commit, never ahead.

What a sign shows has two parts, each with its own version from the pool row:
- the meter (`meter_version`): amount in whole cents, currency, time;
- the awards (`award_version`): the last hits (table, kind, amount, time), newest first, and
  the jackpot that waits for verification, if one does.

Both are published to one Redis hash by `transaction.on_commit`, so nothing uncommitted is ever
shown, and with a compare-and-set on the version, so a late publisher cannot put an older value
over a newer one; a held version above the committed one (Redis kept across a database restore)
is dropped by the next publisher. The meter part is built from the values the transaction itself
computed; the awards part is read back from PostgreSQL after the commit (awards change rarely).
Each part is its model's JSON (`jackpot.bodies.Meter`, `SignAwards`; together a `DisplayMeter`).
When Redis is down or does not hold both parts, `display_meter` reads PostgreSQL and refills the
cache. Redis is a cache here: losing it costs a query, never a wrong number.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import redis
from django.conf import settings
from django.db import transaction

from jackpot.bodies import Hit, Meter, SignAwards
from jackpot.meter import pool_meter
from jackpot.models import Award, AwardKind, AwardStatus, Pool

logger = logging.getLogger(__name__)

RECENT_HITS = 5  # the winners a sign lists

# Sets `part` and its version only when the new version is newer than the one held; answers -1
# when it did, else the version held.
_PUBLISH = """
local held = redis.call('HGET', KEYS[1], ARGV[1] .. ':version')
if (not held) or tonumber(held) < tonumber(ARGV[2]) then
    redis.call('HSET', KEYS[1], ARGV[1] .. ':version', ARGV[2], ARGV[1], ARGV[3])
    redis.call('EXPIRE', KEYS[1], 86400)
    return -1
end
return tonumber(held)
"""
_VERSION_FIELDS = {"meter": "meter_version", "awards": "award_version"}
_client: redis.Redis | None = None
_publish_script: Any = None


def _redis() -> redis.Redis | None:
    global _client, _publish_script
    if not settings.REDIS_URL:
        return None
    if _client is None:
        _client = redis.Redis.from_url(
            settings.REDIS_URL, socket_connect_timeout=0.25, socket_timeout=0.25
        )
        _publish_script = _client.register_script(_PUBLISH)  # EVALSHA: the text is sent once
    return _client


def _key(pool_id: int) -> str:
    # The version in the key changes with the shape of the parts, so an upgrade never serves a
    # part cached by the previous release (v2: the awards part gained recent_hits and
    # pending_jackpot).
    return f"{settings.CACHES['default'].get('KEY_PREFIX', 'jackpot')}:display:v2:{pool_id}"


def _publish(pool_id: int, part: str, version: int, body: dict[str, Any]) -> None:
    client = _redis()
    if client is None:
        return
    try:
        held = _publish_script(keys=[_key(pool_id)], args=[part, version, json.dumps(body)])
        if held >= 0 and _stale(pool_id, part, held):
            client.delete(_key(pool_id))  # the next reader refills it from PostgreSQL
    except redis.RedisError as error:
        logger.warning("display cache for pool %s not written: %s", pool_id, error)


def _stale(pool_id: int, part: str, held: int) -> bool:
    """Whether Redis holds a version this database never committed.

    A publisher refused by the compare-and-set is usually late: a newer committed value is
    already shown. But versions only grow within one database, so a held version above the
    committed one can only come from another database (a restored backup, a database made
    anew): its figures are wrong, and no publisher of this database could ever replace them.
    """
    committed = Pool.objects.filter(pk=pool_id).values_list(_VERSION_FIELDS[part], flat=True)
    current = committed.first()
    if current is None or held <= current:
        return False
    logger.warning(
        "display cache for pool %s held %s version %s, above the committed %s: dropped",
        pool_id,
        part,
        held,
        current,
    )
    return True


def meter_changed(pool_id: int, meter: Meter) -> None:
    """After commit, publish the meter part."""
    transaction.on_commit(
        lambda: _publish(pool_id, "meter", meter.sequence, meter.model_dump(mode="json"))
    )


def awards_changed(pool_id: int) -> None:
    """After commit, read the awards part back from PostgreSQL and publish it."""

    def publish() -> None:
        version, awards = _awards_part(pool_id)
        _publish(pool_id, "awards", version, awards.model_dump(mode="json"))

    transaction.on_commit(publish)


def _hit(award: Award) -> Hit:
    return Hit.model_construct(
        table=award.round.table.name,
        kind=AwardKind(award.kind),
        amount_cents=award.amount_cents,
        at=award.created_at,
    )


def _awards_part(pool_id: int) -> tuple[int, SignAwards]:
    version = Pool.objects.filter(pk=pool_id).values_list("award_version", flat=True).first()
    awards = Award.objects.filter(pool_id=pool_id).select_related("round__table")
    # The winners a sign lists: each hand's award, newest first. Envy is left out (it rides on a
    # royal already listed) and so is a voided award (it was never won).
    hits = [
        _hit(award)
        for award in awards.exclude(status=AwardStatus.VOID)
        .exclude(kind=AwardKind.ENVY)
        .order_by("-sequence")[:RECENT_HITS]
    ]
    # A jackpot waiting for its checks is shown whatever has been won since.
    pending = (
        awards.filter(
            kind=AwardKind.ROYAL_FLUSH, status__in=(AwardStatus.PENDING, AwardStatus.VERIFIED)
        )
        .order_by("-sequence")
        .first()
    )
    body = SignAwards.model_construct(
        last_hit=hits[0] if hits else None,
        recent_hits=hits,
        jackpot_pending=pending is not None,
        pending_jackpot=_hit(pending) if pending is not None else None,
    )
    return int(version or 0), body


def _from_database(pool_id: int) -> tuple[dict[str, Any], int, dict[str, Any]] | None:
    try:
        meter = pool_meter(pool_id=pool_id)
    except Pool.DoesNotExist:
        return None
    version, awards = _awards_part(pool_id)
    return meter.model_dump(mode="json"), version, awards.model_dump(mode="json")


def display_meter(pool_id: int) -> tuple[dict[str, Any], str] | None:
    """The sign's body and its ETag; None when there is no such pool."""
    client = _redis()
    held: dict[bytes, bytes] = {}
    if client is not None:
        try:
            held = client.hgetall(_key(pool_id))  # type: ignore[assignment]
        except redis.RedisError as error:
            logger.warning("display cache for pool %s not read: %s", pool_id, error)
            client = None
    if b"meter" in held and b"awards" in held:
        meter, awards = json.loads(held[b"meter"]), json.loads(held[b"awards"])
        award_version = int(held[b"awards:version"])
    else:
        found = _from_database(pool_id)
        if found is None:
            return None
        meter, award_version, awards = found
        if client is not None:
            _publish(pool_id, "meter", meter["sequence"], meter)
            _publish(pool_id, "awards", award_version, awards)
    etag = f'"{pool_id}-{meter["sequence"]}-{award_version}"'
    return {**meter, **awards}, etag
