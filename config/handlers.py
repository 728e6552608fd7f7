"""Renders every refusal in the one error shape of `core.errors`, and never a stack trace or
SQL: anything unexpected is a logged 500 with a generic message. Refusals of authentication and
permission are logged to the security log with who and from where (the client's address as the
throttles read it, past NUM_PROXIES proxies: `core.throttling.client_address`; and, for a
failed authentication, the non-secret prefix of the credential presented); so is a refused
progressive stake (a contribution other than the pool's stake, or at a table without a pool:
compliance requirement 13), a significant event whatever its cause.

The progressive fails closed (compliance requirement 28): when PostgreSQL cannot be reached or
does not answer in time (a connection refused or past its deadline, a statement or lock timeout,
a connection lost), any request gets 503 `progressive_closed` with a Retry-After, at once, never
a generic 500; its message says which of the two it was. Nothing is half-written: the
transaction that failed was rolled back when the error left its `atomic` block, and any
request-wide transaction is marked for rollback here.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import Any

import psycopg
from django.conf import settings
from django.db import InterfaceError, InternalError, OperationalError, connection
from django.http import Http404, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

from core.errors import ApiError, error_body
from core.throttling import client_address
from rules.errors import RulesError

logger = logging.getLogger(__name__)


def _first_validation_error(detail: Any, path: str = "") -> tuple[str | None, str, str]:
    """The first leaf of a DRF ValidationError detail as (param, code, message)."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            if key == "non_field_errors":
                child = path
            elif isinstance(key, int):
                child = f"{path}[{key}]"
            else:
                child = f"{path}.{key}" if path else str(key)
            return _first_validation_error(value, child)
    if isinstance(detail, list):
        for index, value in enumerate(detail):
            if isinstance(value, (dict, list)) and value:
                # A list of per-item errors: DRF puts {} for the items that are fine.
                return _first_validation_error(value, f"{path}[{index}]")
            if value:
                return _first_validation_error(value, path)
    if isinstance(detail, exceptions.ErrorDetail):
        return (path or None, detail.code or "invalid", str(detail))
    return (path or None, "invalid", str(detail))


_DRF_TYPES = {
    exceptions.NotAuthenticated: ("authentication", "not_authenticated"),
    exceptions.AuthenticationFailed: ("authentication", "authentication_failed"),
    exceptions.PermissionDenied: ("permission", "permission_denied"),
    exceptions.Throttled: ("rate_limit", "throttled"),
    exceptions.NotFound: ("invalid_request", "not_found"),
    exceptions.MethodNotAllowed: ("invalid_request", "method_not_allowed"),
    exceptions.UnsupportedMediaType: ("invalid_request", "unsupported_media_type"),
    exceptions.NotAcceptable: ("invalid_request", "not_acceptable"),
    exceptions.ParseError: ("invalid_request", "malformed_json"),
}


security_log = logging.getLogger("jackpot.security")


# A bearer token's first characters, as stored to tell tokens apart (`core.tokens`): its kind
# and 4 characters of 43 random ones, never enough to use it.
_PRESENTED = re.compile(r"^bearer\s+((?:term|staff)_[A-Za-z0-9_-]{0,4})", re.IGNORECASE)


def _presented(meta: dict[str, Any]) -> str:
    """The prefix of the bearer token a request presented, or "-"."""
    match = _PRESENTED.match(str(meta.get("HTTP_AUTHORIZATION", "")))
    return match.group(1) if match else "-"


def _caller(context: dict[str, Any]) -> tuple[Any, dict[str, Any], str, str] | None:
    """The refused request, its WSGI environ, who sent it ("anonymous" before authentication)
    and from where (the throttles' reading of the client's address, `client_address`: behind
    nginx, the address nginx was connected from, never the proxy's own nor one the client wrote
    in X-Forwarded-For), or None outside a request."""
    request = context.get("request")
    if request is None:
        return None
    meta = request._request.META if hasattr(request, "_request") else {}
    user = getattr(request, "_user", None)
    address = client_address(request) or "?"
    return request, meta, str(user) if user is not None else "anonymous", address


def _log_refusal(exc: Exception, context: dict[str, Any]) -> None:
    """Failed authentications and refusals, with who and from where, for the security log."""
    caller = _caller(context)
    if caller is None:
        return
    request, meta, user, address = caller
    security_log.warning(
        "refused %s %s: %s (%s) user=%s token=%s from=%s",
        request.method,
        request.path,
        type(exc).__name__,
        getattr(exc, "detail", None) or getattr(exc, "message", ""),
        user,
        _presented(meta),
        address,
    )


def _is_stake_refusal(exc: RulesError) -> bool:
    """A progressive stake refused: `invalid_bet` on a seat's `progressive_cents`."""
    return exc.code == "invalid_bet" and (exc.param or "").endswith(".progressive_cents")


#: A pool that takes no stake now (jackpot.pools.lifecycle): the round's progressive stakes refused.
_POOL_NOT_TAKING = frozenset({"pool_suspended", "pool_stopped"})


def _log_stake_refusal(exc: RulesError | ApiError, context: dict[str, Any]) -> None:
    """A contribution the pool does not take (requirement 13; a suspended or stopped pool's
    too): a significant event, logged with the terminal (its actor names it, and the URL its
    table) and where it came from."""
    caller = _caller(context)
    if caller is None:
        return
    request, _, user, address = caller
    security_log.warning(
        "significant event: progressive stake refused %s %s: %s (%s) user=%s from=%s",
        request.method,
        request.path,
        exc.param,
        exc.message,
        user,
        address,
    )


