"""Chain heads anchored outside the database (compliance requirement 33): an insider who holds
the journal's key rewrites a chain so that every link verifies, or cuts events off its end with
its head row; plain verify passes, verify against the anchors names the chain and sequence."""

from __future__ import annotations

import hashlib
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from jackpot.models import AuditChain, AuditEvent, DatabaseIdentity
from jackpot.staff.accounts import password_reset
from tests.jackpot.tamper import keyed_link, play_rounds, rehash_chain, superuser_sql, verify

pytestmark = pytest.mark.django_db


@pytest.fixture
def played(db):
    return play_rounds()


def verify_with(directory) -> tuple[int, list[str]]:
    out = StringIO()
    try:
        call_command("verify_journal", "--anchors", str(directory), stdout=out)
    except SystemExit as stop:
        return int(stop.code or 0), out.getvalue().splitlines()
    return 0, out.getvalue().splitlines()


def anchor(directory) -> str:
    out = StringIO()
    call_command("anchor_journal", "--out", str(directory), stdout=out)
    return out.getvalue().split("anchored: ", 1)[1].strip()


def test_an_anchor_holds_every_head_the_time_and_the_database(played, tmp_path):
    path = anchor(tmp_path)
    data = Path(path).read_bytes()
    body = json.loads(data)
    assert body["format"] == 1 and body["anchored_at"].endswith("+00:00")
    assert body["database"] == str(DatabaseIdentity.objects.get(pk=1).token)
    heads = {(c.key, c.sequence, c.head_hash) for c in AuditChain.objects.all()}
    assert {(h["chain"], h["sequence"], h["hash"]) for h in body["chains"]} == heads
    checksum = Path(path + ".sha256").read_text()
    assert checksum == f"{hashlib.sha256(data).hexdigest()}  {path.rsplit('/', 1)[1]}\n"
    second = anchor(tmp_path)  # a new file each time, the first one untouched
    assert second != path and Path(path).read_bytes() == data
    verify()  # a full run stores its checkpoint (a new event, on a chain of its own)
    counts = verify()[1][0].split(": ", 1)[1]  # and the next finds nothing to add
    assert verify_with(tmp_path) == (0, [f"OK: {counts}, 2 anchors"])


def test_a_chain_rewritten_with_the_key_passes_plain_verify_not_the_anchors(played, tmp_path):
    table_chain = f"table-{played.uth[0].table_id}"
    anchored = AuditChain.objects.get(key=table_chain).sequence
    anchor(tmp_path)
    # Who opened the round: no row repeats it (a settlement's closer is on the round's row,
    # which the walk compares), so only the anchors can tell.
    victim = AuditEvent.objects.get(chain=table_chain, sequence=1)
    assert victim.kind == "round.opened"
    superuser_sql(
        "UPDATE jackpot_auditevent SET actor = 'terminal:someone-else' WHERE id = %s", [victim.pk]
    )
    rehash_chain(table_chain, victim.sequence, keyed_link)

    assert verify()[0] == 0  # with the key, every link verifies again
    status, lines = verify_with(tmp_path)
    assert status == 1
    assert lines[0] == f"BROKEN at chain {table_chain} sequence {anchored}"
    assert "the chain was rewritten" in lines[1]


def test_a_chain_cut_short_is_found_by_the_anchors(played, tmp_path, django_user_model):
    """The admin chain's last events (two password resets: no money, and no row the walk holds
    to them) deleted, its head row moved back: every check but the anchors' passes."""
    dora = django_user_model.objects.create(username="dora")
    for _ in range(2):
        password_reset(subject=dora, user=dora)
    head = AuditChain.objects.get(key="admin")
    anchor(tmp_path)
    for sequence in (head.sequence, head.sequence - 1):
        superuser_sql(
            "DELETE FROM jackpot_auditevent WHERE chain = 'admin' AND sequence = %s", [sequence]
        )
    kept = AuditEvent.objects.get(chain="admin", sequence=head.sequence - 2)
    superuser_sql(
        "UPDATE jackpot_auditchain SET sequence = %s, head_hash = %s WHERE key = 'admin'",
        [kept.sequence, kept.hash],
    )

    assert verify()[0] == 0
    status, lines = verify_with(tmp_path)
    assert status == 1
    assert lines[0] == f"BROKEN at chain admin sequence {head.sequence}"
    assert "the chain is shorter than anchored" in lines[1]


def test_an_altered_or_foreign_anchor_is_reported(played, tmp_path):
    path = anchor(tmp_path)
    body = json.loads(Path(path).read_text())
    body["chains"][0]["hash"] = "0" * 64
    Path(path).write_text(json.dumps(body))
    status, lines = verify_with(tmp_path)
    assert status == 1 and "does not match its checksum" in "\n".join(lines)

    other = tmp_path / "other"
    anchor(other)
    DatabaseIdentity.objects.filter(pk=1).update(token="00000000-0000-0000-0000-000000000001")
    status, lines = verify_with(other)
    assert status == 1 and "this database is 00000000-0000-0000-0000-000000000001" in lines[1]

    empty = tmp_path / "empty"
    empty.mkdir()
    assert verify_with(empty)[0] == 1


def test_the_anchor_timer_runs_daily_and_the_nightly_check_reads_the_anchors():
    systemd = Path(__file__).resolve().parents[3] / "deploy" / "systemd"
    assert "OnCalendar=*-*-* 06:00:00" in (systemd / "jackpot-anchor.timer").read_text()
    service = (systemd / "jackpot-anchor.service").read_text()
    assert "manage.py anchor_journal --out /var/lib/jackpot-anchors" in service
    verify_unit = (systemd / "jackpot-verify.service").read_text()
    assert "manage.py verify_journal --anchors /var/lib/jackpot-anchors" in verify_unit
