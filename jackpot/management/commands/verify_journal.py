"""verify_journal: recompute the audit chains and every balance; print OK or the first break."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from tables.verification import verify_journal


class Command(BaseCommand):
    help = "Verify the tamper-evident journal: hash chains, sequences and balances."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print the full report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        report = verify_journal()
        if options["json"]:
            self.stdout.write(json.dumps(report.as_body().model_dump(mode="json"), indent=2))
        elif report.ok:
            self.stdout.write(
                f"OK: {report.chains} chains, {report.events} events, {report.transfers} transfers"
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
