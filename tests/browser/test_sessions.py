"""The club's sessions in a real browser, against the real server, the second factor on as in
production (compliance 54).

ana (supervisor) opens the session on /floor/sessions/; two terminals post rounds with
progressive stakes through the API; ana closes the session and counts both tables' drop boxes;
bob (manager) confirms them blind with fresh second-factor codes: one table exact, the other with
a difference, flagged (red, "Écart", SE19); a disagreeing count is refused and says so. French
throughout, then the final state in English. Screenshots go to artifacts/browser/sessions-*.png.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from jackpot.models import OutboxMessage, Pool
from jackpot.staff import second_factor
from tables.models import DropCount, Table
from tests.browser.test_registers import _download
from tests.conftest import assert_journal_ok, make_floor
from tests.staff import PASSWORD, code, enrolled
from tests.tables.club.story import play

TABLET = {"width": 1180, "height": 820}  # a 10-inch tablet, landscape


@pytest.fixture
def crew(live_service, settings):
    settings.STAFF_SECOND_FACTOR_REQUIRED = True
    return {"ana": enrolled("ana", "supervisor"), "bob": enrolled("bob", "manager")}


def staff_tab(browser, server, user: User):
    """A tablet's tab signed in as `user` (password, then the code of their authenticator),
    on the sessions' page."""
    context = browser.new_context(viewport=TABLET, has_touch=True)
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
    page.on("pageerror", lambda error: page.console_errors.append(str(error)))
    page.goto(f"{server.url}/floor/sessions/")
    expect(page).to_have_url(re.compile(r"/floor/login/\?next=/floor/sessions/$"))
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(f"{server.url}/floor/login/next/")
    page.fill("#id_code", code(user))
    page.click("button[type=submit]")
    expect(page).to_have_url(f"{server.url}/floor/sessions/")
    return page


def shot(page, artifacts, name: str) -> None:
    page.screenshot(path=str(artifacts / f"sessions-{name}.png"), full_page=True)


def confirm(page, table: int, amount: str, given: str) -> None:
    box = page.locator(f"#drop-{table}")
    box.locator("input[name=counted]").fill(amount)
    box.locator("input[name=second_factor_code]").fill(given)
    box.get_by_role("button", name="Confirmer le comptage").click()


