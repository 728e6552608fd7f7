"""The supervisors' award queue and a payment slip in a real browser, against the real server.

Two supervisors in two browser sessions: ana signs in and verifies a jackpot; her approve button
is disabled with the reason beside it, and when clicked anyway the API's refusal is what the page
shows; she voids another award with a reason; bob approves with a note and pays by cheque with
the winner's identity (the jackpot is above the identification threshold); ana's page follows by
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

from jackpot.awards import winners
from jackpot.awards.workflow import award_approve, award_verify
from jackpot.models import Award
from tests.conftest import make_floor, uth_play, uth_seat
from tests.floor.conftest import play_hit
from tests.staff import PASSWORD, person, surveilled
from tests.winners import DOCUMENT, NAME, WINNER

WAIT_MS = 10_000  # the queue polls every 2 s
TABLET = {"width": 1180, "height": 820}  # a 10-inch tablet, landscape


@pytest.fixture
def floor(live_service):
    floor = make_floor()
    for name in ("ana", "bob"):
        person(name, "supervisor")
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


def pay_with_identity(page, card, label, *, method="cheque", reference="CHQ-771"):
    """Pay from `card`'s button `label`: the method, a reference, a note, the winner's identity.
    "OK" without the identity first: the browser keeps the dialog open and nothing is sent."""
    card.get_by_role("button", name=label).click()
    expect(page.locator("#pay")).to_be_visible()
    page.select_option("#pay-method", method)
    page.fill("#pay-reference", reference)
    page.fill("#pay-note", "remis en main propre")
    page.click("#pay-ok")  # the identity is required: the form refuses to close
    expect(page.locator("#pay")).to_be_visible()
    page.fill("#winner-name", NAME)
    page.fill("#winner-birth", WINNER["date_of_birth"])
    page.select_option("#winner-document-type", WINNER["document_type"])
    page.fill("#winner-document-number", DOCUMENT)
    page.fill("#winner-nationality", "fr")
    page.click("#pay-ok")


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
    ana.click("#ask-ok")  # the approval's note is optional: sent without one
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
    bob.fill("#ask-text", "responsable de salle présent")  # the approval's optional note
    bob.click("#ask-ok")
    expect(bob.locator("#message")).to_have_text(f"Gain n°{jackpot['id']} approuvé.")
    assert Award.objects.get(pk=jackpot["id"]).approval_note == "responsable de salle présent"
    # Paying: EUR 10,000 is above the identification threshold, so the identity is required.
    pay_with_identity(bob, bobs, "Payer")
    expect(bob.locator("#message")).to_have_text(f"Gain n°{jackpot['id']} payé.")
    expect(bob.locator("#jackpot")).to_be_hidden()
    paid = bob.locator(f"#paid article[data-award='{jackpot['id']}']")
    expect(paid.locator(".people")).to_contain_text("payé par bob")
    expect(paid.locator(".people")).to_contain_text("gagnant identifié")
    expect(bob.locator("#pay-form input[name=name]")).to_have_value("")  # not kept in the form
    done = Award.objects.get(pk=jackpot["id"])
    assert (done.payment_method, done.payment_reference) == ("cheque", "CHQ-771")
    assert winners.identities([done.pk])[done.pk]["name"] == NAME

    # ana's queue follows by itself: the jackpot leaves the top, paid.
    expect(ana.locator("#jackpot")).to_be_hidden(timeout=WAIT_MS)
    expect(ana.locator(f"#paid article[data-award='{jackpot['id']}']")).to_be_visible()

    # The slip, from the paid award's link.
    paid.get_by_role("link", name="Bordereau").click()
    expect(bob.locator("#slip h1")).to_have_text(f"Bordereau de paiement · gain n° {jackpot['id']}")
    expect(bob.locator("tr[data-row='combination'] td")).to_have_text("Ah Kh Qh Jh Th")
    expect(bob.locator("tr[data-row='amount_words'] td")).to_contain_text("dix mille")
    expect(bob.locator("tr[data-row='method'] td")).to_have_text("chèque")
    expect(bob.locator("tr[data-row='reference'] td")).to_have_text("CHQ-771")
    expect(bob.locator("tr[data-row='winner'] td")).to_have_text(NAME)
    masked = "*" * (len(DOCUMENT) - 3) + DOCUMENT[-3:]
    expect(bob.locator("tr[data-row='document'] td")).to_have_text(f"passeport n° {masked}")
    expect(bob.locator("#slip")).not_to_contain_text(DOCUMENT)
    expect(bob.locator("tr[data-row='approved'] td")).to_contain_text("responsable de salle")
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


def test_a_jackpot_above_the_threshold_is_paid_with_the_winners_identity_in_english(
    live_service, floor, browser, artifacts
):
    """The jackpot verified by ana and approved by bob (their steps are the other test's); bob
    pays it by bank transfer in English: the identity form says it is required, the payment
    refused by the browser without it, then done with it; the identity is on the register, not
    on the page."""
    jackpot, _ = play_hit(floor.uth[0])
    ana, bob = (get_user_model().objects.get(username=name) for name in ("ana", "bob"))
    award_verify(award_id=jackpot["id"], user=ana, note="video checked")
    surveilled(jackpot["id"])
    award_approve(award_id=jackpot["id"], user=bob)
    page = supervisor(browser, live_service, "bob")
    page.goto(f"{live_service.url}/floor/awards/?lang=en")
    card = page.locator(f"#jackpot-list article[data-award='{jackpot['id']}']")
    expect(card).to_have_attribute("data-status", "approved", timeout=WAIT_MS)
    posts = []
    page.on("request", lambda request: request.method == "POST" and posts.append(request))
    card.get_by_role("button", name="Pay").click()
    expect(page.locator("#pay-winner-rule")).to_have_text(
        "Required: an award of €2,000.00 or more (anti-money laundering)."
    )
    page.screenshot(path=str(artifacts / "floor-pay-en.png"))
    page.keyboard.press("Escape")  # left: nothing is sent
    expect(page.locator("#pay")).to_be_hidden()
    pay_with_identity(page, card, "Pay", method="bank_transfer", reference="VIR-2026-12")
    expect(page.locator("#message")).to_have_text(f"Award #{jackpot['id']} paid.")
    assert len(posts) == 1
    sent = posts[0].post_data_json
    assert sent["method"] == "bank_transfer" and sent["reference"] == "VIR-2026-12"
    assert sent["winner"] == {**WINNER, "name": NAME}  # nationality upper-cased by the page
    paid = page.locator(f"#paid article[data-award='{jackpot['id']}']")
    expect(paid.locator(".people")).to_contain_text("winner identified")
    expect(page.locator("body")).not_to_contain_text(DOCUMENT)
    record = winners.identity_of(jackpot["id"], reader="test")
    assert (record.name, record.document_number, record.recorded_by) == (NAME, DOCUMENT, "bob")
    assert page.console_errors == []
