"""Who may call what: every endpoint against every kind of caller.

401 for missing or wrong credentials, 403 for the right credentials without the rights; the
refusals are logged with who and from where. A caller that passes the rights check here gets an
answer about the request itself (200, 400 or 404), never about its credentials.
"""

from __future__ import annotations

import logging

import pytest
from django.test import Client

from tests.staff import api_clients, person

pytestmark = pytest.mark.django_db

ROLES = (
    "anonymous",
    "bad_token",
    "own_terminal",
    "other_terminal",
    "supervisor",
    "auditor",
    "admin",
)


@pytest.fixture
def callers(floor, django_user_model) -> dict[str, Client]:
    clients = {
        "anonymous": Client(),
        "bad_token": Client(HTTP_AUTHORIZATION="Bearer staff_not-a-token"),
        "own_terminal": Client(HTTP_AUTHORIZATION=f"Bearer {floor.uth[0].token}"),
        "other_terminal": Client(HTTP_AUTHORIZATION=f"Bearer {floor.uth[1].token}"),
    }
    clients.update(api_clients(supervisor="supervisor", auditor="auditor", admin="admin"))
    return clients


PUBLIC = dict.fromkeys(ROLES, 200)
STAFF_READ = {
    "anonymous": 401,
    "bad_token": 401,
    "own_terminal": 401,
    "other_terminal": 401,
    "supervisor": 200,
    "auditor": 200,
    "admin": 200,
}
AUDIT = {**STAFF_READ, "supervisor": 403}
# An award that does not exist: whoever passes the rights check gets 404, or 400 for the
# missing note, reason or payment method, which is read first.
# An admin configures and decides no money (compliance 52, jackpot.staff.duties): 403.
SUPERVISE = {**STAFF_READ, "supervisor": 404, "auditor": 403, "admin": 403}
SUPERVISE_TEXT = {**SUPERVISE, "supervisor": 400}
# A terminal posting an empty body to its own table passes the rights check and gets 400.
TERMINAL = {
    "anonymous": 401,
    "bad_token": 401,
    "own_terminal": 400,
    "other_terminal": 403,
    "supervisor": 401,
    "auditor": 401,
    "admin": 401,
}

# A pool's parameter changes are the admins': others get 403; an admin's empty proposal is 400.
ADMIN_ONLY = {**STAFF_READ, "supervisor": 403, "auditor": 403}
ADMIN_TEXT = {**ADMIN_ONLY, "admin": 400}
ADMIN_MISSING = {**ADMIN_ONLY, "admin": 404}

# The session registers: auditors, managers and supervisors; an admin configures, 403.
REGISTERS = {**STAFF_READ, "admin": 403}

MATRIX = [
    ("get", "/api/v1/pools/{pool}", PUBLIC),
    ("get", "/api/v1/pools/{pool}/meter", PUBLIC),
    ("get", "/api/v1/rules/paytables", PUBLIC),
    ("get", "/api/v1/pools/{pool}/report", STAFF_READ),
    ("get", "/api/v1/pools/{pool}/liability", AUDIT),
    # The liability statement is read only: even its readers cannot post to it.
    ("post", "/api/v1/pools/{pool}/liability", {**AUDIT, "auditor": 405, "admin": 405}),
    ("get", "/api/v1/awards", STAFF_READ),
    ("get", "/api/v1/awards/export.csv?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z", AUDIT),
    ("post", "/api/v1/awards/exports", {**AUDIT, "auditor": 202, "admin": 202}),
    ("get", "/api/v1/awards/exports/999999", {**AUDIT, "auditor": 404, "admin": 404}),
    ("get", "/api/v1/awards/exports/999999/download", {**AUDIT, "auditor": 404, "admin": 404}),
    ("get", "/api/v1/journal", AUDIT),
    ("get", "/api/v1/events", STAFF_READ),
    ("post", "/api/v1/events", {**STAFF_READ, "supervisor": 405, "auditor": 405, "admin": 405}),
    ("get", "/api/v1/notifications", AUDIT),
    ("get", "/api/v1/code", AUDIT),  # the code proved (compliance 59)
    ("get", "/api/v1/journal/verify", AUDIT),
    ("post", "/api/v1/awards/999999/verify", SUPERVISE_TEXT),
    ("post", "/api/v1/awards/999999/approve", SUPERVISE),
    ("post", "/api/v1/awards/999999/pay", SUPERVISE_TEXT),  # the method is required
    ("get", "/api/v1/awards/999999/winner", {**AUDIT, "auditor": 404, "admin": 404}),
    (
        "get",
        "/api/v1/awards/register?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z",
        AUDIT,
    ),
    # The session registers are the money's people's books: not an admin's (tables.api.registers).
    ("get", "/api/v1/registers/withheld?from=2026-01-01&to=2026-01-02", REGISTERS),
    ("get", "/api/v1/registers/displayed?from=2026-01-01&to=2026-01-02", REGISTERS),
    ("post", "/api/v1/awards/999999/void", SUPERVISE_TEXT),
    ("post", "/api/v1/awards/999999/void/confirm", SUPERVISE),
    ("post", "/api/v1/awards/999999/void/cancel", SUPERVISE_TEXT),
    ("get", "/api/v1/pools/{pool}/changes", ADMIN_ONLY),
    ("post", "/api/v1/pools/{pool}/changes", ADMIN_TEXT),
    ("post", "/api/v1/pools/{pool}/changes/999999/approve", ADMIN_MISSING),
    ("post", "/api/v1/pools/{pool}/changes/999999/reject", ADMIN_TEXT),
    ("post", "/api/v1/tables/{table}/rounds", TERMINAL),
    ("post", "/api/v1/tables/{table}/rounds/x/result", TERMINAL),
    ("post", "/api/v1/tables/{table}/rounds/x/void", TERMINAL),
]


@pytest.mark.parametrize(("method", "path", "expected"), MATRIX, ids=[m[1] for m in MATRIX])
def test_every_endpoint_for_every_caller(callers, floor, method, path, expected, caplog):
    url = path.format(pool=floor.pool_id, table=floor.uth[0].table_id)
    for role in ROLES:
        client = callers[role]
        if method == "get":
            response = client.get(url)
        else:
            response = client.post(url, {}, content_type="application/json")
        assert response.status_code == expected[role], (role, response.content[:200])
        if response.status_code in (401, 403):
            assert response.json()["error"]["type"] in ("authentication", "permission")


def test_refusals_are_logged_with_who_and_where(callers, floor, caplog):
    with caplog.at_level(logging.WARNING, logger="jackpot.security"):
        callers["auditor"].post("/api/v1/awards/1/verify", {}, content_type="application/json")
        Client(REMOTE_ADDR="10.1.2.3").get("/api/v1/journal")
    messages = [
        record.getMessage() for record in caplog.records if record.name == "jackpot.security"
    ]
    assert any("PermissionDenied" in m and "user=auditor" in m for m in messages), messages
    assert any("NotAuthenticated" in m and "from=10.1.2.3" in m for m in messages), messages


def test_staff_in_the_browser_use_their_session(client, django_user_model, floor):

    user = person("ida-browser", "auditor")
    assert client.get("/api/v1/journal").status_code == 401
    client.force_login(user)
    assert client.get("/api/v1/journal").status_code == 200
    # Unsafe methods from a session need the CSRF token, like any Django form.
    supervisor = person("ana-browser", "supervisor")
    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(supervisor)
    refused = csrf_client.post("/api/v1/awards/1/verify", {"note": "ok"})
    assert refused.status_code == 403 and "CSRF" in refused.json()["error"]["message"]
