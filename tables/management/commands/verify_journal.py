"""verify_journal: verify the journal from its first event (a full run); print OK or the first
break. A passing run stores a checkpoint, and every run is recorded
(`tables.audit.verification_jobs`).

`--anchors DIR` also checks the live chains against every anchor file of DIR (written by
`anchor_journal`, kept outside the database): a chain rewritten or cut short since is named.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from core.replicas import replica_reads
from jackpot.audit.anchors import read_anchors
from jackpot.models import VerificationTrigger
from tables.audit.verification import keep_checkpoint, verify_full
from tables.audit.verification_jobs import record


class Command(BaseCommand):
    help = "Verify the tamper-evident journal: hash chains, sequences and balances."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print the full report as JSON")
        parser.add_argument(
            "--anchors",
            type=Path,
            metavar="DIR",
            help="also check the chains against the anchor files of DIR (anchor_journal)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        anchors, unreadable = read_anchors(options["anchors"]) if options["anchors"] else ([], [])
        started = timezone.now()
        with replica_reads():
            report = verify_full(anchors)
        for unread in unreadable:
            report.fail(unread.message)
        keep_checkpoint(report)
        record(report, trigger=VerificationTrigger.COMMAND, started=started)
        if options["json"]:
            self.stdout.write(json.dumps(report.as_body().model_dump(mode="json"), indent=2))
        elif report.ok:
            checked = f", {len(anchors)} anchors" if options["anchors"] else ""
            self.stdout.write(
                f"OK: {report.chains} chains, {report.events} events, {report.transfers} transfers"
                + checked
            )
        else:
            where = (
                f"chain {report.broken_chain} sequence {report.broken_sequence}"
                if report.broken_chain
                else "balances"
            )
            self.stdout.write(f"BROKEN at {where}")
            for problem in report.problems:
                self.stdout.write(f"  {problem}")
        if not report.ok:
            raise SystemExit(1)
