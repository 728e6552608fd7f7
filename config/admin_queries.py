"""The Django admin takes no NUL character in what it is sent: 400 `invalid_parameter`.

A list's search (`?q=`), its filters (`?kind__exact=`, any field lookup) and a form's or an
action's fields reach PostgreSQL as text, which cannot hold NUL (`\\x00`): the database's
refusal was a 500. The API's strict parser refuses NUL in JSON the same way (`core.parsers`,
400 `malformed_json`) and its query models' text patterns exclude it (`core.wire.NonBlank`); the
admin's pages have no such models, so this middleware refuses any name or value of the query
string or of a form's body under the admin's URL, before any view reads it, for every model's
page at once.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from django.http import HttpRequest, HttpResponseBase, JsonResponse, QueryDict
from django.urls import reverse

from core.codes import ErrorCode
from core.errors import error_body

NUL = "\x00"


@cache
def _admin_prefix() -> str:
    return reverse("admin:index")


def _holding_nul(data: QueryDict) -> str | None:
    """The first parameter of `data` whose name (shown with its NUL escaped) or a value holds NUL,
    or None."""
    for name, values in data.lists():
        if NUL in name:
            return name.replace(NUL, "\\x00")
        if any(NUL in value for value in values):
            return name
    return None


class AdminNulMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.path_info.startswith(_admin_prefix()):
            sent = [request.GET, request.POST] if request.method == "POST" else [request.GET]
            for data in sent:
                param = _holding_nul(data)
                if param is not None:
                    return JsonResponse(
                        error_body(
                            "invalid_request",
                            ErrorCode.INVALID_PARAMETER,
                            f"{param}: text must not contain the NUL character (\\x00)",
                            param,
                        ),
                        status=400,
                    )
        return self.get_response(request)
