"""The staff's sign-in, at the admin's door (`/admin/login/`) and the floor's (`/floor/login/`):
the password, throttled and written to the security log, then the steps the person still owes
(the second factor's code, a new password after an admin's reset, the device's enrollment).

Invariants:
- the session is signed in only after the last step; until then it holds the pending sign-in
  alone, started anew when the password is accepted, expired after
  STAFF_SIGN_IN_STEPS_SECONDS;
- a few failures per name or address (THROTTLE_ADMIN_LOGIN, one counter for both doors) refuse
  further attempts with 429 before any password is checked; the counters fail open;
- a person the journal says enrolled whose device is gone is refused, a significant event;
- every login, failure and throttle refusal is in the security log.

The steps' order and why: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import login as auth_login
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters
from django_otp import login as otp_login
from django_otp.models import Device

from core.throttling import FailureCounter, client_address
from jackpot.approvals import presence
from jackpot.staff import second_factor

security_log = logging.getLogger("jackpot.security")

T = TypeVar("T")

#: The session's key for a sign-in between its password and its last step.
SIGN_IN = "staff_sign_in"
CODE, NEW_PASSWORD, ENROLL = "code", "password", "enroll"
#: Not a step: the sign-in is refused (`second_factor.second_factor_missing`).
REFUSED = "refused"
#: The session's mark of that refusal, for the steps' page to say why (once).
SIGN_IN_REFUSED = "staff_sign_in_refused"


def _address(request: HttpRequest) -> str:
    # The API throttles' reading of the address: REMOTE_ADDR, or X-Forwarded-For past NUM_PROXIES.
    return client_address(request) or "?"


def _keys(username: str, address: str) -> list[str]:
    # A user name is whatever the client typed: hashed, so it never shapes a Redis key.
    name = hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]
    return [f"user:{name}", f"address:{address}"]


def too_many_failures(wait: int) -> HttpResponse:
    """The throttle's refusal: 429, and when to try again."""
    response = HttpResponse(
        f"Too many failed logins: try again in {wait} seconds.\n",
        status=429,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(wait)
    return response


def _failures() -> FailureCounter:
    return FailureCounter("admin_login", settings.THROTTLE_ADMIN_LOGIN)


class _Attempt:
    """One try of `username` at `door` (a password or a code: `what`), on the login counters by
    name and address: `wait`, the seconds the throttle stops it for (0: it goes on; a refusal is
    logged); `failed()` counts and logs a wrong one."""

    def __init__(self, request: HttpRequest, username: str, door: str, what: str) -> None:
        self.username, self.door, self.what = username, door, what
        self.address, self.failures = _address(request), _failures()
        self.keys = _keys(username, self.address)
        self.wait = self.failures.wait(self.keys)
        if self.wait:
            security_log.warning(
                "%s %s refused (too many failed logins) user=%r from=%s",
                door,
                what,
                username,
                self.address,
            )

    def failed(self) -> None:
        self.failures.add(self.keys)
        security_log.warning(
            "%s %s failed user=%r from=%s", self.door, self.what, self.username, self.address
        )


def throttled_login(
    request: HttpRequest,
    login: Callable[[HttpRequest], HttpResponse],
    *,
    door: str,
    refused: Callable[[int], HttpResponse] = too_many_failures,
) -> HttpResponse:
    """`login(request)`, a password form that redirects once the password is accepted (to the
    next step or, with none, signed in: `begin_sign_in`) and shows its form again otherwise,
    behind the throttle; `refused(seconds)` answers an attempt the throttle stops."""
    if request.method != "POST":
        return login(request)
    username = str(request.POST.get("username", ""))[:150]
    attempt = _Attempt(request, username, door, "login")
    if attempt.wait:
        return refused(attempt.wait)
    response = login(request)
    if response.status_code == 200:  # the form again: wrong password, or not allowed in
        attempt.failed()
    return response


@dataclass(frozen=True)
class PendingSignIn:
    """A sign-in whose password was right and which owes more steps."""

    user: User
    door: str
    next_url: str
    device: Device | None  # the device that gave a code, once one did


def begin_sign_in(request: HttpRequest, user: User, *, door: str, next_url: str) -> HttpResponse:
    """`user` gave the right password at `door`: on to their next step, or signed in and sent to
    `next_url` (a path of this site) when they owe none."""
    request.session.flush()  # a new sign-in: whatever this browser was signed in as ends here
    request.session[SIGN_IN] = {
        "user": user.pk,
        "backend": getattr(user, "backend", None),
        "door": door,
        "next": next_url,
        "at": time.time(),
        "device": None,
    }
    return sign_in_next(request)


def pending_sign_in(request: HttpRequest) -> PendingSignIn | None:
    """The session's pending sign-in; None without one, or once expired or its person is
    disabled (then it is forgotten)."""
    state: dict[str, Any] | None = request.session.get(SIGN_IN)
    if state is None:
        return None
    user = User.objects.filter(pk=state["user"], is_active=True).first()
    if user is None or time.time() - state["at"] > settings.STAFF_SIGN_IN_STEPS_SECONDS:
        del request.session[SIGN_IN]
        return None
    device = Device.from_persistent_id(state["device"]) if state["device"] else None
    if device is not None and device.user_id != user.pk:
        device = None
    return PendingSignIn(user, state["door"], state["next"], device)


def next_step(pending: PendingSignIn) -> str | None:
    """The step `pending` owes now (`CODE`, `NEW_PASSWORD`, `ENROLL`), None when done;
    `REFUSED` when the journal says the person has a second factor the rows no longer hold."""
    user = pending.user
    if second_factor.second_factor_missing(user):
        return REFUSED
    if pending.device is None and second_factor.has_code_device(user):
        return CODE
    if second_factor.must_change_password(user):
        return NEW_PASSWORD
    if presence.required() and not second_factor.enrolled(user):
        return ENROLL
    return None


def sign_in_next(request: HttpRequest) -> HttpResponse:
    """The pending sign-in's way on: the steps' page while it owes one; else signed in (the
    session is then the person's, verified by the device that gave a code) and sent on. With no
    pending sign-in, the login page."""
    pending = pending_sign_in(request)
    if pending is None:
        return HttpResponseRedirect(settings.LOGIN_URL)
    step = next_step(pending)
    if step == REFUSED:
        second_factor.refuse_missing(pending.user, door=pending.door)
        security_log.warning(
            "%s login refused (second factor missing) user=%r from=%s",
            pending.door,
            pending.user.get_username(),
            _address(request),
        )
        del request.session[SIGN_IN]
        request.session[SIGN_IN_REFUSED] = True
    if step is not None:
        return HttpResponseRedirect(reverse("floor-login-step"))
    backend = request.session[SIGN_IN]["backend"]
    del request.session[SIGN_IN]
    auth_login(request, pending.user, backend=backend)
    if pending.device is not None:
        otp_login(request, pending.device)
    security_log.info(
        "%s login user=%r from=%s%s",
        pending.door,
        pending.user.get_username(),
        _address(request),
        " with second factor" if pending.device is not None else "",
    )
    return HttpResponseRedirect(pending.next_url)


def throttled_code(
    request: HttpRequest, *, username: str, door: str, check: Callable[[], T | None]
) -> tuple[T | None, int]:
    """`check()`, which tries a code `username` typed, behind the login throttle: (the device,
    or the activation code, that accepted it, 0); (None, 0) for a wrong code, counted and
    logged; (None, seconds) when the throttle stops the attempt before any code is checked."""
    attempt = _Attempt(request, username, door, "second factor")
    if attempt.wait:
        return None, attempt.wait
    device = check()
    if device is None:
        attempt.failed()
    return device, 0


def code_given(request: HttpRequest, device: Device) -> None:
    """The pending sign-in's person gave a code `device` accepted: the code step is done, and
    the session will be verified by `device` once signed in."""
    request.session[SIGN_IN] = {**request.session[SIGN_IN], "device": device.persistent_id}


class _AdminPassword(LoginView):
    """The admin's login form and page (Django's, which lets in staff accounts only), whose
    accepted password begins the sign-in's steps instead of signing in."""

    authentication_form = AdminAuthenticationForm
    template_name = "admin/login.html"

    def get_default_redirect_url(self) -> str:
        return reverse("admin:index")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(
            admin.site.each_context(self.request),
            title=_("Log in"),
            subtitle=None,
            app_path=self.request.get_full_path(),
            username=self.request.user.get_username(),
            next=self.get_success_url(),
        )
        return context

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        return begin_sign_in(
            self.request, form.get_user(), door="admin", next_url=self.get_success_url()
        )


_admin_password = cast(Callable[[HttpRequest], HttpResponse], _AdminPassword.as_view())


@sensitive_post_parameters("password")
def admin_login(request: HttpRequest) -> HttpResponse:
    if request.method == "GET" and admin.site.has_permission(request):
        return HttpResponseRedirect(reverse("admin:index"))
    return throttled_login(request, _admin_password, door="admin")
