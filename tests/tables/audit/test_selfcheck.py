"""`manage.py selfcheck` (compliance requirement 27): the database, its migrations, the journal
(chains, the meter equal to the ledger) and the approved configuration checksum; exit status 0
with a short report, 1 naming what failed. How gunicorn runs it before it binds is in
tests/test_production.py."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from io import StringIO
from types import MappingProxyType

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.test import override_settings

from core import code_digest
from jackpot.models import Transfer
from jackpot.money.canonical import canonical_json
from jackpot.pools import configuration
from rules import paytables
from tests.conftest import uth_seat

pytestmark = pytest.mark.django_db


def selfcheck(*args: str) -> tuple[int, str]:
    out = StringIO()
    try:
        call_command("selfcheck", *args, stdout=out)
    except SystemExit as exit:
        return int(exit.code or 0), out.getvalue()
    return 0, out.getvalue()


def approved() -> str:
    return configuration.config_checksum()


def test_a_sound_database_passes_with_the_approved_checksum(floor):
    floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    with override_settings(
        JACKPOT_CONFIG_SHA256=approved(),
        JACKPOT_CODE_SHA256=code_digest.installed(),
        SELFCHECK_REQUIRE_PIN=True,
    ):
        status, out = selfcheck()
    assert status == 0, out
    lines = out.splitlines()
    assert lines[0] == "selfcheck passed"
    assert [line.split()[:2] for line in lines[1:]] == [
        ["database", "ok"],
        ["migrations", "ok"],
        ["journal", "ok"],
        ["configuration", "ok"],
        ["code", "ok"],
        ["anchors", "ok"],
    ]
    assert "meter and reserve equal the ledger" in out

    with override_settings(JACKPOT_CONFIG_SHA256=approved()):
        status, out = selfcheck("--json")
    report = json.loads(out)
    assert status == 0 and report["ok"] is True and report["checksum"] == approved()
    assert {item["name"]: item["status"] for item in report["items"]} == {
        "database": "ok",
        "migrations": "ok",
        "journal": "ok",
        "configuration": "ok",
        "code": "unpinned",  # the test settings approve no code (none required outside production)
        "anchors": "ok",
    }


def test_a_missing_pin_fails_where_required_and_is_reported_elsewhere():
    with override_settings(JACKPOT_CONFIG_SHA256="", SELFCHECK_REQUIRE_PIN=False):
        status, out = selfcheck()
    assert status == 0, out
    assert "configuration  unpinned" in out and approved() in out
    with override_settings(JACKPOT_CONFIG_SHA256="", SELFCHECK_REQUIRE_PIN=True):
        status, out = selfcheck()
    assert status == 1
    assert out.splitlines()[0] == "selfcheck FAILED"
    assert "configuration  failed    no approved checksum" in out


@pytest.mark.parametrize("pin", ["0" * 64, "not-a-checksum"])
def test_a_wrong_pin_fails(pin):
    with override_settings(JACKPOT_CONFIG_SHA256=pin):
        status, out = selfcheck("--json")
    report = json.loads(out)
    assert status == 1 and report["ok"] is False
    statuses = {item["name"]: item["status"] for item in report["items"]}
    assert statuses["configuration"] == "failed" and statuses["anchors"] == "ok"


def test_a_tampered_journal_fails(floor):
    floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1), uth_seat(2)]})
    # A superuser went around the database's protection (rolled back with the test).
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending foreign key checks
        cursor.execute("ALTER TABLE jackpot_transfer DISABLE TRIGGER USER")
        cursor.execute(
            "UPDATE jackpot_transfer SET amount_cents = amount_cents + 100 WHERE id = %s",
            [Transfer.objects.latest("pk").pk],
        )
        cursor.execute("ALTER TABLE jackpot_transfer ENABLE TRIGGER USER")
    with override_settings(JACKPOT_CONFIG_SHA256=approved()):
        status, out = selfcheck()
    assert status == 1
    assert "journal        failed    chain table-" in out
    assert "content does not match its hash" in out


def test_a_counter_moved_outside_the_ledger_fails(floor):
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE jackpot_pool SET meter_units = meter_units + 100000 WHERE id = %s",
            [floor.pool_id],
        )
    status, out = selfcheck()
    assert status == 1
    assert "meter account = meter counter" in out


def test_a_migration_not_applied_fails_and_skips_the_journal():
    MigrationRecorder(connection).migration_qs.filter(
        app="jackpot", name="0009_pool_seed_positive"
    ).delete()
    status, out = selfcheck()
    assert status == 1
    assert "migrations     failed    1 not applied: jackpot.0009_pool_seed_positive" in out
    assert "journal        skipped" in out


def test_a_database_of_a_newer_build_fails():
    MigrationRecorder(connection).record_applied("jackpot", "9999_from_a_newer_build")
    status, out = selfcheck()
    assert status == 1
    assert "applied but unknown to this build: jackpot.9999_from_a_newer_build" in out


def test_the_checksum_is_the_sha256_of_the_canonical_money_configuration():
    status, out = selfcheck("--print-checksum")
    assert status == 0 and out.strip() == approved()
    _, content = selfcheck("--print-configuration")
    assert hashlib.sha256(content.strip().encode()).hexdigest() == approved()
    shown = json.loads(content)
    assert canonical_json(shown) == content.strip().encode()
    assert shown["progressive_paytables"]["uth-progressive/2026-1"]["envy_cents"] == 50_000
    assert shown["paytables"]["uth-blind/2026-1"]["odds"]["flush"] == "3:2"
    assert shown["units"]["units_per_cent"] == 10_000
    assert shown["routes"]["jackpot_hit"] == {
        "debit": "meter",
        "credit": "awards_pending",
        "pending_credit": None,
    }
    assert ["meter", "house"] in shown["correction_routes"]  # a correction's pairs are covered
    assert len(shown["correction_routes"]) == 8
    assert shown["pool_defaults"]["model"]["seed_cents"] == 1_000_000


def test_the_checksum_changes_with_what_decides_money(monkeypatch):
    before = approved()
    # A paytable edited in place: the envy paid 1 cent more
    edited = replace(paytables.PROGRESSIVE_2026_1, envy_cents=50_001)
    monkeypatch.setattr(
        configuration, "PROGRESSIVE_PAYTABLES", MappingProxyType({edited.version: edited})
    )
    assert approved() != before
    monkeypatch.undo()
    assert approved() == before
    # A box's odds
    blind = paytables.UTH_BLIND_2026_1
    odds = {**blind.odds, paytables.Category.FLUSH: paytables.Payout(2)}
    changed = {**paytables.PAYTABLES, blind.version: replace(blind, odds=odds)}
    monkeypatch.setattr(configuration, "PAYTABLES", MappingProxyType(changed))
    assert approved() != before
    monkeypatch.undo()
    # A setting named as deciding money
    with override_settings(MONEY_SETTINGS=("TIME_ZONE",)):
        with_zone = approved()
        assert with_zone != before
        with override_settings(TIME_ZONE="UTC"):
            assert approved() != with_zone
