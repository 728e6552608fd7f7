"""The supervisors' award queue and a payment slip in a real browser, against the real server.

Two supervisors in two browser sessions: ana signs in and verifies a jackpot; her approve button
is disabled with the reason beside it, and when clicked anyway the API's refusal is what the page
shows; she voids another award with a reason; bob approves and pays; ana's page follows by
itself; the slip prints (print media and Chromium's own PDF) and its server-side PDF downloads.
Screenshots go to artifacts/browser/.
"""

from __future__ import annotations

import io
import re

import pypdf
import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from jackpot.models import Award
from jackpot.services import role_group
from tests.conftest import make_floor, uth_play, uth_seat
from tests.pages.conftest import PASSWORD, play_hit
from tests.staff import grant_roles, surveilled

WAIT_MS = 10_000  # the queue polls every 2 s
TABLET = {"width": 1180, "height": 820}  # a 10-inch tablet, landscape


@pytest.fixture
def floor(live_service):
    floor = make_floor()
    for name in ("ana", "bob"):
        user = get_user_model().objects.create_user(username=name, password=PASSWORD)
        grant_roles(user, role_group("supervisor"))
    return floor


def play_straight_flush(terminal) -> dict:
    """A straight flush on seat 1: a fixed award above the verification threshold (pending)."""
    terminal.post("/rounds", {"round_id": "r-2", "seats": [uth_seat(1)]})
    answer = terminal.post(
        "/rounds/r-2/result",
        {
            "board": ["9s", "8s", "7s", "2d", "3c"],
            "dealer": ["Kd", "Kc"],
            "seats": [uth_play(1, "6s 5s")],
        },
    ).json()
    (award,) = answer["awards"]
    assert (award["kind"], award["status"]) == ("straight_flush", "pending")
    return award


def supervisor(browser, server, name):
    """A tablet's tab, signed in as `name` through the login page, on the queue."""
    context = browser.new_context(viewport=TABLET, has_touch=True)
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
    page.on("pageerror", lambda error: page.console_errors.append(str(error)))
    page.goto(f"{server.url}/floor/awards/")
    expect(page).to_have_url(re.compile(r"/floor/login/\?next=/floor/awards/$"))
    page.fill("#id_username", name)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(f"{server.url}/floor/awards/")
    expect(page.locator("#queue")).to_have_attribute("data-loaded", "true", timeout=WAIT_MS)
    return page