def test_a_session_is_opened_closed_and_its_boxes_counted_by_two_people(
    live_service, crew, browser, artifacts
):
    floor = make_floor(2)
    one, two = floor.uth[0].table_id, floor.uth[1].table_id
    names = dict(Table.objects.values_list("pk", "name"))
    ana = staff_tab(browser, live_service, crew["ana"])
    expect(ana.locator("nav.pages a[aria-current=page]")).to_have_text("Séances")
    expect(ana.locator("#current .empty")).to_have_text("Aucune séance n'est ouverte.")
    shot(ana, artifacts, "1-none-open")

    ana.click("#open-session")
    expect(ana.locator("#done")).to_have_text("Séance n° 1 ouverte.")
    expect(ana.locator("#current")).to_contain_text("Ouverte par ana le")
    shot(ana, artifacts, "2-open")

    # The terminals play: table one 3 stakes in one round (EUR 15), table two 2 (EUR 10).
    play(floor.uth[0], "one-1", 3)
    play(floor.uth[1], "two-1", 1)
    play(floor.uth[1], "two-2", 1)

    ana.click("#close-session")
    expect(ana.locator("#done")).to_have_text(
        "Séance n° 1 close : son relevé est pris dans le journal."
    )
    expect(ana.locator("#session")).to_have_attribute("data-status", "closed")
    withheld = ana.locator("#session-tables tbody tr .withheld")
    expect(withheld).to_have_text(["15,00\u00a0€", "10,00\u00a0€"])
    shot(ana, artifacts, "3-closed")

    # ana counts both boxes: table one's holds EUR 15.00, table two's EUR 9.50 (one chip short).
    for table, name, amount in ((one, names[one], "15,00"), (two, names[two], "9,50")):
        box = ana.locator(f"#drop-{table}")
        box.locator("input[name=counted]").fill(amount)
        box.get_by_role("button", name="Enregistrer le comptage").click()
        expect(ana.locator("#done")).to_have_text(
            f"Comptage de la table {name} enregistré : une autre personne confirme."
        )
    expect(ana.locator(f"#drop-{one}")).to_have_attribute("data-state", "counted_by_you")
    expect(ana.locator(f"#drop-{one} .confirm-form")).to_have_count(0)  # not hers to confirm
    shot(ana, artifacts, "4-counted")

    bob = staff_tab(browser, live_service, crew["bob"])
    expect(bob.locator("#current .empty")).to_have_text("Aucune séance n'est ouverte.")
    shot(bob, artifacts, "5-list")
    bob.locator("#recent tr", has_text="ana").get_by_role("link").click()
    expect(bob.locator(f"#drop-{one}")).to_have_attribute("data-state", "to_confirm")
    expect(bob.locator(f"#drop-{two} .counted")).to_have_count(0)  # blind: no amount shown
    shot(bob, artifacts, "6-to-confirm")

    recovery = second_factor.recovery_codes_issue(crew["bob"])  # a TOTP code serves once
    confirm(bob, one, "15,00", code(crew["bob"], steps_ahead=1))
    expect(bob.locator("#done")).to_have_text(f"Comptage de la table {names[one]} confirmé.")
    expect(bob.locator(f"#drop-{one}")).to_have_attribute("data-state", "exact")

    confirm(bob, two, "9,00", recovery[0])  # bob's count differs from ana's: nothing confirmed
    expect(bob.locator("#refused")).to_have_text(
        "Refusé : votre comptage diffère du premier : rien n'est confirmé. La première personne "
        "recompte l'urne."
    )
    expect(bob.locator(f"#drop-{two}")).to_have_attribute("data-state", "to_confirm")
    shot(bob, artifacts, "7-count-disagrees")

    confirm(bob, two, "9,50", recovery[1])
    box = bob.locator(f"#drop-{two}")
    expect(box).to_have_attribute("data-state", "difference")
    expect(box.locator(".difference")).to_have_text("\u22120,50\u00a0€")
    expect(box.locator(".flag")).to_have_text(
        "Écart de \u22120,50\u00a0€ : événement significatif SE19, enregistré, jamais corrigé."
    )
    expect(box.locator(".flag")).to_have_css("color", "rgb(161, 29, 29)")
    shot(bob, artifacts, "8-confirmed")

    bob.click("a.lang")
    expect(box.locator(".flag")).to_have_text(
        "Difference of \u2212€0.50: significant event SE19, recorded, never corrected."
    )
    expect(bob.locator("#session-pools tbody td").first).to_have_text(
        Pool.objects.get(pk=floor.pool_id).name
    )
    expect(box.locator(".difference")).to_have_text("\u2212€0.50")
    expect(bob.locator(f"#drop-{one} .exact")).to_contain_text("Exact")
    shot(bob, artifacts, "9-final-en")

    # The session's registers, as bob (a manager) downloads them: model 8 with both counts and
    # the difference, model 8 ter with the amount the sign displayed at the close.
    bob.goto(f"{live_service.url}/floor/registers/?lang=fr")
    withheld, displayed = bob.locator("#withheld"), bob.locator("#displayed")
    shown = f"{Pool.objects.get(pk=floor.pool_id).meter_cents / 100:_.2f}"
    shown = shown.replace(".", ",").replace("_", " ")
    eight = _download(bob, withheld.locator("a[data-format=pdf]"), artifacts, "session-register-8")
    assert "Registre des prélèvements (modèle 8)" in eight
    assert "15,00" in eight and "9,50" in eight and "-0,50" in eight
    assert "Les deux personnes ayant procédé au comptage" in eight
    ter = _download(
        bob, displayed.locator("a[data-format=pdf]"), artifacts, "session-register-8ter"
    )
    assert "Registre des montants affichés (modèle 8 ter)" in ter and shown in ter

    rows = {row.table_id: row for row in DropCount.objects.all()}
    assert (rows[one].difference_cents, rows[two].difference_cents) == (0, -50)
    assert {rows[one].confirmed_by, rows[two].confirmed_by} == {"user:bob"}
    assert OutboxMessage.objects.filter(payload__code="SE19").count() == 1
    refusal = "the server responded with a status of 409"  # the page of the count refused
    assert ana.console_errors == [] and [e for e in bob.console_errors if refusal not in e] == []
    assert_journal_ok()
