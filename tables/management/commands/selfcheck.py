"""selfcheck: the start-up self-check (compliance requirement 27, `tables.audit.selfcheck`).

Exit status 0 when it passes, 1 when an item failed (the report names it). `--json` prints the
report as JSON; `--print-checksum` prints only this build's configuration checksum (the value an
operator approves and pins in JACKPOT_CONFIG_SHA256), `--print-configuration` the canonical JSON
it is taken over, and neither touches the database.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from jackpot.pools.configuration import config_checksum, configuration_json
from tables.audit.selfcheck import selfcheck


class Command(BaseCommand):
    help = (
        "The start-up self-check: database, migrations, the journal (chains, meter = ledger) "
        "and the approved configuration checksum. Exit status 1 when any fails."
    )
    requires_system_checks: list[str] = []  # the self-check is its own; settings are imported

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument(
            "--print-checksum",
            action="store_true",
            help="print this build's configuration checksum (the value to approve and pin)",
        )
        parser.add_argument(
            "--print-configuration",
            action="store_true",
            help="print the canonical JSON the checksum is taken over (what an approver reads)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["print_checksum"]:
            self.stdout.write(config_checksum())
            return
        if options["print_configuration"]:
            self.stdout.write(configuration_json().decode())
            return
        report = selfcheck()
        if options["json"]:
            self.stdout.write(json.dumps(report.as_json(), indent=2, sort_keys=True))
        else:
            self.stdout.write("selfcheck " + ("passed" if report.ok else "FAILED"))
            for item in report.items:
                self.stdout.write(f"  {item.name:<14} {item.status:<9} {item.detail}")
        if not report.ok:
            names = ", ".join(item.name for item in report.failed)
            sys.stderr.write(f"selfcheck failed: {names}: refusing to serve\n")
            raise SystemExit(1)
