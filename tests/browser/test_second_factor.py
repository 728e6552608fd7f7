"""The second factor in a real browser, against the real server, required as in production.

A supervisor with an authenticator signs in at /floor/login/: the password, then the code her
app shows (computed here from the device's key, as the app does), and she reaches the award
queue. A supervisor without one is led through the enrollment at his first sign-in: he types
the activation code a second admin issued for him, reads the key off the page, types the code it
gives, is shown his recovery codes once, and goes on to the queue. Screenshots go to
artifacts/browser/.
"""

from __future__ import annotations

import re
import time
from base64 import b32decode

import pytest
from django_otp.oath import TOTP
from playwright.sync_api import expect

from jackpot.models import SealedTOTPDevice
from jackpot.staff import second_factor
from tests.staff import PASSWORD, enroll, person

WAIT_MS = 10_000


@pytest.fixture
def supervisors(live_service, settings):
    settings.STAFF_SECOND_FACTOR_REQUIRED = True
    users = {}
    for name in ("ana", "bob"):
        users[name] = person(name, "supervisor")
    enroll(users["ana"])
    return users


@pytest.fixture
def activation(supervisors) -> str:
    """The activation code another admin issued for bob's first enrollment, handed to him."""
    admin = person("ops", "admin")
    return second_factor.activation_issue(subject=supervisors["bob"], user=admin)


def shown_code(key: bytes) -> str:
    """What an authenticator app shows now for `key` (django-otp's defaults: 30 s, 6 digits)."""
    totp = TOTP(key, step=30, t0=0, digits=6)
    totp.time = time.time()
    return f"{totp.token():06d}"


def test_a_supervisor_signs_in_with_her_totp_code_and_reaches_the_queue(
    live_service, supervisors, page, screenshot
):
    page.goto(f"{live_service.url}/floor/awards/")
    expect(page).to_have_url(re.compile(r"/floor/login/\?next=/floor/awards/$"))
    page.click("a.lang")  # in English, which the next pages remember
    page.fill("#id_username", "ana")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")

    expect(page).to_have_url(f"{live_service.url}/floor/login/next/")
    expect(page.locator("#sign-in-step")).to_have_attribute("data-step", "code")
    expect(page.locator("h1")).to_have_text("Second factor")
    device = SealedTOTPDevice.objects.get(user=supervisors["ana"])
    page.fill("#id_code", "000000" if shown_code(device.bin_key) != "000000" else "111111")
    page.click("button[type=submit]")
    expect(page.locator("#step-error")).to_have_text("Wrong code, or a code already used.")
    screenshot("second-factor-code")

    time.sleep(1.1)  # the device's own delay after a failure (django-otp)
    page.fill("#id_code", shown_code(device.bin_key))
    page.click("button[type=submit]")
    expect(page).to_have_url(f"{live_service.url}/floor/awards/")
    expect(page.locator("#queue")).to_have_attribute("data-loaded", "true", timeout=WAIT_MS)
    expect(page.locator("#signed-in")).to_have_attribute("data-user", "ana")
    assert page.console_errors == []


def test_a_supervisor_without_a_device_enrolls_at_his_first_sign_in(
    live_service, supervisors, activation, page, screenshot
):
    page.goto(f"{live_service.url}/floor/login/?lang=en")
    page.fill("#id_username", "bob")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")

    expect(page.locator("#sign-in-step")).to_have_attribute("data-step", "enroll")
    expect(page.locator("#sign-in-step")).to_have_attribute("data-phase", "activate")
    page.fill("#id_activation", activation)
    page.click("button[type=submit]")
    expect(page.locator("#sign-in-step")).to_have_attribute("data-phase", "new_key")
    key = page.locator("#totp-key").inner_text().replace(" ", "")
    expect(page.locator("#totp-uri")).to_have_attribute(
        "href", re.compile(rf"^otpauth://totp/.*bob\?secret={key}&")
    )
    screenshot("second-factor-enroll")
    page.fill("#id_code", shown_code(b32decode(key)))
    page.click("button[type=submit]")

    expect(page.locator("#recovery-codes li")).to_have_count(10)
    screenshot("second-factor-recovery-codes")
    page.click("#continue")
    expect(page).to_have_url(f"{live_service.url}/floor/awards/")
    expect(page.locator("#queue")).to_have_attribute("data-loaded", "true", timeout=WAIT_MS)
    assert SealedTOTPDevice.objects.get(user=supervisors["bob"]).confirmed
    assert page.console_errors == []
