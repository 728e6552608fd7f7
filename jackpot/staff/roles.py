"""The staff's roles, as Django groups."""

from __future__ import annotations

from django.contrib.auth.models import Group

#: The staff's roles. `surveillance` reviews the video of a win before its approval
#: (`jackpot.awards.surveillance`); it reads the award queue and records reviews, nothing else. A
#: `manager` takes the money decisions above a supervisor's (a referral's decision) and
#: configures nothing; an admin configures and decides no money (`jackpot.staff.duties`).
ROLES = ("supervisor", "auditor", "admin", "surveillance", "manager")


def role_group(role: str) -> Group:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}")
    group, _ = Group.objects.get_or_create(name=role)
    return group
