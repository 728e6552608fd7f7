"""What the second person of a two-person step shows: a fresh second-factor code given with the
request (`Presence`, made by `jackpot.staff.second_factor.present`). A session or a staff token
never stands in for it; every two-person step checks it (`presence_refused`)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User

from core.errors import Forbidden


def required() -> bool:
    """Whether staff must sign in with a second factor (`STAFF_SECOND_FACTOR_REQUIRED`: always
    in production, off for `make run`'s demo unless asked for)."""
    return bool(settings.STAFF_SECOND_FACTOR_REQUIRED)


#: The body field, and the form field, a two-person step's code travels in.
PRESENCE_FIELD = "second_factor_code"


@dataclass(frozen=True)
class Presence:
    """A fresh second-factor code `user_id` gave with this request (`present`): what the second
    person of a two-person step shows (approve an award or a jackpot's void, decide a
    referral, approve a change). A session or a staff token never stands in for it."""

    user_id: int


def presence_refused(user: User, presence: Presence | None) -> None:
    """The two-person step's own check that its caller asked `user` for a code (`present`):
    403 `second_factor_code_required` otherwise, where the second factor is required."""
    if required() and (presence is None or presence.user_id != user.pk):
        raise Forbidden(
            "second_factor_code_required",
            "this step is the second person's: it needs a fresh code of their second factor",
            param=PRESENCE_FIELD,
        )
