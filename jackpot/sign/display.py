"""The meter as jackpot signs see it: from Redis, written after each commit, never ahead, never
behind, never from another database. A sign shows two parts, each versioned on the pool row:
the meter (`meter_version`) and the awards (`award_version`).

Invariants:
- published by `transaction.on_commit` (nothing uncommitted shown; a failed publish never fails
  the request), with a compare-and-set on the version (no older value over a newer one);
- keyed by the database's identity, and served only at exactly the committed versions that
  PostgreSQL gives on every read: a restore of Redis or of the database is never shown;
- every part signed (HMAC under a key derived from the journal's key), and a meter served only
  at or above the seed: anything else is read from PostgreSQL and logged as forged;
- Redis down costs a query (`core.circuit`), never a wrong number.

The reasons in full: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
import uuid
from typing import Any

import redis
from django.conf import settings
from django.db import connection, transaction

from core import metrics
from core.circuit import redis_circuit, redis_client
from jackpot.bodies.meter import Hit, Meter, SignAwards
from jackpot.models import Award, AwardKind, AwardStatus, DatabaseIdentity, Pool
from jackpot.money import rows
from jackpot.money.ledger import journal_key
from jackpot.money.meter import pool_meter

logger = logging.getLogger(__name__)
security_log = logging.getLogger("jackpot.security")

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
_publish_script: Any = None


def _redis() -> redis.Redis | None:
    """The Redis client, or None: no Redis, or it failed a moment ago (`core.circuit`)."""
    global _publish_script
    client = redis_client()
    if client is not None and _publish_script is None:
        _publish_script = client.register_script(_PUBLISH)  # EVALSHA: the text is sent once
    return client


# The pool's committed versions, its seed, and what identifies this life of the database, by
# primary key.
# On PostgreSQL the identity adds the database's OID (a database made anew or restored by
# pg_restore gets another) and the server's start time (a physical restore, a failover or a
# copied data directory starts the server anew); the token tells a database emptied and
# migrated anew in place.
# A stopped pool's meter was moved out (jackpot.pools.lifecycle): it has no floor, so its "seed"
# here is 0. The status itself is in the signed meter part (every status change bumps its version),
# and is read here too: a cached meter saying another status than the pool's is not served.
_SEED = "CASE WHEN p.status = 'stopped' THEN 0 ELSE p.seed_cents END, p.status"
_COMMITTED = {
    "postgresql": (
        "SELECT p.meter_version, p.award_version, i.token::text,"
        " (SELECT oid FROM pg_database WHERE datname = current_database())::text"
        " || '@' || extract(epoch FROM pg_postmaster_start_time())::text, "
        + _SEED
        + " FROM jackpot_pool p LEFT JOIN jackpot_databaseidentity i ON i.id = 1 WHERE p.id = %s"
    ),
    "sqlite": (
        "SELECT p.meter_version, p.award_version, i.token, '', "
        + _SEED
        + " FROM jackpot_pool p LEFT JOIN jackpot_databaseidentity i ON i.id = 1 WHERE p.id = %s"
    ),
}


def _committed(pool_id: int) -> tuple[int, int, str, int, str] | None:
    """(meter_version, award_version, the database's identity, seed_cents: 0 once stopped,
    status) of a pool; None: no such pool."""
    sql = _COMMITTED.get(connection.vendor, _COMMITTED["sqlite"])
    with connection.cursor() as cursor:
        cursor.execute(sql, [pool_id])
        row = cursor.fetchone()
        if row is not None and row[2] is None:  # emptied by flush: this database's token, now
            DatabaseIdentity.objects.get_or_create(pk=1, defaults={"token": uuid.uuid4()})
            cursor.execute(sql, [pool_id])
            row = cursor.fetchone()
    if row is None:
        return None
    meter_version, award_version, token, server, seed_cents, status = row
    identity = hashlib.sha256(f"{token}|{server}".encode()).hexdigest()[:16]
    return int(meter_version), int(award_version), identity, int(seed_cents), str(status)


def _key(identity: str, pool_id: int) -> str:
    # The version in the key changes with the shape of the parts, so an upgrade never serves a
    # part cached by the previous release (v2: the awards part gained recent_hits and
    # pending_jackpot; v3: keyed by the database's identity; v4: each part signed).
    prefix = settings.CACHES["default"].get("KEY_PREFIX", "jackpot")
    return f"{prefix}:display:v4:{identity}:{pool_id}"


# What the signing key is derived for: another use of the journal's key never yields it.
_PURPOSE = b"jackpot.sign.display: the signs' cached figures, v1"
_TAG_LENGTH = 64  # hex characters of an HMAC-SHA256


@functools.lru_cache(maxsize=4)
def _keyed(base: bytes) -> hmac.HMAC:
    """An HMAC-SHA256 keyed with the key derived from `base` for `_PURPOSE` (HKDF's expand
    step: one block), its pads computed once; each tag starts from a copy of it."""
    derived = hmac.new(base, _PURPOSE + b"\x01", hashlib.sha256).digest()
    # digestmod by name: OpenSSL's HMAC, whose copy costs about one SHA-256 of the part.
    return hmac.new(derived, digestmod="sha256")


def _signing_key() -> hmac.HMAC:
    """The signs' cache key, derived from the journal's key (`jackpot.money.ledger.journal_key`):
    held by the service's processes only, never by Redis nor PostgreSQL; production refuses a weak
    one. Read through the settings each time, so a key changed under a test is followed."""
    return _keyed(journal_key())


def _tag(key: str, part: str, version: int, body: bytes) -> str:
    """The hex tag of `part` at `version` under the Redis `key` (the database's identity and the
    pool): the LF-separated fields, then the JSON (none of the fields holds a line feed)."""
    mac = _signing_key().copy()
    mac.update(f"{key}\n{part}\n{version}\n".encode())
    mac.update(body)
    return mac.hexdigest()


def _signed(key: str, part: str, version: int, body: dict[str, Any]) -> str:
    """The value stored for a part: its tag, then its JSON."""
    text = json.dumps(body)
    return _tag(key, part, version, text.encode()) + text


def _verified(key: str, part: str, version: int, value: bytes) -> Any:
    """The JSON of a stored part when its tag verifies for `version`, else None."""
    tag, body = value[:_TAG_LENGTH], value[_TAG_LENGTH:]
    if not hmac.compare_digest(tag, _tag(key, part, version, body).encode()):
        return None
    return json.loads(body)


def _publisher_identity(pool_id: int) -> str | None:
    """The database's identity for a publisher, read once per database connection.

    A publisher only chooses the key it writes; every reader checks the identity and the
    committed versions itself (`display_meter`), so an identity that went stale under an open
    connection (a database flushed in place) costs a write nobody reads, never a wrong figure.
    A restore or a database made anew closes the connections, and the next one reads it again.
    """
    raw = connection.connection
    cached = getattr(connection, "_display_identity", None)
    if cached is not None and cached[0] is raw:
        return str(cached[1])
    committed = _committed(pool_id)
    if committed is None:
        return None
    connection._display_identity = (raw, committed[2])  # type: ignore[attr-defined]
    return committed[2]


def _publish(pool_id: int, part: str, version: int, body: dict[str, Any]) -> None:
    client = _redis()
    if client is None:
        return
    identity = _publisher_identity(pool_id)
    if identity is None:
        return
    key = _key(identity, pool_id)
    try:
        value = _signed(key, part, version, body)
        held = _publish_script(keys=[key], args=[part, version, value], client=client)
        if held >= 0 and _stale(pool_id, part, held):
            client.delete(key)  # the next reader refills it from PostgreSQL
    except redis.RedisError as error:
        redis_circuit.failed(error)
        logger.warning("display cache for pool %s not written: %s", pool_id, error)


def _stale(pool_id: int, part: str, held: int) -> bool:
    """Whether Redis holds a version this database never committed.

    A publisher refused by the compare-and-set is usually late: a newer committed value is
    already shown. But versions only grow within one database, and the key carries the
    database's identity, so a held version above the committed one should never be seen; if it
    is, its figures are wrong (readers already refuse them), and no publisher of this database
    could ever replace them.
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


