"""grant_app_role ROLE: give the application's PostgreSQL role exactly its privileges.

Run as the database's owner (DATABASE_URL of the owner) after every `migrate`: the privileges are
declared in `jackpot.audit.grants` and applied to every table and sequence the schema has now, in
one transaction, then checked. `--check` only checks (exit status 1 and the differences). Refuses a
role that owns objects of the schema, is a superuser, or inherits the owner's role.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from jackpot.audit import grants


class Command(BaseCommand):
    help = "Grant the application's role exactly its privileges (run as the owner after migrate)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("role", help="the application's role, e.g. jackpot_app")
        parser.add_argument(
            "--check", action="store_true", help="change nothing; report any difference"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        role: str = options["role"]
        if not options["check"]:
            refused = grants.role_problems(role)
            if refused:
                raise CommandError("; ".join(refused))
            with transaction.atomic():
                done = grants.grant(role)
            for name, kind, privileges in done:
                self.stdout.write(f"{kind} {name}: {', '.join(sorted(privileges))}")
        problems = grants.problems(role)
        if problems:
            for problem in problems:
                self.stderr.write(problem)
            raise CommandError(
                f"{role}: {len(problems)} privileges differ from jackpot.audit.grants"
            )
        self.stdout.write(f"OK: {role} has exactly the privileges of jackpot.audit.grants")
