"""The start-up self-check (compliance 27): after a restart the service refuses traffic until it
passes. `manage.py selfcheck` runs it; gunicorn before it binds, systemd before each process.

The items, in order, each ok, failed, skipped (an item before it failed) or unpinned: `database`,
`migrations` (none missing, none unknown), `journal` (the routine verification: its cost is
what was added since the newest checkpoint), `configuration` (the money configuration's checksum
equals JACKPOT_CONFIG_SHA256, required in production), `code` (the installed code's digest
equals JACKPOT_CODE_SHA256, required in production), `anchors` (readable, not writable by this
process's user where ANCHORS_SEPARATE_USER).

Invariants: it passes when no item failed or was skipped; it writes only what a passing journal
check leaves (its record and a new checkpoint) and, once the migrations are this build's, the
code's check (`jackpot.audit.code`: `code.verified`, or SE21 `code.mismatch`) unless no digest
is approved where none is required.

Each item in full: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from jackpot.audit.code import CodeCheck, code_check, code_check_record
from jackpot.models import VerificationTrigger
from jackpot.pools.configuration import config_checksum
from tables.audit.verification_jobs import run_routine

OK, FAILED, SKIPPED, UNPINNED = "ok", "failed", "skipped", "unpinned"
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class Item:
    name: str
    status: str
    detail: str


@dataclass(frozen=True)
class SelfCheckReport:
    items: tuple[Item, ...]
    checksum: str

    @property
    def ok(self) -> bool:
        return all(item.status in (OK, UNPINNED) for item in self.items)

    @property
    def failed(self) -> tuple[Item, ...]:
        return tuple(item for item in self.items if item.status in (FAILED, SKIPPED))

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "checksum": self.checksum,
            "items": [asdict(item) for item in self.items],
        }


def _database() -> Item:
    try:
        connection.ensure_connection()
        with connection.cursor() as cursor:
            if connection.vendor != "postgresql":  # make run's embedded SQLite file
                cursor.execute("SELECT 1")
                return Item(
                    "database", OK, f"{connection.vendor} {connection.settings_dict['NAME']}"
                )
            cursor.execute("SELECT current_database(), current_setting('server_version')")
            name, version = cursor.fetchone()
    except DatabaseError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return Item("database", FAILED, f"cannot be reached: {first}")
    return Item("database", OK, f"{name} on PostgreSQL {version}")


def _migrations() -> Item:
    loader = MigrationExecutor(connection).loader
    # Every migration of this build not recorded as applied, not only those before a leaf: a
    # plan to the leaves skips a migration whose successors are all recorded.
    pending = sorted(
        f"{app}.{name}"
        for app, name in loader.disk_migrations
        if app in loader.migrated_apps and (app, name) not in loader.applied_migrations
    )
    unknown = sorted(
        f"{app}.{name}"
        for app, name in loader.applied_migrations
        if app in loader.migrated_apps and (app, name) not in loader.disk_migrations
    )
    if pending:
        return Item("migrations", FAILED, f"{len(pending)} not applied: {', '.join(pending)}")
    if unknown:
        return Item(
            "migrations", FAILED, f"applied but unknown to this build: {', '.join(unknown)}"
        )
    return Item("migrations", OK, f"{len(loader.applied_migrations)} applied, none pending")


def _journal() -> Item:
    try:
        report = run_routine(VerificationTrigger.STARTUP)
    except Exception as error:  # a journal edited so badly that the check itself breaks
        return Item("journal", FAILED, f"could not be verified: {type(error).__name__}: {error}")
    if not report.ok:
        where = (
            f"chain {report.broken_chain} sequence {report.broken_sequence}: "
            if report.broken_chain
            else ""
        )
        more = f" (and {len(report.problems) - 1} more)" if len(report.problems) > 1 else ""
        return Item("journal", FAILED, f"{where}{report.problems[0]}{more}")
    return Item(
        "journal",
        OK,
        f"{report.chains} chains, {report.events} events, {report.transfers} transfers "
        f"({report.new_events} new since checkpoint {report.started_from or 'none'}); "
        f"every pool's meter and reserve equal the ledger ({len(report.balances)} pools)",
    )


def _configuration(checksum: str) -> Item:
    pinned = settings.JACKPOT_CONFIG_SHA256
    if not pinned:
        if settings.SELFCHECK_REQUIRE_PIN:
            return Item(
                "configuration",
                FAILED,
                f"no approved checksum: set JACKPOT_CONFIG_SHA256 to this build's {checksum} "
                "once it is approved",
            )
        return Item(
            "configuration",
            UNPINNED,
            f"sha256 {checksum}, not pinned (JACKPOT_CONFIG_SHA256; required in production)",
        )
    if not _SHA256.fullmatch(pinned):
        return Item(
            "configuration", FAILED, "JACKPOT_CONFIG_SHA256 is not a SHA-256 (64 hex digits)"
        )
    if pinned != checksum:
        return Item(
            "configuration",
            FAILED,
            f"this build's sha256 {checksum} is not the approved {pinned} (JACKPOT_CONFIG_SHA256)",
        )
    return Item("configuration", OK, f"sha256 {checksum} is the approved one")


def _code_status(check: CodeCheck) -> Item:
    installed = check.installed
    if not check.approved:
        if settings.SELFCHECK_REQUIRE_PIN:
            return Item(
                "code",
                FAILED,
                f"no approved digest: set JACKPOT_CODE_SHA256 to this build's {installed} "
                "once it is approved",
            )
        return Item(
            "code",
            UNPINNED,
            f"sha256 {installed}, not pinned (JACKPOT_CODE_SHA256; required in production)",
        )
    if not check.well_formed:
        return Item("code", FAILED, "JACKPOT_CODE_SHA256 is not a SHA-256 (64 hex digits)")
    if not check.matches:
        return Item(
            "code",
            FAILED,
            f"the installed code's sha256 {installed} is not the approved {check.approved} "
            "(JACKPOT_CODE_SHA256; manage.py code_digest --manifest lists its files)",
        )
    return Item("code", OK, f"sha256 {installed} is the approved one")


def _code(recordable: bool) -> Item:
    """The installed code against the approved digest; the check recorded in the journal when
    `recordable` (the database is this build's) and a digest is approved or required."""
    check = code_check()
    item = _code_status(check)
    if item.status == UNPINNED:
        return item
    if not recordable:
        return Item(item.name, item.status, f"{item.detail}; not recorded (no database)")
    try:
        with transaction.atomic():
            event = code_check_record(check)
    except DatabaseError as error:
        return Item(
            item.name, FAILED, f"{item.detail}; could not be recorded: {type(error).__name__}"
        )
    return Item(item.name, item.status, f"{item.detail} ({event.kind}, admin #{event.sequence})")


def _anchors() -> Item:
    if not settings.JOURNAL_ANCHOR_DIR:
        return Item("anchors", OK, "JOURNAL_ANCHOR_DIR not set: no anchors read")
    directory = Path(settings.JOURNAL_ANCHOR_DIR)
    try:
        entries = [directory, *sorted(directory.iterdir())]
        modes = {entry: entry.lstat() for entry in entries}
        for entry in entries[1:]:
            if stat.S_ISREG(modes[entry].st_mode):
                entry.open("rb").close()  # readable, or OSError
    except OSError as error:
        return Item("anchors", FAILED, f"{directory}: cannot be read ({error.strerror})")
    names = {entry: entry.name if entry != directory else str(directory) for entry in entries}
    open_to_others = [names[e] for e in entries if modes[e].st_mode & (stat.S_IWGRP | stat.S_IWOTH)]
    if open_to_others:
        return Item(
            "anchors",
            FAILED,
            f"writable by group or others: {', '.join(open_to_others)} "
            "(the directory 0750 at most, the files 0640)",
        )
    files = len(entries) - 1
    if not settings.ANCHORS_SEPARATE_USER:
        return Item(
            "anchors",
            OK,
            f"{files} files in {directory}, none writable by group or others "
            "(ANCHORS_SEPARATE_USER off: their owner is not checked)",
        )
    uid = os.geteuid()
    own = [names[e] for e in entries if modes[e].st_uid == uid]
    if own:
        return Item(
            "anchors",
            FAILED,
            f"owned by this service's user (uid {uid}), who could rewrite them: {', '.join(own)}; "
            "the anchors must be another user's (jackpot-anchor)",
        )
    if os.access(directory, os.W_OK):
        return Item(
            "anchors",
            FAILED,
            f"this service's user (uid {uid}) can write in {directory}: it must only read it",
        )
    return Item(
        "anchors",
        OK,
        f"{files} files in {directory}, uid {modes[directory].st_uid}'s: read-only to this service",
    )


def selfcheck() -> SelfCheckReport:
    """Run every item (see the module's docstring); an item whose premise failed is skipped."""
    checksum = config_checksum()
    items = [_database()]
    if items[-1].status == OK:
        items.append(_migrations())
    else:
        items.append(Item("migrations", SKIPPED, "the database cannot be reached"))
    if items[-1].status == OK:
        items.append(_journal())
    else:
        items.append(Item("journal", SKIPPED, "the database is not this build's"))
    items.append(_configuration(checksum))
    items.append(_code(recordable=items[1].status == OK))
    items.append(_anchors())
    return SelfCheckReport(tuple(items), checksum)