# _AFTER_COMMIT: a publish after commit never fails the request (`robust`: Django logs the error
# and goes on). The money is committed by then; a publish that reads PostgreSQL over a connection
# lost since the COMMIT would otherwise turn the committed answer into a 503 "nothing was
# recorded" (found by the backend kill drill, tests/faults/test_after_commit.py). A publish
# missed is repaired by the next reader (it checks the committed versions) or the beat's refresh.


def meter_changed(pool_id: int, meter: Meter) -> None:
    """After commit, publish the meter part."""
    transaction.on_commit(
        lambda: _publish(pool_id, "meter", meter.sequence, meter.model_dump(mode="json")),
        robust=True,  # see _AFTER_COMMIT
    )


def awards_changed(pool_id: int) -> None:
    """After commit, read the awards part back from PostgreSQL and publish it."""

    def publish() -> None:
        version, awards = _awards_part(pool_id)
        _publish(pool_id, "awards", version, awards.model_dump(mode="json"))

    transaction.on_commit(publish, robust=True)  # see _AFTER_COMMIT


# The awards part in one statement by primary key (plain SQL: it runs after every commit that
# grants an award, and the three ORM queries it was compiled from cost a tenth of a round's CPU,
# bench/round_cpu.py). The pool's award version, then the winners a sign lists (`which` 0):
# each hand's award, newest first, envy left out (it rides on a royal already listed) and a
# voided award too (it was never won); then the newest jackpot waiting for its checks (`which`
# 1), shown whatever has been won since. No pool: no row. The table's name is the award's own,
# recorded at its grant: the sign never reads the tables' rows.
_AWARDS = (
    "SELECT p.award_version, w.which, w.name, w.kind, w.amount_cents, w.created_at"
    " FROM jackpot_pool p LEFT JOIN ("
    " SELECT * FROM (SELECT 0 AS which, a.table_name AS name, a.kind, a.amount_cents, a.created_at,"
    " a.number FROM jackpot_award a"
    " WHERE a.pool_id = %s AND NOT a.status = %s AND NOT a.kind = %s"
    " ORDER BY a.number DESC LIMIT %s) AS recent"
    " UNION ALL"
    " SELECT * FROM (SELECT 1 AS which, a.table_name AS name, a.kind, a.amount_cents, a.created_at,"
    " a.number FROM jackpot_award a"
    " WHERE a.pool_id = %s AND a.kind = %s AND a.status IN (%s, %s)"
    " ORDER BY a.number DESC LIMIT 1) AS waiting"
    ") w ON 1 = 1 WHERE p.id = %s ORDER BY w.which, w.number DESC"
)


