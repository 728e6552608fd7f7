"""Bearer tokens for terminals and staff: random, shown once, stored as SHA-256 only; and the
staff's second-factor secrets, stored sealed (below)."""

import hashlib
import secrets
from typing import NamedTuple

from django.utils.crypto import salted_hmac


class IssuedToken(NamedTuple):
    raw: str  # shown to the holder once, never stored
    token_hash: str
    prefix: str  # the first characters, stored so an operator can tell tokens apart


def issue_token(kind: str) -> IssuedToken:
    raw = f"{kind}_{secrets.token_urlsafe(32)}"
    return IssuedToken(raw=raw, token_hash=hash_token(raw), prefix=raw[: len(kind) + 5])


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


# --- the second factor's secrets, sealed with a key the database does not hold ------------------
#
# django-otp stores a TOTP device's key and the recovery codes as they are: whoever reads the
# database could make a colleague's codes. Here the database holds them sealed under a key derived
# from SECRET_KEY (in the environment, never in the database): a TOTP key encrypted for its owner
# (a 16-byte nonce, then the key XORed with an HMAC-SHA256 stream bound to the nonce and the
# owner's id), a recovery code as an HMAC of the code and its owner's id. A row copied to another
# account, or written by someone without the key, opens to a key nobody knows.


def _sealed(owner: int, nonce: bytes, data: bytes) -> bytes:
    """`data` XORed with an HMAC-SHA256 stream of the nonce and the owner (both ways)."""
    stream = b""
    while len(stream) < len(data):
        block = f"{owner}:{nonce.hex()}:{len(stream) // 32}"
        stream += salted_hmac("jackpot.totp-key", block, algorithm="sha256").digest()
    return bytes(a ^ b for a, b in zip(data, stream[: len(data)], strict=True))


def seal_totp_key(owner: int, key: bytes) -> str:
    """`key` sealed for the account `owner`, as hex (what `TOTPDevice.key` stores)."""
    nonce = secrets.token_bytes(16)
    return (nonce + _sealed(owner, nonce, key)).hex()


def unseal_totp_key(owner: int, stored: str) -> bytes:
    raw = bytes.fromhex(stored)
    return _sealed(owner, raw[:16], raw[16:])


def seal_recovery_code(owner: int, code: str) -> str:
    """What `StaticToken.token` stores for `code` of the account `owner` (16 hex characters)."""
    sealed = salted_hmac("jackpot.recovery-code", f"{owner}:{code.lower()}", algorithm="sha256")
    return sealed.hexdigest()[:16]


def seal_activation_code(owner: int, issuer: int, expires: str, code: str) -> str:
    """What `ActivationCode.code_hash` stores: an HMAC of `code` bound to the account `owner`,
    the admin `issuer` and the expiry (ISO text), so none of them can be edited in the row."""
    sealed = salted_hmac(
        "jackpot.activation-code", f"{owner}:{issuer}:{expires}:{code.lower()}", algorithm="sha256"
    )
    return sealed.hexdigest()
