"""book_figures: the figures a restored backup must reproduce (compliance requirement 30).

Per pool the meter, the hit count and the awards won by kind, and every chain's head
(`jackpot.selectors.book_figures`), read in one snapshot. `--json` prints them as sorted JSON,
so that two databases' figures compare with `diff` (deploy/restore-drill.sh does).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from core.replicas import replica_reads
from jackpot.selectors import book_figures


class Command(BaseCommand):
    help = "Per pool: meter, hit count, awards won by kind; every chain's head."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print them as sorted JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        with replica_reads():
            figures = book_figures()
        if options["json"]:
            self.stdout.write(json.dumps(figures, indent=2, sort_keys=True))
            return
        for pool_id, pool in figures["pools"].items():
            won = ", ".join(
                f"{kind}: {each['count']}, {each['cents']} cents"
                for kind, each in pool["won"].items()
            )
            self.stdout.write(
                f"pool {pool_id} ({pool['name']}): meter {pool['meter_cents']} cents "
                f"(version {pool['meter_version']}), hits {pool['hit_count']}, "
                f"won {pool['won_cents']} cents" + (f" ({won})" if won else "")
            )
        chains = figures["chains"]
        events = sum(head["sequence"] for head in chains.values())
        self.stdout.write(f"chains: {len(chains)}, {events} events")
        for key, head in chains.items():
            self.stdout.write(f"  {key} #{head['sequence']} {head['head_hash']}")