def _awards_part(pool_id: int) -> tuple[int, SignAwards]:
    with connection.cursor() as cursor:
        cursor.execute(
            _AWARDS,
            [
                *(pool_id, AwardStatus.VOID, AwardKind.ENVY, RECENT_HITS),
                *(pool_id, AwardKind.ROYAL_FLUSH, AwardStatus.PENDING, AwardStatus.VERIFIED),
                pool_id,
            ],
        )
        found = cursor.fetchall()
    hits: list[Hit] = []
    pending: Hit | None = None
    for _version, which, table, kind, amount_cents, created_at in found:
        if which is None:  # a pool without an award
            continue
        at = rows.converted(Award, "created_at", created_at)  # SQLite reads it as text
        hit = Hit.model_construct(
            table=table, kind=AwardKind(kind), amount_cents=amount_cents, at=at
        )
        if which == 0:
            hits.append(hit)
        else:
            pending = hit
    body = SignAwards.model_construct(
        last_hit=hits[0] if hits else None,
        recent_hits=hits,
        jackpot_pending=pending is not None,
        pending_jackpot=pending,
    )
    return int(found[0][0] if found else 0), body


def _from_database(pool_id: int) -> tuple[dict[str, Any], int, dict[str, Any]] | None:
    try:
        meter = pool_meter(pool_id=pool_id)
    except Pool.DoesNotExist:
        return None
    version, awards = _awards_part(pool_id)
    return meter.model_dump(mode="json"), version, awards.model_dump(mode="json")