# Django wraps the driver's errors in its own; the driver's are listed too, for code that meets
# them unwrapped. psycopg's statement and lock timeouts (QueryCanceled, LockNotAvailable) are
# OperationalErrors.
DATABASE_UNAVAILABLE = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
)


def _database_unavailable(exc: Exception) -> bool:
    """The database could not be reached, or went away under the request.

    A connection cut in the middle of a statement is not always an OperationalError: behind
    pgbouncer, a server stopped during a COMMIT reaches psycopg as two error results (the
    server's FATAL and pgbouncer's own) before the socket closes, which psycopg raises as an
    InternalError ("received 2 results from command 'COMMIT'"). Whether that commit happened is
    unknown to us as to the terminal, whose resend (the same round id) finds out: so it is
    answered as the closed progressive, not as a bug, when the connection is now unusable. A
    genuine InternalError on a sound connection stays a 500.

    A write refused as "in a read-only transaction" is the same outage seen from the other side:
    the service's only read-only transactions are its snapshots, which write nothing, so the
    server that refused is a standby, reached through HAProxy in the second before its check
    saw the switchover or failover (docs/operations.md "High availability: Patroni").
    """
    if isinstance(exc, DATABASE_UNAVAILABLE):
        return True
    if isinstance(exc.__cause__ or exc, psycopg.errors.ReadOnlySqlTransaction):
        return True  # a standby answered: a switchover or failover is under way
    if not isinstance(exc, (InternalError, psycopg.InternalError)):
        return False
    raw = connection.connection
    if raw is None or raw.closed or getattr(raw, "broken", False):
        return True
    return not connection.in_atomic_block and not _answers(raw)


def _answers(raw: Any) -> bool:
    """Whether the connection still runs a statement: a round trip, on this error path only
    (the backend's `is_usable` spares the requests one, and a socket whose server has not yet
    closed it after its last error still looks sound to it)."""
    try:
        with raw.cursor() as cursor:
            cursor.execute("SELECT 1")
    except psycopg.Error:
        return False
    return True


# The server's own deadlines (config.settings.databases): it was reached, and did not answer in
# time. Told apart from an outage so that neither a terminal's operator nor whoever reads the
# log goes looking for a dead server when a row was busy.
_DEADLINES = (psycopg.errors.LockNotAvailable, psycopg.errors.QueryCanceled)


def _why_closed(exc: Exception) -> str:
    if isinstance(exc.__cause__ or exc, _DEADLINES):
        return "its database did not answer in time (a lock or statement deadline passed)"
    return "its database cannot be reached"


def _closed(why: str) -> tuple[dict[str, Any], dict[str, str]]:
    body = error_body(
        "api_error",
        "progressive_closed",
        f"The progressive is closed: {why}. Nothing was recorded; retry after Retry-After seconds.",
        None,
    )
    return body, {"Retry-After": str(settings.PROGRESSIVE_CLOSED_RETRY_AFTER)}


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if _database_unavailable(exc):
        set_rollback()
        why = _why_closed(exc)
        logger.error("progressive closed: %s: %s", why, exc)
        body, headers = _closed(why)
        return Response(body, status=status.HTTP_503_SERVICE_UNAVAILABLE, headers=headers)
    if isinstance(
        exc,
        (exceptions.NotAuthenticated, exceptions.AuthenticationFailed, exceptions.PermissionDenied),
    ) or (isinstance(exc, ApiError) and exc.status_code == status.HTTP_403_FORBIDDEN):
        _log_refusal(exc, context)
    if isinstance(exc, ApiError):
        if exc.code in _POOL_NOT_TAKING and exc.param == "seats":
            _log_stake_refusal(exc, context)
        body = error_body(exc.error_type, exc.code, exc.message, exc.param)
        return Response(body, status=exc.status_code)
    if isinstance(exc, RulesError):
        if _is_stake_refusal(exc):
            _log_stake_refusal(exc, context)
        return Response(
            error_body("invalid_request", exc.code, exc.message, exc.param),
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, exceptions.ValidationError):
        param, code, message = _first_validation_error(exc.detail)
        if param and not message.startswith(param):
            message = f"{param}: {message}"
        return Response(error_body("invalid_request", code, message, param), status=400)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    response = exception_handler(exc, context)
    if response is None:
        logger.exception("unhandled error in %s", context.get("view"))
        return Response(
            error_body("api_error", "internal_error", "Internal error; it has been logged.", None),
            status=status.HTTP_500_INTERNAL_SERVER_ERROR,
        )
    error_type, code = next(
        (value for cls, value in _DRF_TYPES.items() if isinstance(exc, cls)),
        ("invalid_request", "invalid"),
    )
    detail = getattr(exc, "detail", str(exc))
    response.data = error_body(error_type, code, str(detail), None)
    return response


def json_404(request: Any, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(
        error_body("invalid_request", "not_found", "No such resource.", None), status=404
    )


def json_500(request: Any) -> JsonResponse:
    """Django's last resort (outside DRF's views): the database's absence is still a 503."""
    error = sys.exc_info()[1]
    if isinstance(error, Exception) and _database_unavailable(error):
        body, headers = _closed(_why_closed(error))
        return JsonResponse(body, status=503, headers=headers)
    body = error_body("api_error", "internal_error", "Internal error; it has been logged.", None)
    return JsonResponse(body, status=500)


def json_400(request: Any, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(
        error_body("invalid_request", "bad_request", "Bad request.", None), status=400
    )
