"""The API's browsable page (/api/docs/, Swagger UI from the installed sidecar) renders the
OpenAPI 3.1 schema: every operation listed, no rendering error, a nullable reference shown."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.live import LiveServer


@pytest.fixture
def live_service(transactional_db):
    """The service with its static files: Swagger UI's scripts come from the sidecar package."""
    server = LiveServer(static=True)
    yield server
    server.stop()


def test_swagger_ui_renders_the_3_1_schema(page, live_service, screenshot):
    page.goto(f"{live_service.url}/api/docs/")
    # The version badge Swagger UI prints beside the title: it read the document as 3.1.
    expect(page.locator(".info .version-stamp")).to_have_text(re.compile(r"OAS\s*3\.1"))
    schema = page.request.get(f"{live_service.url}/api/schema/?format=json").json()
    expected = sum(
        1
        for item in schema["paths"].values()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    )
    operations = page.locator(".opblock")
    expect(operations).to_have_count(expected)
    # Swagger UI shows a document it cannot read in an errors box instead of the operations.
    expect(page.locator(".errors-wrapper")).to_have_count(0)
    # The sign's meter: its `pending_jackpot` is a Hit or null, and the page says both
    # (Swagger UI draws 3.1's schemas as JSON Schema 2020-12: "(object | null)").
    page.locator("#operations-v1-pool_meter .opblock-summary").click()
    body = page.locator("#operations-v1-pool_meter .responses-wrapper")
    body.get_by_role("tab", name="Schema").first.click()
    pending = body.locator(".model-box .json-schema-2020-12-property").filter(
        has=page.locator(".json-schema-2020-12__title", has_text="pending_jackpot")
    )
    expect(pending.first).to_contain_text(re.compile(r"object \| null"))
    screenshot("api-docs")
    assert page.console_errors == [], page.console_errors
