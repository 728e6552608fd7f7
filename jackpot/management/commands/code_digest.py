"""code_digest: the digest of this build's code (core.code_digest), what an approver pins in
JACKPOT_CODE_SHA256 (docs/operations.md, "The code's digest, and approving a build").

`manage.py code_digest` prints the digest; `--manifest` prints the manifest it is taken over
(`sha256  path` a line, what the approver reads and `sha256sum -c` checks from the root). Neither
touches the database.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from core import code_digest


class Command(BaseCommand):
    help = "Print the SHA-256 of this build's code (the value to approve and pin), or its manifest."
    requires_system_checks: list[str] = []  # a build is read, not served: no checks needed

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--manifest",
            action="store_true",
            help="print the manifest the digest is taken over: one `sha256  path` a line",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["manifest"]:
            self.stdout.write(code_digest.manifest(), ending="")
        else:
            self.stdout.write(code_digest.digest())
