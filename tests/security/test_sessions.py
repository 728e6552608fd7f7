"""Staff sessions and tokens, attacked as the insider would: one account, SQL as the service's
database role, no SECRET_KEY.

A `django_session` row read or written by SQL never signs anyone in (its key is a keyed hash of
the cookie's, its data is signed for that row alone); a session ends at the club's idle and
absolute limits; a staff token ends at its expiry. Each refusal leaves the award, the journal and
the sessions as they were.
"""

from __future__ import annotations

import json
import zlib
from datetime import datetime, timedelta

import pytest
from django.conf import settings
from django.core import signing
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from core.sessions import SEEN_AT, SEEN_EVERY_SECONDS, SIGNED_IN_AT, SessionStore, row_key
from jackpot.models import AuditEvent, Award, StaffToken
from jackpot.staff.accounts import staff_token_issue
from tables.audit.verification import verify_full
from tests.floor.conftest import play_hit
from tests.security.test_second_factor import STEP, code_step, password_step, signed_in
from tests.staff import code, enrolled, surveilled

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def required(settings):
    """Production's rule: the API takes only sessions that gave their second factor."""
    settings.STAFF_SECOND_FACTOR_REQUIRED = True


def rows() -> list[tuple[str, str]]:
    """What the service's role reads: every session row's key and data."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT session_key, session_data FROM django_session")
        return list(cursor.fetchall())


def user_of(session_data: str) -> str | None:
    """The user id a row's data names: its payload is signed, not encrypted, so SQL reads it."""
    payload = session_data.rsplit(":", 2)[0]
    raw = signing.b64_decode(payload.lstrip(".").encode())
    data = json.loads(zlib.decompress(raw) if payload.startswith(".") else raw)
    return data.get("_auth_user_id")


def with_cookie(key: str) -> Client:
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = key
    return client


def test_a_session_row_read_or_written_by_sql_signs_no_one_in(floor):
    ana, bob = enrolled("ana", "supervisor"), enrolled("bob", "supervisor")
    jackpot, _ = play_hit(floor.uth[0])

    def approve(client: Client, body: dict | None = None):
        return client.post(
            f"/api/v1/awards/{jackpot['id']}/approve", body or {}, content_type="application/json"
        )

    insider = signed_in(ana)
    verified = insider.post(
        f"/api/v1/awards/{jackpot['id']}/verify", {"note": "video"}, content_type="application/json"
    )
    assert verified.status_code == 200, verified.content
    surveilled(jackpot["id"])
    refused = approve(insider, {"second_factor_code": code(ana, steps_ahead=1)})
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "four_eyes")
    colleague = signed_in(bob)  # bob's live session, past his second factor
    before = (AuditEvent.objects.count(), rows())

    # Every row's key, read by SQL and set as the cookie: no one is signed in by it.
    for key, _ in rows():
        refused = approve(with_cookie(key))
        assert refused.status_code in (401, 403), (key, refused.status_code, refused.content)
    for key, _ in rows():
        assert with_cookie(key).get("/floor/awards/")["Location"].startswith(settings.LOGIN_URL)
    assert Award.objects.get(pk=jackpot["id"]).status == "verified"
    assert AuditEvent.objects.count() == before[0]

    # bob's data written by SQL over the insider's own row: the insider is signed out, not bob.
    bobs = next(data for _, data in before[1] if user_of(data) == str(bob.pk))
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE django_session SET session_data = %s WHERE session_data <> %s", [bobs, bobs]
        )
    refused = approve(insider)
    assert refused.status_code in (401, 403), refused.content
    assert refused.status_code == 401 or refused.json()["error"]["code"] != "four_eyes"
    assert Award.objects.get(pk=jackpot["id"]).status == "verified"
    assert AuditEvent.objects.count() == before[0]

    # bob's own cookie still works.
    assert colleague.get("/api/v1/awards").status_code == 200
    assert colleague.get("/floor/awards/").status_code == 200


