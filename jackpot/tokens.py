"""Bearer tokens for terminals and staff: random, shown once, stored as SHA-256 only."""

import hashlib
import secrets
from typing import NamedTuple


class IssuedToken(NamedTuple):
    raw: str  # shown to the holder once, never stored
    token_hash: str
    prefix: str  # the first characters, stored so an operator can tell tokens apart


def issue_token(kind: str) -> IssuedToken:
    raw = f"{kind}_{secrets.token_urlsafe(32)}"
    return IssuedToken(raw=raw, token_hash=hash_token(raw), prefix=raw[: len(kind) + 5])


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()
