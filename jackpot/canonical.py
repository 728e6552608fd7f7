"""Canonical JSON and SHA-256 fingerprints.

One encoding for everything that is hashed (audit events, request fingerprints): keys sorted, no
insignificant white space, UTF-8, integers only (money is never a float here, so no float
formatting question arises). Two equal values always give the same bytes.
"""

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def fingerprint(value: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of `value`."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def chain_hash(prev_hash: str, content: Any) -> str:
    """The audit chain link: SHA-256 over the previous hash and the canonical content."""
    return hashlib.sha256(prev_hash.encode() + canonical_json(content)).hexdigest()
