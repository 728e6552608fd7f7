"""The session registers' page (/floor/registers/) in a real browser: a supervisor reads models 8
and 8 ter in French then English, and downloads both PDFs, whose first pages are drawn as images
beside the screenshots (artifacts/browser/) for a person to look at.
"""

from __future__ import annotations

import io
from pathlib import Path

import pypdf
import pypdfium2
import pytest
from django.conf import settings
from playwright.sync_api import expect

from tests.browser.test_audit_page import sign_in
from tests.tables.club.test_registers import FORMULA, make_club

RANGE = "from=2026-11-28&to=2026-11-29"


@pytest.fixture
def club(live_service):
    return make_club()


def _download(page, link, artifacts, name: str) -> str:
    """Click `link`, keep the PDF and its first page as a PNG in the artifacts; its text."""
    with page.expect_download() as download:
        link.click()
    content = Path(download.value.path()).read_bytes()
    (artifacts / f"{name}.pdf").write_bytes(content)
    document = pypdfium2.PdfDocument(content)
    document[0].render(scale=1.6).to_pil().save(artifacts / f"{name}.png")
    document.close()
    return "\n".join(sheet.extract_text() for sheet in pypdf.PdfReader(io.BytesIO(content)).pages)


def test_a_supervisor_reads_and_downloads_the_registers(
    live_service, club, page, screenshot, artifacts
):
    sign_in(page, live_service, "supervisor")
    page.set_viewport_size({"width": 1440, "height": 1000})
    page.goto(f"{live_service.url}/floor/registers/?{RANGE}")
    expect(page.locator("h1")).to_have_text("Registres des séances")
    withheld, displayed = page.locator("#withheld"), page.locator("#displayed")
    expect(withheld.locator("h2")).to_have_text("Registre des prélèvements (modèle 8)")
    expect(displayed.locator("h2")).to_have_text("Registre des montants affichés (modèle 8 ter)")
    # The floor's navigation leads here; the figures are the register's, to the cent.
    expect(page.locator("nav.pages a[aria-current=page]")).to_have_text("Registres")
    expect(withheld.locator(".session-head")).to_have_text(
        [
            "Séance n° 2 · journée du 2026-11-28 · close le 2026-11-28 23:58 CET",
            "Séance n° 3 · journée du 2026-11-29 · close le 2026-11-29 23:58 CET",
        ]
    )
    expect(withheld.locator("tbody tr:not(.session-head):not(.total) td:first-child")).to_have_text(
        [FORMULA, "UTH 1", "UTH 1"]
    )
    expect(withheld.locator("tfoot")).to_contain_text("Total de la période")
    expect(withheld.locator("tfoot")).to_contain_text("100,00")
    expect(withheld.locator("tfoot")).to_contain_text("-1,00")
    expect(displayed.locator("tbody tr").first).to_contain_text("10 035,00")
    expect(displayed).to_contain_text("première séance")
    assert page.console_errors == []
    screenshot("registers-fr")
    withheld.screenshot(path=str(artifacts / "registers-fr-model-8.png"))

    french = _download(page, withheld.locator("a[data-format=pdf]"), artifacts, "register-8-fr")
    assert settings.CLUB_NAME in french
    assert "Registre des prélèvements (modèle 8)" in french and "100,00" in french
    assert "Les deux personnes ayant procédé au comptage" in french

    page.locator("a.lang").click()
    expect(page.locator("h1")).to_have_text("Session registers")
    expect(page.locator("input[name=from]")).to_have_value("2026-11-28")
    expect(withheld.locator("h2")).to_have_text("Register of amounts withheld (model 8)")
    expect(withheld.locator("tfoot")).to_contain_text("100.00")
    expect(displayed.locator("tbody tr").first).to_contain_text("10,035.00")
    expect(page.locator("nav.pages a[aria-current=page]")).to_have_text("Registers")
    screenshot("registers-en")

    english = _download(
        page, displayed.locator("a[data-format=pdf]"), artifacts, "register-8ter-en"
    )
    assert "Register of amounts displayed (model 8 ter)" in english
    assert "10,035.00" in english and "first session" in english
    assert "The member of the management committee" in english
    eight = _download(page, withheld.locator("a[data-format=pdf]"), artifacts, "register-8-en")
    assert "Register of amounts withheld (model 8)" in eight


def test_a_bad_range_is_said_on_the_page(live_service, club, page):
    sign_in(page, live_service, "auditor")
    page.goto(f"{live_service.url}/floor/registers/?from=2026-11-29&to=2026-11-28&lang=en")
    expect(page.locator("#refusal")).to_contain_text("Range refused: to: must not be before from")


def test_an_admin_is_refused_the_page(live_service, club, page):
    sign_in(page, live_service, "admin")
    answer = page.goto(f"{live_service.url}/floor/registers/?lang=en")
    assert answer is not None and answer.status == 403
    expect(page.locator(".refusal")).to_contain_text("auditors, managers and supervisors")
