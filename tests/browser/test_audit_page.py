"""The auditor's view of a pool in a real browser, against the service on a real port.

The pool's three days (tests/pool_story.py) are played through the terminal API; an auditor's
session is made server-side (`Client.force_login`, its cookie handed to Chromium), so the test
does not depend on the login page. The charts must be drawn from the API's figures, point by
point and bar by bar; a chart's CSV downloads; a signed-in supervisor is refused; nothing is
fetched from elsewhere. The screenshot is artifacts/browser/audit-pool.png (docs/images/ has a
copy). The void watch, drawn from its own figures: a table voiding far more than the other
(artifacts/browser/audit-voids.png).
"""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.conf import settings
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect

from tables.audit.integrity import check_integrity
from tables.audit.reconciliation import reconcile
from tables.selectors.voids import shift_of
from tests import pool_story as story
from tests.conftest import make_floor
from tests.staff import person, signed_in
from tests.tables.audit.test_integrity_voids import play as play_voids

WAIT_MS = 10_000


def sign_in(page, server, role: str) -> None:
    """A session for a new user of `role`, made by the server's own login, as Chromium's cookie."""
    client = signed_in(person(f"{role}-page", role))
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    page.context.add_cookies(
        [{"name": cookie.key, "value": cookie.value, "url": server.url, "httpOnly": True}]
    )


@pytest.fixture
def story_floor(live_service):
    floor = story.play_story()
    reconcile()
    return floor


def test_the_auditor_sees_the_pools_story_drawn_from_its_figures(
    live_service, story_floor, page, screenshot
):
    sign_in(page, live_service, "auditor")
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.set_viewport_size({"width": 1280, "height": 800})  # a landscape tablet
    page.goto(f"{live_service.url}/audit/pools/{story_floor.pool_id}/?lang=en")
    expect(page.locator("body")).to_have_attribute("data-state", "drawn", timeout=WAIT_MS)
    expect(page.locator("h1")).to_contain_text("Jackpot history")

    # The meter: one point per day, at the day's closing meter, joined by the line.
    points = page.locator("#meter-chart circle.point")
    expect(points).to_have_count(3)
    assert [
        (point.get_attribute("data-day"), int(point.get_attribute("data-cents")))
        for point in points.all()
    ] == [(day.isoformat(), closing) for day, (closing, _) in story.METER.items()]
    assert len(page.locator("#meter-line").get_attribute("points").split()) == 3
    # Higher meter, higher point: day 2's closing (after the jackpot) is the lowest.
    heights = [float(point.get_attribute("cy")) for point in points.all()]
    assert heights[1] > heights[0] == heights[2]

    # The stakes: one bar per day, its count and cents, taller for more.
    bars = page.locator("#stakes-chart rect.bar")
    expect(bars).to_have_count(3)
    assert [
        (bar.get_attribute("data-day"), int(bar.get_attribute("data-count"))) for bar in bars.all()
    ] == [(day.isoformat(), count) for day, (count, *_) in story.STAKES.items()]
    assert [int(bar.get_attribute("data-cents")) for bar in bars.all()] == [2_500, 1_500, 2_000]
    tall = [float(bar.get_attribute("height")) for bar in bars.all()]
    assert tall[0] > tall[2] > tall[1] > 0

    # Awards: a row and a pair of bars per kind, observed beside expected.
    rows = page.locator("#awards-table tbody tr")
    expect(rows).to_have_count(6)
    full_house = page.locator('#awards-table tr[data-kind="full_house"]')
    expect(full_house.locator("td.observed")).to_have_text("1")
    api = page.request.get(f"{live_service.url}/api/v1/pools/{story_floor.pool_id}/history")
    history = api.json()
    expected = {line["kind"]: line["expected_decimal"] for line in history["awards"]}
    expect(full_house.locator("td.expected")).to_have_text(expected["full_house"])
    observed_bars = page.locator("#awards-chart rect.bar.observed[data-kind]")
    assert {
        bar.get_attribute("data-kind"): bar.get_attribute("data-value")
        for bar in observed_bars.all()
    } == {
        "royal_flush": "1",
        "community_royal": "0",
        "straight_flush": "0",
        "four_of_a_kind": "0",
        "full_house": "1",
        "envy": "1",
    }
    expected_bars = page.locator("#awards-chart rect.bar.expected[data-kind]")
    assert {
        bar.get_attribute("data-kind"): bar.get_attribute("data-value")
        for bar in expected_bars.all()
    } == expected

    # The jackpot and its reset, in euros.
    hit = page.locator("#hits-table tr.hit")
    expect(hit).to_have_count(1)
    assert int(hit.get_attribute("data-cents")) == story.JACKPOT_CENTS
    expect(hit.locator("td.amount")).to_have_text("€10,007.00")
    expect(hit.locator("td.reset-reserve")).to_have_text("€2.80")
    expect(hit.locator("td.reset-house")).to_have_text("€9,997.20")
    expect(page.locator("#reconciliation")).to_have_attribute("data-ok", "true")
    page.screenshot(path=str(screenshot("audit-pool")), full_page=True)  # the whole page

    # A chart's CSV, downloaded as the page links it: the same rows.
    with page.expect_download() as download:
        page.locator('a.csv[data-chart="stakes"]').click()
    rows_csv = list(csv.DictReader(io.StringIO(download.value.path().read_text())))
    assert [(r["day"], r["count"], r["stakes_cents"]) for r in rows_csv] == [
        (day.isoformat(), str(count), str(cents))
        for day, (count, cents, *_) in story.STAKES.items()
    ]

    # In French when asked (the English asked above is remembered, as on every staff page);
    # nothing fetched from elsewhere, nothing refused by the CSP.
    page.goto(f"{live_service.url}/audit/pools/{story_floor.pool_id}/?lang=fr")
    expect(page.locator("body")).to_have_attribute("data-state", "drawn", timeout=WAIT_MS)
    expect(page.locator("h1")).to_contain_text("Historique du jackpot")
    expect(page.locator("#hits-table td.amount")).to_have_text("10\u202f007,00\u00a0€")

    # One day picked in the page's form: its point, its bar, its CSV.
    day = story.DAYS[1].isoformat()
    page.fill('input[name="from"]', day)
    page.fill('input[name="to"]', day)
    page.locator(".days button").click()
    page.wait_for_url(f"**/audit/pools/{story_floor.pool_id}/?from={day}&to={day}")
    expect(page.locator("body")).to_have_attribute("data-state", "drawn", timeout=WAIT_MS)
    expect(page.locator("#meter-chart circle.point")).to_have_count(1)
    expect(page.locator("#stakes-chart rect.bar")).to_have_attribute("data-count", "3")
    link = page.locator('a.csv[data-chart="hits"]').get_attribute("href")
    assert link.endswith(f"/history.csv?from={day}&to={day}&chart=hits")
    assert {urlsplit(url).netloc for url in requested} == {urlsplit(live_service.url).netloc}
    assert page.console_errors == []


