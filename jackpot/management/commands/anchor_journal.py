"""anchor_journal --out DIR: write every chain's head to a new anchor file in DIR.

The file (`journal-anchor-<UTC time>.json`, with `<file>.sha256` beside it) holds each chain's
last sequence and hash, the UTC time and the database's identity; an existing file is never
overwritten. Copy DIR to storage outside the database's reach; `verify_journal --anchors DIR`
checks the live chains against every anchor (jackpot.audit.anchors).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from core.replicas import replica_reads
from jackpot.audit.anchors import write_anchor


class Command(BaseCommand):
    help = "Anchor every audit chain's head in a new file outside the database."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", type=Path, required=True, metavar="DIR")

    def handle(self, *args: Any, **options: Any) -> None:
        with replica_reads():
            path = write_anchor(options["out"])
        self.stdout.write(f"anchored: {path}")
