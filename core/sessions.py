"""The staff's browser sessions (SESSION_ENGINE): Django's database sessions, stored so that the
database holds nothing that works as a session, and ended at the limits a club sets for a shift.

Invariants:
- A `django_session` row's key is the HMAC-SHA256 of the cookie's key under a key derived from
  SECRET_KEY for this use alone (`ROW_KEY_SALT`), its first 40 hex digits (160 bits): the cookie's
  key is stored nowhere, so a row's key read by SQL is no cookie, and a row written by SQL is no
  one's (nobody holds the key it hashes).
- A row's data is signed for that row (the signature's salt names the row's key): data copied by
  SQL from a colleague's row into another row loads as nothing.
- A signed-in session carries, in that signed data, when it signed in (`SIGNED_IN_AT`) and when it
  was last seen (`SEEN_AT`), stamped by the save of the request that signed it in. Once
  STAFF_SESSION_MAX_SECONDS past the first or STAFF_SESSION_IDLE_SECONDS past the second (or with
  either missing), its load deletes its row and the request is signed out (the response drops the
  cookie). The seen stamp moves at most once a `SEEN_EVERY_SECONDS`: a busy session costs one
  UPDATE a minute, not one a request (its idle limit is thus met up to a minute early).
- The row's `expire_date` is the earlier of the two limits, so `clearsessions` removes a session
  once it can no longer load; the limits themselves are read from the signed data, never from
  that column (which SQL can move).
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends import db
from django.core import signing
from django.utils import timezone
from django.utils.crypto import salted_hmac

if TYPE_CHECKING:
    from django.contrib.sessions.base_session import AbstractBaseSession

security_log = logging.getLogger("jackpot.security")

#: The purpose of the key that hashes a cookie's key into its row's (derived from SECRET_KEY).
ROW_KEY_SALT = "jackpot.sessions.row-key"
#: The signed data's stamps, in whole seconds since the epoch.
SIGNED_IN_AT = "_signed_in_at"
SEEN_AT = "_seen_at"
#: How often a request moves the seen stamp at most (the one write a busy session costs).
SEEN_EVERY_SECONDS = 60


def row_key(session_key: str) -> str:
    """The row's key for the cookie's `session_key`: a keyed hash, 40 hex digits (the column's
    width)."""
    return salted_hmac(ROW_KEY_SALT, session_key, algorithm="sha256").hexdigest()[:40]


class SessionStore(db.SessionStore):
    """`session_key` is the cookie's key, never stored; every query names `row_key(...)`."""

    def _data_salt(self, key: str) -> str:
        return f"{self.key_salt}:{key}"

    def load(self) -> dict[str, Any]:
        if self.session_key is None:
            return {}
        key = row_key(self.session_key)
        row = self.model.objects.filter(session_key=key, expire_date__gt=timezone.now()).first()
        if row is None:
            self._session_key = None
            return {}
        try:
            data = signing.loads(
                row.session_data, salt=self._data_salt(key), serializer=self.serializer
            )
        except signing.BadSignature:
            security_log.warning("session data not signed for its row: no session")
            self.delete()
            self._session_key = None
            return {}
        return self._within_limits(data)

    def _within_limits(self, data: dict[str, Any]) -> dict[str, Any]:
        """`data` while its sign-in is within the limits (moving its seen stamp when due); else
        nothing, its row deleted."""
        if SESSION_KEY not in data:
            return data  # no one signed in: the row's expiry bounds a pending sign-in
        now = int(time.time())
        signed_in, seen = data.get(SIGNED_IN_AT), data.get(SEEN_AT)
        if signed_in is None or seen is None:
            ended = "no sign-in stamp"
        elif now - signed_in >= settings.STAFF_SESSION_MAX_SECONDS:
            ended = "absolute limit"
        elif now - seen >= settings.STAFF_SESSION_IDLE_SECONDS:
            ended = "idle limit"
        else:
            if now - seen >= SEEN_EVERY_SECONDS:
                data[SEEN_AT] = now
                self.modified = True
            return data
        security_log.info("session ended (%s) user_id=%s", ended, data[SESSION_KEY])
        self.delete()
        self._session_key = None
        return {}

    def exists(self, session_key: str) -> bool:
        return self.model.objects.filter(session_key=row_key(session_key)).exists()

    def delete(self, session_key: str | None = None) -> None:
        if session_key is None:
            if self.session_key is None:
                return
            session_key = self.session_key
        self.model.objects.filter(session_key=row_key(session_key)).delete()

    def create_model_instance(self, data: dict[str, Any]) -> AbstractBaseSession:
        if self.session_key is None:  # save() makes it first (create), as Django's paths all do
            raise RuntimeError("a session is saved only under a key")
        key = row_key(self.session_key)
        expires = self.get_expiry_date()
        if SESSION_KEY in data:
            if SIGNED_IN_AT not in data:  # signed in by this request (auth.login)
                data[SIGNED_IN_AT] = data[SEEN_AT] = int(time.time())
            ends = min(
                data[SEEN_AT] + settings.STAFF_SESSION_IDLE_SECONDS,
                data[SIGNED_IN_AT] + settings.STAFF_SESSION_MAX_SECONDS,
            )
            expires = min(expires, datetime.fromtimestamp(ends, tz=UTC))
        return self.model(
            session_key=key,
            session_data=signing.dumps(
                data, salt=self._data_salt(key), serializer=self.serializer, compress=True
            ),
            expire_date=expires,
        )

    # The async paths run the same code (Django's own would query the cookie's key).
    async def aload(self) -> dict[str, Any]:
        return await sync_to_async(self.load)()

    async def aexists(self, session_key: str) -> bool:
        return await sync_to_async(self.exists)(session_key)

    async def adelete(self, session_key: str | None = None) -> None:
        await sync_to_async(self.delete)(session_key)

    async def acreate_model_instance(self, data: dict[str, Any]) -> AbstractBaseSession:
        return await sync_to_async(self.create_model_instance)(data)
