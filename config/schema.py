"""OpenAPI post-processing: every operation documents the errors it can answer with.

drf-spectacular describes each view's success; the errors come from shared machinery (the
strict parser, authentication, permissions, throttles, the services' ApiErrors), all in the
one shape `{"error": {"type", "code", "message", "param"}}`. This hook adds that shape as the
`Error` component and, to every operation, the statuses that machinery can produce, so a client
generated from the schema knows them and schemathesis can hold the service to them. The
error's `code` is an enum of the registry (`core.codes`), integer path parameters say what
Django's converter takes (digits: 0 and up), and a body with a required field is required.

`SchemaView` serves the schema at /api/schema/. drf-spectacular builds it anew for every request
(seconds of CPU in a sync worker), yet it cannot change while a process runs: it is made of this
build's code and settings. So each process builds and renders it once per renderer and language
and keeps the bytes; the cache's keys are bounded (four renderers, the languages of
`settings.LANGUAGES`, an unknown `lang` counting as none) whatever a client sends. A `?version=`
selects nothing (the API has one version, its path's `v1`), so it cannot make another entry.
It is throttled like the staff's other heavy reads (`core.throttling.HeavyReadThrottle`, per
address: anyone may read it).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.utils import translation
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from core.codes import ErrorCode
from core.throttling import HeavyReadThrottle

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["type", "code", "message", "param"],
            "properties": {
                "type": {
                    "type": "string",
                    "enum": [
                        "invalid_request",
                        "authentication",
                        "permission",
                        "conflict",
                        "rate_limit",
                        "api_error",
                    ],
                },
                "code": {
                    "type": "string",
                    "enum": [code.value for code in ErrorCode],
                    "description": "docs/api.md, 'Error codes', says what each one means",
                },
                "message": {"type": "string"},
                "param": {"type": ["string", "null"]},
            },
        }
    },
}
EVERYWHERE = {
    "404": "Not found: the path, or the object it names",
    "405": "Method not allowed",
    "406": "Not acceptable",
    "429": "Throttled; Retry-After gives the seconds to wait",
    "503": "Progressive closed: the database cannot be reached or did not answer in time;"
    " Retry-After gives the seconds",
}
WITH_INPUT = {
    "400": "Invalid request: the field at fault is `param`",
    "409": "Conflict: the state or an earlier request does not allow it",
    "413": "Body too large",
    "415": "Unsupported media type: send application/json",
}
SECURED = {
    "401": "Missing, unknown or revoked credentials",
    "403": "Not allowed for these credentials",
}


#: Django's `<int:...>` path converter takes ASCII digits only; ids are PostgreSQL bigints.
PATH_ID = {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}


def _needs_body(body: dict[str, Any], components: dict[str, Any]) -> bool:
    """Whether a request body must be sent: its schema has a required field (or is a choice of
    shapes). An award's approve or pay takes no body, or an empty object."""
    schema = body.get("content", {}).get("application/json", {}).get("schema", {})
    ref = schema.get("$ref", "")
    if ref.startswith("#/components/schemas/"):
        schema = components.get(ref.rsplit("/", 1)[1], {})
    return bool(schema.get("required") or schema.get("anyOf") or schema.get("oneOf"))


def add_error_responses(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    components = result["components"]["schemas"]
    for item in result.get("paths", {}).values():
        for method, operation in item.items():
            body = operation.get("requestBody")
            if body is not None and _needs_body(body, components):
                body["required"] = True
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "path" and parameter["schema"].get("type") == "integer":
                    parameter["schema"] = {**parameter["schema"], **PATH_ID}
            statuses = dict(EVERYWHERE)
            statuses.update(
                WITH_INPUT
                if method in ("post", "put", "patch") or operation.get("parameters")
                else {}
            )
            if operation.get("security") and {} not in operation["security"]:
                statuses.update(SECURED)
            responses = operation.setdefault("responses", {})
            for status, description in statuses.items():
                responses.setdefault(status, {"description": description, "content": error})
            # An error status a view declares itself (an export's 410) is of the one shape too.
            for status, response in responses.items():
                if str(status)[0] in "45" and "content" not in response:
                    response["content"] = error
    return result


#: (renderer's media type, language) -> (body, Content-Type, Content-Disposition), per process.
_RENDERED: dict[tuple[str, str | None], tuple[bytes, str, str]] = {}
_RENDERING = threading.Lock()


class SchemaView(SpectacularAPIView):
    """The OpenAPI schema, built and rendered once per process (see the module's docstring)."""

    throttle_classes = [HeavyReadThrottle]

    @extend_schema(exclude=True)  # as drf-spectacular's own view: the schema is not in itself
    def get(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        renderer = request.accepted_renderer
        language = request.query_params.get("lang")
        if language not in dict(settings.LANGUAGES):
            language = None
        key = (renderer.media_type, language)
        with _RENDERING:  # one build at a time: concurrent first requests wait for it
            if key not in _RENDERED:
                with translation.override(language) if language else contextlib.nullcontext():
                    built = self._get_schema_response(request)
                # The renderer's own media type, not the client's Accept with its parameters
                # (`indent=`): one rendering per renderer.
                body = renderer.render(built.data, renderer.media_type, self.get_renderer_context())
                charset = f"; charset={renderer.charset}" if renderer.charset else ""
                _RENDERED[key] = (
                    body.encode() if isinstance(body, str) else body,
                    renderer.media_type + charset,
                    built["Content-Disposition"],
                )
            body, content_type, disposition = _RENDERED[key]
        return HttpResponse(
            body, content_type=content_type, headers={"Content-Disposition": disposition}
        )

    def _get_version_parameter(self, request: Request) -> None:
        return None

    def handle_exception(self, exc: Exception) -> Response:
        """A refusal (429 throttled, 406) is the API's JSON error, not a YAML document."""
        response = super().handle_exception(exc)
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return response
