"""bootstrap_admin USERNAME: the operator makes one of a fresh install's first two admins.

A two-person change needs two admins, and a fresh install has none: the operator, who holds the
database, makes them (`jackpot.staff.accounts.bootstrap_admin`), each with a temporary password
printed once, to be changed at the first sign-in (with the second factor enrolled then), and the
activation code that enrollment needs (`jackpot.staff.second_factor.activation_issue`, issued by the
operator: no admin exists yet to issue it; every later one comes from a second admin). Refused
(exit 1) once two active admins exist: every later admin is proposed by one admin and
approved by another. Audited as `staff.bootstrapped` on the `admin` chain.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from jackpot.staff.accounts import BootstrapRefused, bootstrap_admin
from jackpot.staff.second_factor import (
    ACTIVATION_HOURS,
    activation_issue,
    enrolled,
    journal_enrolled,
)


class Command(BaseCommand):
    help = "Make one of the first two admins of a fresh install (refused once two exist)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with transaction.atomic():
                password = bootstrap_admin(
                    username=options["username"], actor="system:bootstrap_admin"
                )
                account = User.objects.get(username=options["username"])
                has_one = enrolled(account) or journal_enrolled(account)
                activation = None if has_one else activation_issue(subject=account, user=None)
        except BootstrapRefused as refused:
            raise CommandError(str(refused)) from None
        self.stdout.write(
            f"{options['username']}: admin, temporary password {password} (to change at the "
            "first sign-in)"
            + (
                f", activation code {activation} (to set up the second factor then; valid "
                f"{ACTIVATION_HOURS} hours)"
                if activation
                else ""
            )
        )
