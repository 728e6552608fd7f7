"""The journal's anchors are another user's: the service that could rewrite them does not serve
(issue 20, item 5; tables.audit.selfcheck item `anchors`, deploy/systemd/jackpot-anchor.service).

Someone holding the service's user (its shell, its files) and the journal's key can rewrite the
journal so every link verifies; the anchors are what still tells. If that user could also write
the anchors, they would be rewritten to match. So, in production (`ANCHORS_SEPARATE_USER`), the
start-up self-check refuses to serve while the anchors directory or a file in it is the service
user's own, writable by it, or writable by group or others; only another user's files, readable
and not writable, pass. Each attack: the anchors set up as the insider would like them, the
self-check refuses, and the anchors, the journal and the books are as they were.
"""

from __future__ import annotations

import io
import json
import os
import pwd
import shutil
import tempfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import override_settings

from jackpot.audit.anchors import write_anchor
from jackpot.models import AuditEvent, Transfer
from tables.audit import selfcheck
from tests.conftest import uth_seat

pytestmark = pytest.mark.django_db


def _anchored(directory: Path) -> dict[str, bytes]:
    """An anchor of the journal as it stands, written as jackpot-anchor.service does (umask
    027: the directory 0750, the files 0640); every file's bytes."""
    previous = os.umask(0o027)
    try:
        write_anchor(directory)
    finally:
        os.umask(previous)
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def _report() -> dict:
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_status:
        call_command("selfcheck", "--json", stdout=out)
    assert exit_status.value.code == 1
    return json.loads(out.getvalue())


def _anchors_item(report: dict) -> dict:
    return next(item for item in report["items"] if item["name"] == "anchors")


@pytest.fixture
def played(floor):
    """A round played, then a passing self-check: its checkpoint is written, so a later run
    that finds nothing new in the journal writes nothing there."""
    floor.uth[0].post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]})
    call_command("selfcheck", stdout=io.StringIO())
    return floor


def test_anchors_the_service_user_owns_are_refused_in_production(played, tmp_path):
    directory = tmp_path / "anchors"
    anchored = _anchored(directory)
    books = (AuditEvent.objects.count(), Transfer.objects.count())
    # The attack's premise: the service's user owns the anchors, so it could make them writable
    # and rewrite them; modes that look read-only (0550/0440) do not change that.
    for path in directory.iterdir():
        path.chmod(0o440)
    directory.chmod(0o550)
    with override_settings(JOURNAL_ANCHOR_DIR=str(directory), ANCHORS_SEPARATE_USER=True):
        report = _report()
    item = _anchors_item(report)
    assert report["ok"] is False and item["status"] == "failed"
    assert f"owned by this service's user (uid {os.geteuid()})" in item["detail"]
    # Nothing moved: the anchors' bytes, the journal, the books.
    directory.chmod(0o750)
    assert {path.name: path.read_bytes() for path in sorted(directory.iterdir())} == anchored
    assert (AuditEvent.objects.count(), Transfer.objects.count()) == books


@pytest.mark.parametrize("where", ["directory", "file"])
def test_anchors_writable_by_group_or_others_are_refused_everywhere(played, tmp_path, where):
    directory = tmp_path / "anchors"
    anchored = _anchored(directory)
    books = (AuditEvent.objects.count(), Transfer.objects.count())
    target = directory if where == "directory" else next(directory.glob("*.json"))
    target.chmod(0o770 if where == "directory" else 0o660)
    # Even with the owner not checked (make cluster's one user), a mode that lets the group
    # write is refused.
    with override_settings(JOURNAL_ANCHOR_DIR=str(directory), ANCHORS_SEPARATE_USER=False):
        report = _report()
    item = _anchors_item(report)
    assert item["status"] == "failed" and "writable by group or others" in item["detail"]
    assert target.name in item["detail"] or str(target) in item["detail"]
    assert {path.name: path.read_bytes() for path in sorted(directory.iterdir())} == anchored
    assert (AuditEvent.objects.count(), Transfer.objects.count()) == books


def test_with_no_anchor_directory_nothing_is_read(played):
    with override_settings(JOURNAL_ANCHOR_DIR=None, ANCHORS_SEPARATE_USER=True):
        item = selfcheck._anchors()
    assert item.status == selfcheck.OK and "not set" in item.detail


def _as_user(user: pwd.struct_passwd) -> dict:
    """`selfcheck._anchors()` run in a child process that became `user` (root only): the
    service's user as systemd runs it, beside anchors that are not its own."""
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's result goes through the pipe
        try:
            os.close(reader)
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
            item = selfcheck._anchors()
            os.write(writer, json.dumps({"status": item.status, "detail": item.detail}).encode())
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        data = pipe.read()
    os.waitpid(child, 0)
    return json.loads(data)


@pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root")
def test_only_another_users_anchors_readable_by_the_service_pass(played, request):
    # Production's arrangement: the anchors are jackpot-anchor's (here daemon), group the
    # service's (here nobody's), 0750/0640; the service (nobody) reads them, cannot write.
    service, writer = pwd.getpwnam("nobody"), pwd.getpwnam("daemon")
    # Not pytest's directories: they are private to root; nobody must be able to reach this one.
    base = Path(tempfile.mkdtemp(prefix="jackpot-anchors-"))
    base.chmod(0o755)
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    directory = base / "anchors"
    anchored = _anchored(directory)
    for path in [directory, *directory.iterdir()]:
        os.chown(path, writer.pw_uid, service.pw_gid)
    with override_settings(JOURNAL_ANCHOR_DIR=str(directory), ANCHORS_SEPARATE_USER=True):
        passed = _as_user(service)
        # Root itself may write anywhere: as root the service would be refused.
        as_root = selfcheck._anchors()
        # The insider's way: the directory handed to the service's user.
        os.chown(directory, service.pw_uid, service.pw_gid)
        handed_over = _as_user(service)
    assert passed["status"] == "ok", passed
    assert "read-only to this service" in passed["detail"]
    assert as_root.status == "failed" and "can write" in as_root.detail
    assert (
        handed_over["status"] == "failed"
        and "owned by this service's user" in handed_over["detail"]
    )
    assert {path.name: path.read_bytes() for path in sorted(directory.iterdir())} == anchored
