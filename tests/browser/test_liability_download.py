"""The accountant's month-end statement from the auditor's page, in a real browser.

The pool's three November days (tests/pool_story.py) are played through the terminal API; the
service runs on a real port with the real clock (December 2026 or later), so the page's first
link is a past month's close. The auditor clicks it, Chromium downloads the PDF, and it says what
the journal says at that close (docs/api.md 5.11, docs/pages.md).
"""

from __future__ import annotations

import io
from datetime import datetime
from zoneinfo import ZoneInfo

import pypdf
import pytest
from django.conf import settings
from django.utils import timezone
from playwright.sync_api import expect

from tests import pool_story as story
from tests.browser.test_audit_page import sign_in

WAIT_MS = 10_000
MONTHS = "January February March April May June July August September October November December"


@pytest.fixture
def story_floor(live_service):
    return story.play_story()


def test_the_auditor_downloads_last_months_close_as_a_pdf(
    live_service, story_floor, page, screenshot
):
    sign_in(page, live_service, "auditor")
    page.goto(f"{live_service.url}/audit/pools/{story_floor.pool_id}/?lang=en")
    expect(page.locator("body")).to_have_attribute("data-state", "drawn", timeout=WAIT_MS)
    section = page.locator("#liability")
    expect(section).to_contain_text("Jackpot liability (for the accountant)", timeout=WAIT_MS)
    club = ZoneInfo(settings.TIME_ZONE)
    this_month = timezone.localtime(timezone.now(), club).date().replace(day=1)
    last = datetime(this_month.year - (this_month.month == 1), (this_month.month - 2) % 12 + 1, 1)
    label = f"{MONTHS.split()[last.month - 1]} {last.year}'s close"
    row = section.locator("li", has_text=label)
    expect(row).to_be_visible()
    link = row.locator("a[data-format=pdf]")
    section.scroll_into_view_if_needed()
    screenshot("audit-liability")

    with page.expect_download() as download:
        link.click()
    path = download.value.path()
    assert download.value.suggested_filename.startswith(f"liability-pool-{story_floor.pool_id}-")
    with open(path, "rb") as pdf:
        text = " ".join(
            sheet.extract_text() for sheet in pypdf.PdfReader(io.BytesIO(pdf.read())).pages
        )
    # At any close after the story's three days: the meter as it closed on the third (1,000,500
    # cents), the jackpot of day 2 still pending, its envy and day 1's full house payable.
    assert settings.CLUB_NAME in text
    assert "10 005,00 EUR" in text, text
    assert "1 · 10 007,00 EUR" in text, text  # pending: the jackpot, 1,000,700 cents
    assert "2 · 550,00 EUR" in text, text  # payable: envy 50,000 and the full house 5,000
    assert "signature" in text
