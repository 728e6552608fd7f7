"""Surveillance before payment in a real browser: a surveillance officer signs in, sees the
jackpot waiting in the award queue and records a video review (a referral, then, once a manager
cleared it in his own browser, nothing more is needed); the supervisors' approve button waits for
the review and says why; the jackpot is paid from the page with its winner identified; the review,
the payment and the winner (the document masked) show on the slip. In English and French.
Screenshots go to artifacts/browser/.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from jackpot.awards.workflow import award_verify
from jackpot.models import Award, SurveillanceReview
from tests.browser.test_floor import WAIT_MS, pay_with_identity, supervisor
from tests.conftest import make_floor
from tests.floor.conftest import play_hit
from tests.staff import person
from tests.winners import DOCUMENT, NAME


@pytest.fixture
def floor(live_service):
    floor = make_floor()
    for name, role in (
        ("ana", "supervisor"),
        ("bob", "supervisor"),
        ("sam", "surveillance"),
        ("max", "manager"),
    ):
        person(name, role)
    return floor


def _review(page, card, *, verdict: str, reason: str = "") -> None:
    card.locator("button.review").click()
    page.fill("#review-camera", "UTH-1 overhead")
    page.fill("#review-from", "2026-12-02T09:55:00")
    page.fill("#review-to", "2026-12-02T10:05:00")
    page.select_option("#review-verdict", verdict)
    if reason:
        page.fill("#review-reason", reason)
    page.click("#review-ok")


def test_a_surveillance_officer_reviews_a_jackpot_on_the_queue(
    live_service, floor, browser, artifacts
):
    jackpot, _ = play_hit(floor.uth[0])
    users = {user.username: user for user in get_user_model().objects.all()}
    award_verify(award_id=jackpot["id"], user=users["ana"], note="cards checked")

    # bob, a supervisor, cannot approve yet: the button says it waits for surveillance.
    bob = supervisor(browser, live_service, "bob")
    bobs = bob.locator(f"#jackpot-list article[data-award='{jackpot['id']}']")
    expect(bobs.get_by_role("button", name="Approuver")).to_be_disabled()
    expect(bobs.locator(".why")).to_have_text("En attente de la revue vidéo de la surveillance.")
    expect(bobs.locator("button.review")).to_have_count(0)  # a supervisor records no review

    # sam, surveillance, signs in: the queue is his to read, with one button, the review.
    sam = supervisor(browser, live_service, "sam")
    expect(sam.locator("#message")).to_contain_text("Surveillance")
    card = sam.locator(f"#jackpot-list article[data-award='{jackpot['id']}']")
    expect(card.get_by_role("button", name="Approuver")).to_have_count(0)
    expect(card.get_by_role("button", name="Vérifier")).to_have_count(0)
    # A referral without its reason is refused by the API, and the page says why.
    _review(sam, card, verdict="referred")
    expect(sam.locator("#message")).to_contain_text("Refusé par le service")
    assert not SurveillanceReview.objects.exists()
    _review(sam, card, verdict="referred", reason="la main du croupier passe sur le sabot")
    expect(sam.locator("#message")).to_have_text(
        f"Revue vidéo du gain n°{jackpot['id']} enregistrée."
    )
    expect(card.locator(".review")).to_contain_text("revue vidéo de sam le", timeout=WAIT_MS)
    expect(card.locator(".review")).to_contain_text("gain signalé à un responsable")
    expect(card.locator("button.review")).to_have_count(0)  # a manager decides now
    expect(bobs.locator(".why")).to_have_text(
        "Signalé par la surveillance : un responsable doit décider.", timeout=WAIT_MS
    )
    sam.screenshot(path=str(artifacts / "floor-surveillance.png"), full_page=True)

    # max, the manager, clears the referral from his queue, saying why.
    manager = supervisor(browser, live_service, "max")
    his = manager.locator(f"#jackpot-list article[data-award='{jackpot['id']}']")
    his.locator("button.referral-clear").click()
    manager.fill("#ask-text", "la vidéo montre le sabot intact")
    manager.click("#ask-ok")
    expect(manager.locator("#message")).to_have_text(
        f"Décision sur le signalement du gain n°{jackpot['id']} enregistrée."
    )
    expect(his.locator(".review")).to_contain_text("signalement levé par max", timeout=WAIT_MS)

    # bob approves now; the review is on the slip.
    approve = bobs.get_by_role("button", name="Approuver")
    expect(approve).to_be_enabled(timeout=WAIT_MS)
    approve.click()
    bob.click("#ask-ok")  # the approval's note is optional: none
    expect(bob.locator("#message")).to_have_text(f"Gain n°{jackpot['id']} approuvé.")
    # bob pays at the cage: EUR 10,000 is above the identification threshold, the identity first.
    pay_with_identity(bob, bobs, "Payer")
    expect(bob.locator("#message")).to_have_text(f"Gain n°{jackpot['id']} payé.")
    assert Award.objects.get(pk=jackpot["id"]).status == "paid"
    # The slip: the review, the payment and the winner (the document number masked).
    bob.goto(f"{live_service.url}/floor/awards/{jackpot['id']}/slip/")
    row = bob.locator("tr[data-row='review'] td")
    expect(row).to_contain_text("signalé par sam")
    expect(row).to_contain_text("caméra UTH-1 overhead")
    expect(row).to_contain_text("signalement levé par max")
    expect(bob.locator("tr[data-row='winner'] td")).to_have_text(NAME)
    expect(bob.locator("tr[data-row='document'] td")).to_contain_text(f"*****{DOCUMENT[-3:]}")
    expect(bob.locator("tr[data-row='reference'] td")).to_have_text("CHQ-771")
    expect(bob.locator("body")).not_to_contain_text(DOCUMENT)
    bob.screenshot(path=str(artifacts / "slip-reviewed-identified.png"), full_page=True)
    for page in (bob, sam, manager):
        assert [e for e in page.console_errors if "status of 400" not in e] == []

    # In English, the officer's queue says what the role does.
    sam.goto(f"{live_service.url}/floor/awards/?lang=en")
    expect(sam.locator("#message")).to_have_text(
        "Surveillance: you record the video reviews of waiting awards.", timeout=WAIT_MS
    )