def refresh(pool_id: int) -> bool:
    """Publish the pool's committed figures from PostgreSQL (the scheduled safety net beside the
    publish after commit: a publish lost with Redis down is made good within a period). The
    compare-and-set keeps it harmless: it never puts an older version over a newer one."""
    found = _from_database(pool_id)
    if found is None:
        return False
    meter, award_version, awards = found
    _publish(pool_id, "meter", meter["sequence"], meter)
    _publish(pool_id, "awards", award_version, awards)
    return True


def refresh_all() -> int:
    """`refresh` every pool; how many were published."""
    return sum(refresh(pool_id) for pool_id in Pool.objects.values_list("pk", flat=True))


def _from_cache(
    held: dict[bytes, bytes], key: str, committed: tuple[int, int, str, int, str]
) -> tuple[str, tuple[dict[str, Any], dict[str, Any]] | None]:
    """What the hash read from Redis is worth: ("hit", (meter, awards)) when both parts hold the
    committed versions, their tags verify and the meter is at or above the seed; ("miss", None)
    when a part is missing or at another version (Redis lost it, or is behind or ahead: a
    publisher's business); ("forged", None) for anything else under the committed versions: a
    bad tag, a meter below the seed (a stopped pool's has none), a status other than the pool's,
    a version that is not a number."""
    meter_version, award_version, _, seed_cents, status = committed
    if b"meter" not in held or b"awards" not in held:
        return "miss", None
    try:
        versions = int(held[b"meter:version"]), int(held[b"awards:version"])
    except (KeyError, ValueError):
        return "forged", None
    if versions != (meter_version, award_version):
        return "miss", None
    meter = _verified(key, "meter", meter_version, held[b"meter"])
    awards = _verified(key, "awards", award_version, held[b"awards"])
    if meter is None or awards is None or meter["amount_cents"] < seed_cents:
        return "forged", None
    if meter.get("status", "active") != status:  # a meter part of another status: not this one
        return "forged", None
    return "hit", (meter, awards)


def display_meter(pool_id: int) -> tuple[dict[str, Any], str] | None:
    """The sign's body and its ETag; None when there is no such pool.

    PostgreSQL is asked first, always (one query by primary key): the cached parts are served
    only when they hold the committed versions of this database and their tags verify, so
    neither a Redis restored from an older snapshot, nor a database restored or made anew, nor
    a figure written into Redis by anyone but this service can show a sign another figure.
    With PostgreSQL unreachable, this raises (503 `progressive_closed`): no cached figure is
    served that the database cannot vouch for.
    """
    committed = _committed(pool_id)
    if committed is None:
        return None
    identity = committed[2]
    key = _key(identity, pool_id)
    client = _redis()
    held: dict[bytes, bytes] = {}
    if client is not None:
        try:
            held = client.hgetall(key)  # type: ignore[assignment]
        except redis.RedisError as error:
            redis_circuit.failed(error)
            logger.warning("display cache for pool %s not read: %s", pool_id, error)
            client = None
    outcome, cached = _from_cache(held, key, committed)
    metrics.SIGN_CACHE.labels(outcome).inc()
    if cached is not None:
        meter, awards = cached
        award_version = committed[1]
    else:
        found = _from_database(pool_id)
        if found is None:
            return None
        meter, award_version, awards = found
        if client is not None:  # always so for a forged entry: it was read from Redis
            if outcome == "forged":
                _drop_forged(client, key, pool_id)
            _publish(pool_id, "meter", meter["sequence"], meter)
            _publish(pool_id, "awards", award_version, awards)
    etag = f'"{identity}-{pool_id}-{meter["sequence"]}-{award_version}"'
    return {**meter, **awards}, etag


def _drop_forged(client: redis.Redis, key: str, pool_id: int) -> None:
    """A figure under the committed versions that this service did not sign: a security event.
    The entry is deleted so that the publish after the read (a compare-and-set, which would
    leave a forged entry at the committed version in place) writes the committed figures."""
    security_log.warning(
        "significant event: the signs' cache for pool %s held a figure that fails its signature"
        " or is below the seed (not written by this service): served from PostgreSQL, entry %s"
        " dropped",
        pool_id,
        key,
    )
    try:
        client.delete(key)
    except redis.RedisError as error:
        redis_circuit.failed(error)
        logger.warning("display cache for pool %s not dropped: %s", pool_id, error)
