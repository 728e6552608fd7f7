"""The staff's login pages, the admin's and the floor's (`tables.pages`), throttled and written to
the security log: `throttled_login` wraps a login view.

A few failed logins (`THROTTLE_ADMIN_LOGIN`, 5 a minute by default) for one user name, or from one
address, and every further attempt for that name or from that address is refused with 429 until
the minute ends, before any password is checked: guessing a password from many addresses, or
many users' passwords from one, both stop. The counters are `config.throttling`'s Redis counters
and fail open (the login goes on, a warning is logged) when Redis is down: a login must not
depend on a cache.

Both doors share one counter: five guesses at the admin's door and five more at the floor's
would otherwise make ten.

Written to the security log (`jackpot.security`) with the door, the user name and the address:
every login, every failed login and every refusal by the throttle.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.views.decorators.debug import sensitive_post_parameters
from rest_framework.throttling import BaseThrottle

from config.throttling import FailureCounter

security_log = logging.getLogger("jackpot.security")


def _address(request: HttpRequest) -> str:
    # The API throttles' reading of the address: REMOTE_ADDR, or X-Forwarded-For past NUM_PROXIES.
    return str(BaseThrottle().get_ident(request))  # type: ignore[arg-type]


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


def throttled_login(
    request: HttpRequest,
    login: Callable[[HttpRequest], HttpResponse],
    *,
    door: str,
    refused: Callable[[int], HttpResponse] = too_many_failures,
) -> HttpResponse:
    """`login(request)`, a login view that redirects once signed in and shows its form again
    otherwise, behind the throttle; `refused(seconds)` answers an attempt the throttle stops."""
    if request.method != "POST":
        return login(request)
    username = str(request.POST.get("username", ""))[:150]
    address = _address(request)
    failures = FailureCounter("admin_login", settings.THROTTLE_ADMIN_LOGIN)
    keys = _keys(username, address)
    wait = failures.wait(keys)
    if wait:
        security_log.warning(
            "%s login refused (too many failed logins) user=%r from=%s", door, username, address
        )
        return refused(wait)
    response = login(request)
    if isinstance(response, HttpResponseRedirect) and request.user.is_authenticated:
        security_log.info("%s login user=%r from=%s", door, request.user.get_username(), address)
    elif response.status_code == 200:  # the form again: wrong password, or not allowed in
        failures.add(keys)
        security_log.warning("%s login failed user=%r from=%s", door, username, address)
    return response


@sensitive_post_parameters("password")
def admin_login(
    request: HttpRequest, extra_context: dict[str, object] | None = None
) -> HttpResponse:
    return throttled_login(
        request, lambda request: admin.site.login(request, extra_context), door="admin"
    )
