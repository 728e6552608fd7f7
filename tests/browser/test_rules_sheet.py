"""The rules posted at the table, in a real browser: from the sign, the "Règlement" link opens the
pool's rules in French, its "English" link the same in English, and each page's PDF, drawn by the
server, renders to an A4 image. Screenshots and the PDFs' first pages go to artifacts/browser/.
"""

from __future__ import annotations

import io
import re

import pypdfium2
import pytest
from playwright.sync_api import expect
from pypdf import PdfReader

from tests.browser.test_display import open_sign
from tests.conftest import make_floor

ODD = {"stake_cents": 300, "meter_share_bp": 1234, "reserve_share_bp": 567}


@pytest.fixture
def floor(live_service):
    return make_floor(**ODD)


def _pdf_to_png(pdf: bytes, path) -> tuple[float, float]:
    """The PDF's first page as a PNG at `path`; its size in points."""
    document = pypdfium2.PdfDocument(pdf)
    try:
        first = document[0]
        first.render(scale=2).to_pil().save(path)
        return first.get_size()
    finally:
        document.close()


def _full_page(page, artifacts, name: str) -> None:
    page.screenshot(path=str(artifacts / f"{name}.png"), full_page=True)


def test_from_the_sign_to_the_rules_and_their_pdf_in_both_languages(
    live_service, floor, page, screenshot, artifacts
):
    open_sign(page, live_service, floor.pool_id)
    link = page.locator("#rules-link")
    expect(link).to_have_text("Règlement")
    screenshot("rules-sign-link")
    link.click()

    expect(page).to_have_url(re.compile(rf"/display/{floor.pool_id}/rules\?lang=fr$"))
    expect(page.locator("h1")).to_have_text("Jackpot progressif : le règlement")
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    shares = page.locator(".row")
    expect(shares.nth(0)).to_contain_text("0,3702 EUR (12,34 %)")
    expect(shares.nth(2)).to_contain_text("2,4597 EUR (81,99 %)")
    expect(page.locator("main")).to_contain_text("après 50 mises exactement 18,51 EUR de plus")
    _full_page(page, artifacts, "rules-fr")
    french_pdf = page.locator("#rules-pdf").get_attribute("href")

    page.locator("#rules-other-language").click()
    expect(page).to_have_url(re.compile(rf"/display/{floor.pool_id}/rules\?lang=en$"))
    expect(page.locator("h1")).to_have_text("Progressive jackpot: the rules")
    expect(shares.nth(0)).to_contain_text("EUR 0.3702 (12.34%)")
    expect(page.locator("main")).to_contain_text("Straight flush")
    expect(page.locator("main")).to_contain_text("EUR 1,500.00")
    _full_page(page, artifacts, "rules-en")
    english_pdf = page.locator("#rules-pdf").get_attribute("href")

    # A table's tablet, held upright: one column, the figures under their labels.
    page.set_viewport_size({"width": 600, "height": 960})
    _full_page(page, artifacts, "rules-en-tablet")
    assert page.console_errors == []  # nothing refused by the page's CSP

    for lang, href, expected in (
        ("fr", french_pdf, "0,3702 EUR (12,34 %)"),
        ("en", english_pdf, "EUR 0.3702 (12.34%)"),
    ):
        response = page.request.get(f"{live_service.url}{href}")
        assert response.status == 200 and response.headers["content-type"] == "application/pdf"
        pdf = response.body()
        reader = PdfReader(io.BytesIO(pdf))
        assert len(reader.pages) == 1
        assert expected in " ".join(reader.pages[0].extract_text().split())
        width, height = _pdf_to_png(pdf, artifacts / f"rules-{lang}-pdf.png")
        assert (round(width), round(height)) == (595, 842)  # A4 portrait, in points
