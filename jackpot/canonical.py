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


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def fingerprint(value: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of `value`."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def chain_hash(key: bytes, prev_hash: str, content: Any) -> str:
    """The audit chain link: HMAC-SHA256 under `key` over the previous hash and the canonical
    content (hex, 64 characters like the SHA-256 it replaced)."""
    return hmac.digest(key, prev_hash.encode() + canonical_json(content), "sha256").hex()