def test_two_supervisors_take_a_jackpot_to_payment_and_print_its_slip(
    live_service, floor, browser, artifacts
):
    jackpot, _ = play_hit(floor.uth[0])
    straight_flush = play_straight_flush(floor.uth[1])
    ana = supervisor(browser, live_service, "ana")
    card = ana.locator(f"#jackpot-list article[data-award='{jackpot['id']}']")
    expect(ana.locator("#jackpot")).to_be_visible()
    expect(card.locator(".card.win")).to_have_count(5)  # the royal, marked among the seven
    expect(card.locator(".card")).to_have_count(7)
    expect(card.locator(".field.status .value")).to_have_text("à vérifier")

    # ana verifies, with a note.
    card.get_by_role("button", name="Vérifier").click()
    ana.fill("#ask-text", "vidéo de la table contrôlée")
    ana.click("#ask-ok")
    expect(ana.locator("#message")).to_have_text(f"Gain n°{jackpot['id']} vérifié.")
    expect(card).to_have_attribute("data-status", "verified", timeout=WAIT_MS)
    expect(card.locator(".people")).to_contain_text("vérifié par ana")
    approve = card.get_by_role("button", name="Approuver")
    expect(approve).to_be_disabled()
    expect(card.locator(".why")).to_have_text(
        "Vous avez vérifié ce gain : un autre superviseur doit l'approuver."
    )
    ana.screenshot(path=str(artifacts / "floor-queue.png"), full_page=True)
    # Clicked anyway (a page that lied, or an old one), the API refuses, and the page says so.
    approve.evaluate("button => { button.disabled = false; }")
    approve.click()
    expect(ana.locator("#message")).to_contain_text("Refusé : la même personne")
    assert Award.objects.get(pk=jackpot["id"]).status == "verified"

    # ana voids the straight flush (a misdeal seen on the video), with a reason.
    posts = []
    ana.on("request", lambda request: request.method == "POST" and posts.append(request.url))
    other = ana.locator(f"#queue article[data-award='{straight_flush['id']}']")
    other.get_by_role("button", name="Annuler").click()
    ana.click("#ask-ok")  # no reason: nothing is sent
    other.get_by_role("button", name="Annuler").click()
    ana.fill("#ask-text", "pas encore")
    ana.keyboard.press("Escape")  # a reason, then Escape: nothing is sent either
    other.get_by_role("button", name="Annuler").click()
    ana.fill("#ask-text", "maldonne vue sur la vidéo")
    ana.click("#ask-ok")
    expect(ana.locator("#message")).to_have_text(f"Gain n°{straight_flush['id']} annulé.")
    expect(other).to_have_count(0)
    voided = Award.objects.get(pk=straight_flush["id"])
    assert (voided.status, voided.void_reason) == ("void", "maldonne vue sur la vidéo")
    assert posts == [f"{live_service.url}/api/v1/awards/{straight_flush['id']}/void"]

    # Surveillance confirms it on video (in a browser: tests/browser/test_surveillance.py).
    surveilled(jackpot["id"])
    # bob, on his own tablet, sees who verified, approves and pays.
    bob = supervisor(browser, live_service, "bob")
    bobs = bob.locator(f"#jackpot-list article[data-award='{jackpot['id']}']")
    expect(bobs.locator(".people")).to_contain_text("vérifié par ana")
    bobs.get_by_role("button", name="Approuver").click()
    expect(bob.locator("#message")).to_have_text(f"Gain n°{jackpot['id']} approuvé.")
    bobs.get_by_role("button", name="Payer").click()
    expect(bob.locator("#message")).to_have_text(f"Gain n°{jackpot['id']} payé.")
    expect(bob.locator("#jackpot")).to_be_hidden()
    paid = bob.locator(f"#paid article[data-award='{jackpot['id']}']")
    expect(paid.locator(".people")).to_contain_text("payé par bob")

    # ana's queue follows by itself: the jackpot leaves the top, paid.
    expect(ana.locator("#jackpot")).to_be_hidden(timeout=WAIT_MS)
    expect(ana.locator(f"#paid article[data-award='{jackpot['id']}']")).to_be_visible()

    # The slip, from the paid award's link.
    paid.get_by_role("link", name="Bordereau").click()
    expect(bob.locator("#slip h1")).to_have_text(f"Bordereau de paiement · gain n° {jackpot['id']}")
    expect(bob.locator("tr[data-row='combination'] td")).to_have_text("Ah Kh Qh Jh Th")
    expect(bob.locator("tr[data-row='amount_words'] td")).to_contain_text("dix mille")
    bob.emulate_media(media="print")
    expect(bob.locator(".slip-tools")).to_be_hidden()
    expect(bob.locator("header.bar")).to_be_hidden()
    bob.screenshot(path=str(artifacts / "floor-slip-print.png"), full_page=True)
    printed = bob.pdf(prefer_css_page_size=True)  # what the print button sends to the printer
    reader = pypdf.PdfReader(io.BytesIO(printed))
    width, height = (round(float(v)) for v in reader.pages[0].mediabox.upper_right)
    assert (width, height) == (420, 595)  # A5, from the print stylesheet
    assert f"gain n° {jackpot['id']}" in reader.pages[0].extract_text()
    bob.emulate_media(media="screen")
    bob.screenshot(path=str(artifacts / "floor-slip.png"), full_page=True)

    # The register's PDF, drawn by the server, downloads with bob's session.
    pdf = bob.request.get(live_service.url + bob.locator("#pdf").get_attribute("href"))
    assert pdf.status == 200 and pdf.headers["content-type"] == "application/pdf"
    assert pdf.body().startswith(b"%PDF-")
    register = pypdf.PdfReader(io.BytesIO(pdf.body()))
    assert "Bordereau de paiement" in register.pages[0].extract_text()

    # No script error and no CSP refusal; the one 403 is the refused approval, logged by Chromium.
    assert bob.console_errors == []
    assert len(ana.console_errors) == 1 and "status of 403" in ana.console_errors[0]
    # The queue as the README shows it: ana's tablet, in English.
    ana.goto(f"{live_service.url}/floor/awards/?lang=en")
    expect(ana.locator("#paid article")).to_have_count(1, timeout=WAIT_MS)
    expect(ana.locator("h1")).to_have_text("Awards to handle")
    ana.screenshot(path=str(artifacts / "floor-queue-en.png"), full_page=True)
