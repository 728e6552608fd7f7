"""reconcile: run a reconciliation now, as beat does every RECONCILE_SECONDS.

`tables.audit.reconciliation.reconcile`: from the newest checkpoint like the scheduled run, or with
`--full` from the first event like the daily one; the report is stored like a scheduled one
(without a run key)
and a failure alerts the same way (the `reconciliation.failed` event, the ERROR line); prints the
report's id and OK, or the first broken chain and every problem stored; exits 1 on failure.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from tables.audit.reconciliation import reconcile
from tables.selectors.reconciliation import reconciliation_get


class Command(BaseCommand):
    help = "Reconcile now: every pool from the journal, the chains, the meter identity; store it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument(
            "--full", action="store_true", help="verify from the first event, as the daily run"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        report = reconcile(full=options["full"])
        if options["json"]:
            body = reconciliation_get(report.pk).model_dump(mode="json")
            self.stdout.write(json.dumps(body, indent=2))
        elif report.ok:
            self.stdout.write(
                f"OK: reconciliation {report.pk}: {report.chains} chains, {report.events} events,"
                f" {report.transfers} transfers, {report.pool_count} pools,"
                f" {report.anchors} anchors"
            )
        else:
            where = (
                f"chain {report.broken_chain} sequence {report.broken_sequence}"
                if report.broken_chain
                else "balances"
            )
            self.stdout.write(f"FAILED: reconciliation {report.pk}, broken at {where}")
            for problem in report.problems:
                self.stdout.write(f"  {problem}")
        if not report.ok:
            raise SystemExit(1)
