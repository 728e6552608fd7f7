"""One error shape for the whole API: {"error": {"type", "code", "message", "param"}}.

Services raise `ApiError` subclasses (a machine code, an HTTP status, a message naming the field at
fault in `param`); the rules engine raises `RulesError`; DRF raises its own exceptions.
`config.handlers` renders all of them the same way. This module imports nothing of DRF's views, so
the strict JSON parser (which DRF's views load) can raise these errors too.
"""

from __future__ import annotations

from typing import Any

from rest_framework import status


class ApiError(Exception):
    """An error a client can act on. Subclasses set the HTTP status and the error type."""

    status_code: int = status.HTTP_400_BAD_REQUEST
    error_type = "invalid_request"

    def __init__(self, code: str, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param


class NotFound(ApiError):
    status_code = status.HTTP_404_NOT_FOUND


class Conflict(ApiError):
    status_code = status.HTTP_409_CONFLICT
    error_type = "conflict"


class Gone(ApiError):
    """What was here is no more (an export's file past its retention)."""

    status_code = status.HTTP_410_GONE


class PayloadTooLarge(ApiError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE


class Forbidden(ApiError):
    status_code = status.HTTP_403_FORBIDDEN
    error_type = "permission"


def error_body(error_type: str, code: str, message: str, param: str | None) -> dict[str, Any]:
    return {"error": {"type": error_type, "code": code, "message": message, "param": param}}
