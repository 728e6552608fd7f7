"""Mutual TLS for terminals (compliance requirement 39): with TERMINAL_CLIENT_CERTIFICATES on, a
terminal's token counts only beside a client certificate the proxy verified and that names the
token's table. The headers here are the ones the proxy sets (deploy/nginx/jackpot.conf.in); the
proxy itself, with real certificates, is driven by tests/cluster/test_client_certificates.py.
"""

from __future__ import annotations

import logging

import pytest

from jackpot.models import AuditEvent
from tables.api.authentication import certificate_table
from tests.conftest import make_floor, uth_seat

pytestmark = pytest.mark.django_db


def _open(terminal, round_id: str, **headers: str):
    return terminal.post("/rounds", {"round_id": round_id, "seats": [uth_seat(1)]}, **headers)


def _certificate(table_id: int, verify: str = "SUCCESS") -> dict[str, str]:
    return {
        "HTTP_X_CLIENT_VERIFY": verify,
        "HTTP_X_CLIENT_SUBJECT": f"CN=table-{table_id},OU=Terminals,O=Club",
    }


@pytest.mark.parametrize(
    ("verify", "subject", "table"),
    [
        ("SUCCESS", "CN=table-7,OU=Terminals,O=Club", "7"),
        ("SUCCESS", "O=Club,CN=table-12", "12"),
        ("SUCCESS", "CN=table-7,CN=table-8", None),  # two names: neither is believed
        ("SUCCESS", "CN=table-07", None),
        ("SUCCESS", "CN=terminal-7", None),
        ("SUCCESS", "", None),
        ("FAILED:certificate has expired", "CN=table-7", None),
        ("NONE", "", None),
        ("", "CN=table-7", None),
    ],
)
def test_the_table_a_certificate_names(verify, subject, table):
    assert certificate_table(verify, subject) == table


def test_off_by_default_a_token_is_enough():
    floor = make_floor(uth_tables=1)
    assert _open(floor.uth[0], "r-1").status_code == 201


def test_on_a_token_needs_the_certificate_of_its_own_table(settings, caplog):
    settings.TERMINAL_CLIENT_CERTIFICATES = True
    floor = make_floor(uth_tables=2)
    mine, other = floor.uth
    caplog.set_level(logging.WARNING, logger="jackpot.security")
    events = AuditEvent.objects.count()

    refused = {
        "no certificate": _open(mine, "r-1"),
        "not verified": _open(mine, "r-1", **_certificate(mine.table_id, "FAILED:unable to get")),
        "another table's": _open(mine, "r-1", **_certificate(other.table_id)),
    }
    for why, answer in refused.items():
        assert answer.status_code == 401, why
        assert answer.json()["error"]["code"] == "authentication_failed", why
    assert "none was presented" in refused["no certificate"].json()["error"]["message"]
    assert f"names table {other.table_id}" in refused["another table's"].json()["error"]["message"]
    assert AuditEvent.objects.count() == events  # nothing written
    # Each refusal is in the security log with the token's prefix and the address.
    lines = [r.getMessage() for r in caplog.records if "refused POST" in r.getMessage()]
    assert len(lines) == 3
    assert all("AuthenticationFailed" in line and "from=127.0.0.1" in line for line in lines)

    assert _open(mine, "r-1", **_certificate(mine.table_id)).status_code == 201
