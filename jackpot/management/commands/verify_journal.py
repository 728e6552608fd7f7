"""verify_journal: recompute the audit chains and every balance; print OK or the first break.

`--anchors DIR` also checks the live chains against every anchor file of DIR (written by
`anchor_journal`, kept outside the database): a chain rewritten or cut short since is named.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from jackpot.anchors import read_anchors
from tables.verification import verify_journal


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
        report = verify_journal(anchors)
        for unread in unreadable:
            report.fail(unread.message)
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