def test_the_auditor_sees_the_voids_by_table_and_shift_and_the_alarm(
    live_service, page, screenshot
):
    """A table voiding 30% of its rounds in the last shift beside one voiding 1%: after the
    integrity check, its row and that shift are marked, and the alarms list its two flags."""
    floor = make_floor(2)
    rigged, fair = (terminal.table_id for terminal in floor.uth)
    zone = ZoneInfo(settings.TIME_ZONE)
    # The middle of the shift before this one: wholly within the window, whatever the hour.
    last = shift_of(timezone.now(), zone).before()
    with time_machine.travel(last.start(zone) + timedelta(hours=settings.SHIFT_HOURS / 2)):
        play_voids(rigged, 40, voids=12, seed=1)
        play_voids(fair, 200, voids=2, seed=2)
    stored = check_integrity()
    assert {(flag.table_id, flag.kind) for flag in stored} == {
        (rigged, "voids_in_shift"),
        (rigged, "voids_in_window"),
    }

    sign_in(page, live_service, "auditor")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_service.url}/audit/pools/{floor.pool_id}/?lang=en")
    expect(page.locator("body")).to_have_attribute("data-state", "drawn", timeout=WAIT_MS)
    expect(page.locator("#voids-section h2")).to_have_text("Voided rounds, by table and shift")
    expect(page.locator("#voids-basis")).to_contain_text("The last 21 shifts of 8 h")
    row = page.locator(f'#voids-table tr.void-table[data-table="{rigged}"]')
    expect(row).to_have_attribute("data-flagged", "true")
    expect(row.locator("td.voids")).to_have_text("12")
    expect(row.locator("td.rounds")).to_have_text("40")
    # 40 of the shift's 240 rounds at its rate of 14 voids in 240: 2.33 expected.
    expect(row.locator("td.expected")).to_have_text("2.33")
    shifts = row.locator("rect.shift")
    expect(shifts).to_have_count(21)
    played = shifts.nth(19)
    assert played.get_attribute("class") == "shift flagged"
    assert (played.get_attribute("data-voids"), played.get_attribute("data-rounds")) == ("12", "40")
    assert row.locator("rect.shift.none").count() == 20
    other = page.locator(f'#voids-table tr.void-table[data-table="{fair}"]')
    expect(other).to_have_attribute("data-flagged", "false")
    assert other.locator("rect.shift.flagged").count() == 0
    flags = page.locator("#void-flags tr.void-flag")
    expect(flags).to_have_count(2)
    assert {flag.get_attribute("data-kind") for flag in flags.all()} == {
        "voids_in_shift",
        "voids_in_window",
    }
    page.screenshot(path=str(screenshot("audit-voids")), full_page=True)

    page.goto(f"{live_service.url}/audit/pools/{floor.pool_id}/?lang=fr")
    expect(page.locator("body")).to_have_attribute("data-state", "drawn", timeout=WAIT_MS)
    expect(page.locator("#voids-section h2")).to_have_text("Tours annulés, par table et par équipe")
    in_shift = page.locator('#void-flags tr.void-flag[data-kind="voids_in_shift"]')
    expect(in_shift).to_contain_text("dans l'équipe")
    assert page.console_errors == []


def test_a_supervisor_is_refused_and_a_stranger_sent_to_sign_in(live_service, page):
    floor = make_floor(1)
    url = f"/audit/pools/{floor.pool_id}/"
    stranger = Client().get(url)
    assert stranger.status_code == 302
    assert stranger["Location"].startswith(settings.LOGIN_URL)
    sign_in(page, live_service, "supervisor")
    answer = page.goto(f"{live_service.url}{url}")
    assert answer.status == 403
    assert page.locator("svg").count() == 0
