"""openapi-core, a validator nobody here wrote, holding requests and answers to `/api/schema/`.

`StrictClient` is a Django test client whose every exchange is validated: the request (path,
query, headers, security, body) and the answer (status documented, content type, body) against the
schema the service serves. Each problem is recorded with the exchange it came from, and
`finish()` fails with the whole list, so a test names every lie of the schema it met, not only
the first.

A request that is meant to break the schema (no token for a 401, an unknown field for a 400) is
sent with `request_valid=False`: then openapi-core must refuse the request (a refusal it does not
make is a problem too), and the answer is still validated.

To hold a new endpoint to the schema, call it through a `StrictClient` (or hand any Django test
client's response, which carries its request, to `validate_exchange`, or to `StrictClient.record`
to have it listed with the rest; a streamed answer goes through `materialized` first).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from django.http import HttpResponse
from django.test import Client
from openapi_core import Config, OpenAPI
from openapi_core.contrib.django import DjangoOpenAPIRequest, DjangoOpenAPIResponse


def _text(value: bytes, **parameters: str) -> str:
    """A text body (the CSV exports) as the string its schema declares, in its charset."""
    return value.decode(parameters.get("charset", "utf-8"))


def load_openapi() -> tuple[OpenAPI, dict[str, Any]]:
    """The schema as the service serves it, and openapi-core's validator over it (which
    validates the schema itself with openapi-spec-validator on the way)."""
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200, response.content[:500]
    spec = response.json()
    # openapi-core reads JSON and text/plain bodies; a CSV is text too (else it stays bytes,
    # which no `type: string` accepts).
    config = Config(extra_media_type_deserializers={"text/csv": _text})
    return OpenAPI.from_dict(spec, config=config), spec


class _SentRequest(DjangoOpenAPIRequest):
    """Django's request as openapi-core reads it, with the body as it was sent (the view has
    consumed the request's stream, so Django's `request.body` is no longer there to read)."""

    def __init__(self, response: HttpResponse, body: bytes) -> None:
        super().__init__(response.wsgi_request)  # type: ignore[attr-defined]
        self._sent = body

    @property
    def body(self) -> bytes:
        return self._sent


def _errors(error: BaseException) -> str:
    """An openapi-core error with the schema errors under it (which field, which rule)."""
    lines = [f"{type(error).__name__}: {error}"]
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for inner in getattr(current, "schema_errors", ()) or ():
            path = "/".join(str(part) for part in getattr(inner, "absolute_path", ()))
            lines.append(f"  at /{path}: {getattr(inner, 'message', inner)}")
        current = current.__cause__ or current.__context__
    return "\n".join(lines)


def validate_exchange(
    openapi: OpenAPI, response: HttpResponse, *, sent: bytes = b"", request_valid: bool = True
) -> list[str]:
    """The problems openapi-core finds in one exchange of a Django test client (its `response`,
    which carries the request as `wsgi_request`; `sent` is the request's body)."""
    request = _SentRequest(response, sent)
    problems = []
    where = f"{request.method.upper()} {request.path} -> {response.status_code}"
    refused = openapi.unmarshal_request(request).errors
    if request_valid and refused:
        problems += [f"{where}: the request breaks the schema: {_errors(e)}" for e in refused]
    if not request_valid and not refused:
        problems.append(f"{where}: the schema accepts a request meant to break it")
    found = openapi.unmarshal_response(request, DjangoOpenAPIResponse(response)).errors
    problems += [f"{where}: the answer breaks the schema: {_errors(e)}" for e in found]
    return problems


class StrictClient:
    """A Django test client whose every exchange openapi-core validates (module docstring)."""

    def __init__(self, openapi: OpenAPI) -> None:
        self.openapi = openapi
        self.client = Client()
        self.problems: list[str] = []
        #: (method, path pattern, status) of every exchange validated: what a test covered.
        self.covered: set[tuple[str, str, int]] = set()

    def call(
        self,
        method: str,
        path: str,
        *,
        expect: int = 200,
        token: str | None = None,
        body: object = None,
        raw: bytes | None = None,
        query: Mapping[str, object] | None = None,
        headers: Mapping[str, str] | None = None,
        request_valid: bool = True,
    ) -> Any:
        """Send one request; the answer's JSON (or None without a body). A status other than
        `expect` is recorded as a problem too."""
        extra = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in (headers or {}).items()}
        if token is not None:
            extra["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        sent = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        url = path
        if query:
            url += "?" + urlencode({name: str(value) for name, value in query.items()})
        if sent:
            response = self.client.generic(
                method.upper(), url, sent, content_type="application/json", **extra
            )
        else:
            response = self.client.generic(method.upper(), url, **extra)
        response = materialized(response)
        self.record(response, sent=sent, request_valid=request_valid)
        if response.status_code != expect:
            self.problems.append(
                f"{method.upper()} {path}: {response.status_code}, not {expect}: "
                f"{response.content[:300]!r}"
            )
        return response.json() if response.content and _is_json(response) else None

    def get(self, path: str, **options: Any) -> Any:
        return self.call("get", path, **options)

    def post(self, path: str, body: object = None, **options: Any) -> Any:
        return self.call("post", path, body=body, **options)

    def record(self, response: HttpResponse, *, sent: bytes = b"", request_valid: bool = True):
        """Validate an exchange made elsewhere (any Django test client's)."""
        self.problems += validate_exchange(
            self.openapi, response, sent=sent, request_valid=request_valid
        )
        request = _SentRequest(response, sent)
        self.covered.add((request.method, request.path_pattern or "", response.status_code))

    def check(self, condition: object, message: str) -> None:
        if not condition:
            self.problems.append(message)

    def finish(self) -> None:
        assert not self.problems, f"{len(self.problems)} problem(s):\n- " + "\n- ".join(
            self.problems
        )


def materialized(response: Any) -> HttpResponse:
    """A streamed answer (a CSV export) read whole, so that it can be validated and read."""
    if not getattr(response, "streaming", False):
        return response
    whole = HttpResponse(
        b"".join(response.streaming_content),
        status=response.status_code,
        headers=dict(response.headers),
    )
    whole.wsgi_request = response.wsgi_request  # type: ignore[attr-defined]
    return whole


def _is_json(response: HttpResponse) -> bool:
    return response.get("Content-Type", "").split(";")[0].strip().endswith("json")