def cookie(client: Client) -> str:
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def stored(client: Client) -> tuple[str, datetime]:
    """The client's session row's data and expiry, as SQL reads them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT session_data, expire_date FROM django_session WHERE session_key = %s",
            [row_key(cookie(client))],
        )
        return cursor.fetchone()


def stamps_back(client: Client, **seconds: int) -> None:
    """The client's session as if its sign-in (`_signed_in_at`) or its last sight (`_seen_at`)
    were `seconds` earlier; its row's expiry then put off by SQL, as the insider could: the
    limits hold from the signed data alone."""
    store = SessionStore(cookie(client))
    for name, back in seconds.items():
        store[name] -= back
    store.save()
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE django_session SET expire_date = %s WHERE session_key = %s",
            [timezone.now() + timedelta(days=14), row_key(cookie(client))],
        )


@pytest.mark.parametrize(
    ("stamp", "limit"),
    [(SEEN_AT, "STAFF_SESSION_IDLE_SECONDS"), (SIGNED_IN_AT, "STAFF_SESSION_MAX_SECONDS")],
)
def test_a_session_past_its_idle_or_absolute_limit_is_signed_out(stamp, limit, caplog):
    ana = enrolled("ana", "supervisor")
    client = signed_in(ana)
    assert client.get("/api/v1/awards").status_code == 200
    stamps_back(client, **{stamp: getattr(settings, limit)})
    was = cookie(client)
    key = row_key(was)

    with caplog.at_level("INFO", logger="jackpot.security"):
        page = client.get("/floor/awards/")
    assert page["Location"].startswith(settings.LOGIN_URL)
    assert page.cookies[settings.SESSION_COOKIE_NAME].value == ""  # the browser forgets it
    assert not [row for row in rows() if row[0] == key]  # flushed
    ended = "idle limit" if stamp == SEEN_AT else "absolute limit"
    assert f"session ended ({ended}) user_id={ana.pk}" in caplog.messages
    assert with_cookie(was).get("/api/v1/awards").status_code in (401, 403)


def test_a_session_within_its_limits_is_written_at_most_once_a_minute():
    ana = enrolled("ana", "supervisor")
    client = signed_in(ana)
    data, expires = stored(client)
    seen = SessionStore(cookie(client))[SEEN_AT]
    for _ in range(3):
        assert client.get("/api/v1/awards").status_code == 200
    assert stored(client) == (data, expires)  # read, never written

    # Active every few minutes for most of a shift: still signed in, the idle stamp moved on.
    left = 600  # of the shift's absolute limit, under the idle limit
    stamps_back(
        client,
        **{SEEN_AT: SEEN_EVERY_SECONDS, SIGNED_IN_AT: settings.STAFF_SESSION_MAX_SECONDS - left},
    )
    assert client.get("/api/v1/awards").status_code == 200
    assert SessionStore(cookie(client))[SEEN_AT] >= seen
    # The row's expiry is the absolute limit's, the nearer.
    assert stored(client)[1] <= timezone.now() + timedelta(seconds=left)


def test_an_expired_staff_token_is_refused(django_user_model):
    ana = enrolled("ana", "supervisor")
    token = staff_token_issue(user=ana, revoke_others=False, actor="user:ana")
    row = StaffToken.objects.get(user=ana)
    event = AuditEvent.objects.filter(kind="staff_token.issued").latest("sequence")
    assert event.payload["expires_at"] == row.expires_at.isoformat()
    days = (row.expires_at - row.created_at).total_seconds() / 86400
    assert round(days) == settings.STAFF_TOKEN_DAYS
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert client.get("/api/v1/awards").status_code == 200

    StaffToken.objects.filter(pk=row.pk).update(expires_at=timezone.now())  # its days ran out
    before = AuditEvent.objects.count()
    refused = client.get("/api/v1/awards")
    assert refused.status_code == 401
    assert "this staff token expired" in refused.json()["error"]["message"]
    assert AuditEvent.objects.count() == before


def test_a_token_s_expiry_moved_by_sql_is_reported():
    ana = enrolled("ana", "supervisor")
    staff_token_issue(user=ana, revoke_others=False, actor="user:ana")
    assert verify_full().ok
    token = StaffToken.objects.get(user=ana)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE jackpot_stafftoken SET expires_at = expires_at + interval '10 years' "
            "WHERE id = %s",
            [token.pk],
        )
    report = verify_full()
    assert f"staff token {token.pk}: the row's expires_at differ from its events" in (
        report.problems
    )


def test_sign_in_gives_a_new_key_and_sign_out_ends_the_session():
    ana = enrolled("ana", "supervisor")
    client = Client()
    assert client.get("/floor/login/").status_code == 200
    assert password_step(client, "ana")["Location"] == STEP
    pending = cookie(client)
    assert code_step(client, code(ana))["Location"] == "/floor/awards/"
    signed = cookie(client)
    assert signed != pending and len(rows()) == 1  # the pending sign-in's row is gone
    assert rows()[0][0] == row_key(signed) != signed
    assert with_cookie(pending).get("/floor/awards/")["Location"].startswith(settings.LOGIN_URL)
    assert client.get("/floor/awards/").status_code == 200

    assert client.post("/floor/logout/").status_code == 302
    assert not [row for row in rows() if row[0] == row_key(signed)]
    assert with_cookie(signed).get("/floor/awards/")["Location"].startswith(settings.LOGIN_URL)


def test_clearsessions_removes_what_can_no_longer_load():
    ana, bob = enrolled("ana", "supervisor"), enrolled("bob", "supervisor")
    stays, idle = signed_in(ana), signed_in(bob)
    store = SessionStore(cookie(idle))
    store[SEEN_AT] -= settings.STAFF_SESSION_IDLE_SECONDS
    store.save()  # its row's expiry is now past
    call_command("clearsessions")
    assert [key for key, _ in rows()] == [row_key(cookie(stays))]
    assert stays.get("/api/v1/awards").status_code == 200
    assert idle.get("/floor/awards/")["Location"].startswith(settings.LOGIN_URL)
