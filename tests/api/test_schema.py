"""The OpenAPI schema: generated without warnings or errors, valid, complete, served, browsable.

Generating the schema reads views and serializers only: no database access (no ``django_db``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.test import Client
from django.urls import URLPattern
from drf_spectacular.drainage import GENERATOR_STATS

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


@pytest.fixture
def schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    # The generator keeps its warnings in a process-wide cache: start from none.
    GENERATOR_STATS.reset()
    target = tmp_path / "schema.yaml"
    # --fail-on-warn raises on any warning or error, --validate against the OpenAPI 3 spec.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    printed = capsys.readouterr()
    assert "Warning" not in printed.err and "Error" not in printed.err, printed.err
    assert not GENERATOR_STATS, "the schema generator reported warnings or errors"
    return yaml.safe_load(target.read_text())


def test_schema_validates_and_lists_every_api_url(schema):
    assert schema["openapi"].startswith("3.")
    expected = documented_operations()
    assert len(expected) == 20
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
    # The rules API and the pool reads are public.
    assert "security" not in paths["/api/v1/rules/evaluate"]["post"]
    assert "security" not in paths["/api/v1/pools/{pool}/meter"]["get"]
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
