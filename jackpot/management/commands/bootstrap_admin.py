"""bootstrap_admin USERNAME: the operator makes one of a fresh install's first two admins.

A two-person change needs two admins, and a fresh install has none: the operator, who holds the
database, makes them (`jackpot.staff.bootstrap_admin`), each with a temporary password printed
once, to be changed at the first sign-in (with the second factor enrolled then). Refused (exit 1)
once two active admins exist: every later admin is proposed by one admin and approved by another.
Audited as `staff.bootstrapped` on the `admin` chain.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from jackpot.staff import BootstrapRefused, bootstrap_admin


class Command(BaseCommand):
    help = "Make one of the first two admins of a fresh install (refused once two exist)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            password = bootstrap_admin(username=options["username"], actor="system:bootstrap_admin")
        except BootstrapRefused as refused:
            raise CommandError(str(refused)) from None
        self.stdout.write(
            f"{options['username']}: admin, temporary password {password} (to change at the "
            "first sign-in)"
        )
