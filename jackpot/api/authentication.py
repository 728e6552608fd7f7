"""Staff authentication (`Authorization: Bearer staff_...`, refused once expired, or a browser
session) and roles.

Roles are Django groups (`jackpot.staff.roles.ROLES`): supervisor, auditor, admin,
surveillance, manager. A superuser holds no role by being one; who configures decides no money
(`jackpot.staff.duties`, checked at each money step). An account holds its roles, and a staff token
acts, only as the journal explains them (`jackpot.staff.authority`): a row the service's own
database role wrote behind the journal's back gives nothing.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone
from rest_framework.authentication import (
    BaseAuthentication,
    SessionAuthentication,
    get_authorization_header,
)
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from core.errors import Forbidden
from core.tokens import hash_token
from jackpot.approvals import presence
from jackpot.models import StaffToken
from jackpot.staff import authority


def bearer_token(request: Request, prefix: str, *, what: str) -> str | None:
    """The request's bearer token; None without one; refused if it is not of the `prefix_` kind
    (a staff token on a terminal endpoint, or the reverse, gets a message that says so)."""
    parts = get_authorization_header(request).split()
    if not parts or parts[0].lower() != b"bearer":
        return None
    if len(parts) != 2:
        raise AuthenticationFailed("the Authorization header must be 'Bearer <token>'")
    token = parts[1].decode("latin-1")
    if not token.startswith(f"{prefix}_"):
        raise AuthenticationFailed(f"this endpoint takes {what} ({prefix}_...)")
    return token


class StaffTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[AbstractBaseUser, str] | None:
        token = bearer_token(request, "staff", what="a staff token, or a signed-in browser session")
        if token is None:
            return None
        found = (
            StaffToken.objects.select_related("user")
            .filter(token_hash=hash_token(token), revoked_at__isnull=True, user__is_active=True)
            .first()
        )
        if found is None:
            raise AuthenticationFailed("unknown or revoked staff token")
        if found.expires_at is None or found.expires_at <= timezone.now():
            raise AuthenticationFailed(
                "this staff token expired: issue a new one on your account page (/floor/account/)"
            )
        if not authority.token_explained(found):
            # A row the service's role can write proves nothing: the token acts only as its
            # issue in the journal says (jackpot.staff.authority).
            raise AuthenticationFailed("this staff token was not issued as the journal says")
        return found.user, token

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="jackpot"'


def has_role(user: Any, *roles: str) -> bool:
    """Whether `user` holds one of `roles` (its groups). `is_superuser` is no role: a superuser
    holds only the roles granted to it, like anyone (each grant a two-person change)."""
    if user is None or not getattr(user, "is_authenticated", False) or not hasattr(user, "groups"):
        return False
    return bool((authority.acting_roles(user) or frozenset()).intersection(roles))


def second_factor_passed(request: Request) -> bool:
    """Whether the caller signed in with a second factor: a browser session that did
    (django-otp's `is_verified`), or a staff token, which only such a session can issue
    (`floor.account`)."""
    if isinstance(request.successful_authenticator, StaffTokenAuthentication):
        return True
    is_verified = getattr(request.user, "is_verified", None)
    return bool(is_verified is not None and is_verified())


def require_roles(*roles: str) -> type[BasePermission]:
    """Permission for a holder of one of `roles`; where the second factor is required
    (`STAFF_SECOND_FACTOR_REQUIRED`), only once they have passed it: a password alone, in a
    session made some other way than the staff's sign-in, gets 403 second_factor_required."""

    class HasRole(BasePermission):
        message = f"this needs the role {' or '.join(roles)}"

        def has_permission(self, request: Request, view: Any) -> bool:
            if not has_role(request.user, *roles):
                if not authority.explained(request.user):
                    raise Forbidden(
                        "powers_unexplained",
                        "this account's powers are not the ones the journal gave it: it acts "
                        "with none until two admins set them again",
                    )
                return False
            if presence.required() and not second_factor_passed(request):
                raise Forbidden(
                    "second_factor_required",
                    "this session signed in without its second factor: sign in again with "
                    "the code of your authenticator (or a recovery code)",
                )
            return True

    HasRole.__name__ = f"HasRole_{'_'.join(roles)}"
    return HasRole


# Staff endpoints: an API token, or the browser session of a signed-in staff member (DRF then
# requires the CSRF token on unsafe methods).
STAFF_AUTHENTICATION = [StaffTokenAuthentication, SessionAuthentication]
