"""Separation of duties (compliance 52, as casinos' internal controls require): an account that
configures never decides money.

- Configuring: the `admin` role (staff, terminals, parameters) or Django's admin site
  (`is_staff`, `is_superuser`). Deciding money: the `supervisor` role (verify, approve, pay,
  void an award; void a stuck round) and the `manager` role (the same, and a referral's decision;
  a manager configures nothing).
- No account holds both: a staff change that would give them refuses (`jackpot.staff.accounts`), and
  so does the database at commit (the constraint triggers of migration jackpot 0026, on
  `auth_user_groups`, `auth_user` and `auth_group`).
- No money step is taken by an account that configures at that moment, whatever else it holds
  (403 `separation_of_duties`, `refuse_configurer`, from every step of `jackpot.awards.workflow` and
  the round's supervisor void); the award's actor columns and a referral's decision refuse it in the
  database too (migration jackpot 0026).

The account is read from the database at the step, not from the request's cached user.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Q

from core.errors import Forbidden

#: The roles that decide money: they configure nothing.
MONEY_ROLES = ("supervisor", "manager")
#: The role that configures (staff, terminals, parameters); `is_staff` and `is_superuser` too.
CONFIGURING_ROLES = ("admin",)
#: A referral's decision (`jackpot.awards.workflow.award_referral_decide`): a manager's alone.
MANAGER = "manager"


def configures(user: User) -> bool:
    """Whether `user`, as the database has it now, configures: the admin role, `is_staff` or
    `is_superuser`."""
    return (
        User.objects.filter(pk=user.pk)
        .filter(Q(is_staff=True) | Q(is_superuser=True) | Q(groups__name__in=CONFIGURING_ROLES))
        .exists()
    )


def refuse_configurer(user: User, *, doing: str) -> None:
    """403 `separation_of_duties` when `user` configures: it may not be `doing` (a money step)."""
    if configures(user):
        raise Forbidden(
            "separation_of_duties",
            f"{user.get_username()} configures (the admin role or the admin site) and so may not "
            f"{doing}: money decisions are a supervisor's or a manager's, who configure nothing",
        )


def mixes(roles: Iterable[str], *, is_staff: bool, is_superuser: bool) -> bool:
    """Whether an account with `roles` and these flags would both configure and decide money."""
    held = set(roles)
    configuring = is_staff or is_superuser or bool(held.intersection(CONFIGURING_ROLES))
    return configuring and bool(held.intersection(MONEY_ROLES))


#: The constraint triggers of migration jackpot 0026 that check an account's roles and flags.
ROLE_CONSTRAINTS = "jackpot_duties_groups, jackpot_duties_flags, jackpot_duties_group_name"


def defer_checks() -> None:
    """Check an account's roles and flags at commit again, for the rest of the transaction: a
    change that takes one power away and gives another passes through a state that mixes them,
    and `jackpot.money.ledger.record` makes every constraint immediate. The next `record` (the
    change's own event) or the commit checks the account as the change leaves it."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"SET CONSTRAINTS {ROLE_CONSTRAINTS} DEFERRED")
