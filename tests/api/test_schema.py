"""The OpenAPI schema: generated without warnings or errors, valid, complete, served, browsable.

Generating the schema reads views and serializers only: no database access (no ``django_db``).
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest
import yaml
from django.core.management import call_command
from django.test import Client
from django.urls import URLPattern
from drf_spectacular.drainage import GENERATOR_STATS

from core.openapi import component_name
from core.wire import Body
from jackpot.api import urls as jackpot_urls
from tables.api import urls as tables_urls

API_PREFIX = "/api/v1/"
METHODS = ("get", "post", "put", "patch", "delete")


def documented_operations() -> dict[str, set[str]]:
    """Every OpenAPI path of the two API url modules, with the methods its view implements."""
    operations: dict[str, set[str]] = {}
    for pattern in [*tables_urls.urlpatterns, *jackpot_urls.urlpatterns]:
        assert isinstance(pattern, URLPattern)
        # Django's `<int:table>` is OpenAPI's `{table}`.
        path = API_PREFIX + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
        view_class = pattern.callback.view_class  # type: ignore[attr-defined]
        operations[path] = {method for method in METHODS if hasattr(view_class, method)}
    return operations


# The schema's tests share one generation (7 s of CPU each when every test made its own), so they
# run on one process of the suite.
pytestmark = pytest.mark.xdist_group("tests/api/test_schema.py")


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> dict:
    # The generator keeps its warnings in a process-wide cache: start from none.
    GENERATOR_STATS.reset()
    target = tmp_path_factory.mktemp("schema") / "schema.yaml"
    printed = io.StringIO()
    # --fail-on-warn raises on any warning or error, --validate against the OpenAPI 3 spec.
    with contextlib.redirect_stderr(printed):
        call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    err = printed.getvalue()
    assert "Warning" not in err and "Error" not in err, err
    assert not GENERATOR_STATS, "the schema generator reported warnings or errors"
    return yaml.safe_load(target.read_text())


def test_schema_validates_and_lists_every_api_url(schema):
    assert schema["openapi"].startswith("3.")
    expected = documented_operations()
    # 22 + the pool changes (4) + a jackpot void's confirm, cancel (2) + terminal tokens (2)
    # + the PAR sheet and the integrity flags (2) + a background export's start, job, file (3)
    # + the reconciliation reports, listed and one (2)
    # + the big-win notifications' deliveries (1)
    # + a pool's history for auditors and each chart's CSV (2)
    # + a verification run (1; the journal's verify gained its POST, counted by path)
    # + a pool's void watch (1)
    # + a table's move: proposed, approved, rejected, withdrawn (4)
    # + a pool's period-end liability (1)
    # + the significant events (1)
    # + an award's winner and the register of paid awards (2)
    # + a pool's suspension, resumption and stop proposal (3)
    # + surveillance's review of an award and a manager's decision on its referral (2)
    # + a terminal token's proposal approved, rejected, withdrawn (3)
    # + the session registers, models 8 and 8 ter (2)
    # + the club's sessions: listed and opened, one, its close, a box's count and confirmation (5)
    # + the code's digest (1)
    # + a pool's corrections: listed and proposed, approved, rejected, withdrawn (4)
    # + a pool's replacement proposed (1)
    # + the notices, listed and one's sending; the orphans' register; a recovery proposed,
    #   approved, rejected (6)
    assert len(expected) == 77
    documented = {path: set(schema["paths"][path]) for path in expected if path in schema["paths"]}
    assert documented == expected
    # Nothing documented that is not routed under /api/v1/.
    assert set(schema["paths"]) == set(expected)


def test_schema_documents_who_may_call_what(schema):
    paths = schema["paths"]
    schemes = schema["components"]["securitySchemes"]
    assert {name: (s["type"], s.get("scheme", s.get("in"))) for name, s in schemes.items()} == {
        "terminalToken": ("http", "bearer"),
        "staffToken": ("http", "bearer"),
        "cookieAuth": ("apiKey", "cookie"),  # staff signed in with a browser session
    }
    assert paths["/api/v1/tables/{table}/rounds"]["post"]["security"] == [{"terminalToken": []}]
    staff = [{"staffToken": []}, {"cookieAuth": []}]
    assert paths["/api/v1/journal/verify"]["get"]["security"] == staff
    assert paths["/api/v1/awards/{award}/approve"]["post"]["security"] == staff
    assert paths["/api/v1/tables/{table}"]["patch"]["security"] == staff
    # The rules API and the pool reads are public.
    assert "security" not in paths["/api/v1/rules/evaluate"]["post"]
    assert "security" not in paths["/api/v1/pools/{pool}/meter"]["get"]
    assert "security" not in paths["/api/v1/rules/par"]["get"]
    par = paths["/api/v1/rules/par"]["get"]["parameters"]
    assert {(p["name"], p.get("required", False)) for p in par} == {
        ("version", False),
        ("jackpot_cents", False),
        ("other_bettors", False),
    }
    query = paths["/api/v1/rules/progressive/return"]["get"]["parameters"]
    assert {(p["name"], p.get("required", False)) for p in query} == {
        ("jackpot_cents", True),
        ("other_bettors", False),
    }


def test_schema_is_served():
    response = Client().get("/api/schema/")
    assert response.status_code == 200
    served = yaml.safe_load(response.content)
    assert set(documented_operations()) <= set(served["paths"])
    as_json = Client().get("/api/schema/", HTTP_ACCEPT="application/json")
    assert as_json.status_code == 200
    assert as_json.json()["paths"] == served["paths"]


def test_docs_page_is_html_pointing_at_the_schema():
    response = Client().get("/api/docs/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "<html" in page and "SwaggerUIBundle" in page
    assert '"/api/schema/"' in page


def test_docs_page_loads_no_asset_from_the_internet():
    page = Client().get("/api/docs/").content.decode()
    external = re.findall(r"""(?:src|href)=["'](https?://[^"']+)""", page)
    assert external == []


def _untyped(schema: dict, components: dict, path: str, seen: set[str]) -> list[str]:
    """Where `schema` (recursively, through $refs) is an object with no declared shape."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        if name in seen:
            return []
        return _untyped(components[name], components, name, seen | {name})
    found: list[str] = []
    for key in ("allOf", "anyOf", "oneOf"):
        for index, member in enumerate(schema.get(key, [])):
            found += _untyped(member, components, f"{path}.{key}[{index}]", seen)
    if schema.get("type") == "object" or "properties" in schema:
        extra = schema.get("additionalProperties")
        if not schema.get("properties") and not isinstance(extra, dict | bool):
            found.append(f"{path} is an object with no properties")
        if extra == {} or extra is True:
            found.append(f"{path} allows any additional property")
        for name, child in schema.get("properties", {}).items():
            found += _untyped(child, components, f"{path}.{name}", seen)
        if isinstance(extra, dict) and extra:
            found += _untyped(extra, components, f"{path}.*", seen)
    if schema.get("type") == "array":
        found += _untyped(schema.get("items", {}), components, f"{path}[]", seen)
    return found


def test_no_answer_is_an_untyped_object(schema):
    """Every 2xx JSON body is declared to its leaves: a generated client gets typed models."""
    components = schema["components"]["schemas"]
    problems = []
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            for status, response in operation.get("responses", {}).items():
                body = response.get("content", {}).get("application/json", {}).get("schema")
                if status.startswith("2") and body is not None:
                    where = f"{method.upper()} {path} {status}"
                    problems += [f"{where}: {p}" for p in _untyped(body, components, "body", set())]
    assert not problems, "\n".join(problems)


def test_every_request_body_is_closed(schema):
    """additionalProperties: false on every object a client sends."""
    components = schema["components"]["schemas"]
    open_objects = []

    def walk(node: dict, where: str, seen: frozenset[str]) -> None:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[1]
            if name not in seen:
                walk(components[name], name, seen | {name})
            return
        for key in ("allOf", "anyOf", "oneOf"):
            for member in node.get(key, []):
                walk(member, where, seen)
        if node.get("type") == "object" or "properties" in node:
            if node.get("additionalProperties") is not False:
                open_objects.append(where)
            for name, child in node.get("properties", {}).items():
                walk(child, f"{where}.{name}", seen)
        if node.get("type") == "array":
            walk(node.get("items", {}), f"{where}[]", seen)

    for item in schema["paths"].values():
        for operation in item.values():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None:
                walk(body["schema"], operation["operationId"], frozenset())
    assert not open_objects, open_objects


def _bodies(model: type[Body] = Body) -> list[type[Body]]:
    found = []
    for subclass in model.__subclasses__():
        found += [subclass, *_bodies(subclass)]
    return found


def test_a_titled_body_is_in_the_schema_under_its_title_alone(schema):
    """A body renamed in Python so as not to share a model's name (tests/test_names.py) keeps
    its name in the schema, and only that one, for clients generated from it."""
    components = schema["components"]["schemas"]
    renamed = [body for body in _bodies() if component_name(body) != body.__name__]
    assert {component_name(body) for body in renamed} == {
        "Award", "Correction", "ExportJob", "IntegrityFlag", "Notice", "OrphanRecovery",
        "ParameterChange", "Reconciliation", "WinnerIdentity",
    }  # fmt: skip
    for body in renamed:
        assert component_name(body) in components
        assert body.__name__ not in components
