"""The admin's login page, throttled and written to the security log.

A few failed logins (`THROTTLE_ADMIN_LOGIN`, 5 a minute by default) for one user name, or from one
address, and every further attempt for that name or from that address is refused with 429 until
the minute ends, before any password is checked: guessing a password from many addresses, or
many users' passwords from one, both stop. The counters are `config.throttling`'s Redis counters
and fail open (the login goes on, a warning is logged) when Redis is down: a login must not
depend on a cache.

Written to the security log (`jackpot.security`) with the user name and the address: every
login, every failed login and every refusal by the throttle.
"""

from __future__ import annotations

import hashlib
import logging

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


@sensitive_post_parameters("password")
def admin_login(
    request: HttpRequest, extra_context: dict[str, object] | None = None
) -> HttpResponse:
    if request.method != "POST":
        return admin.site.login(request, extra_context)
    username = str(request.POST.get("username", ""))[:150]
    address = _address(request)
    failures = FailureCounter("admin_login", settings.THROTTLE_ADMIN_LOGIN)
    keys = _keys(username, address)
    wait = failures.wait(keys)
    if wait:
        security_log.warning(
            "admin login refused (too many failed logins) user=%r from=%s", username, address
        )
        response = HttpResponse(
            f"Too many failed logins: try again in {wait} seconds.\n",
            status=429,
            content_type="text/plain; charset=utf-8",
        )
        response["Retry-After"] = str(wait)
        return response
    response = admin.site.login(request, extra_context)
    if isinstance(response, HttpResponseRedirect) and request.user.is_authenticated:
        security_log.info("admin login user=%r from=%s", request.user.get_username(), address)
    elif response.status_code == 200:  # the form again: wrong password, or not staff
        failures.add(keys)
        security_log.warning("admin login failed user=%r from=%s", username, address)
    return response
