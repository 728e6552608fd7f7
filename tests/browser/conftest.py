"""Headless Chromium, driven by Playwright, for the pages people look at.

The browser is Debian's `chromium` (`make test` installs it; CHROMIUM names another binary): no
browser is downloaded at run time. It runs with its background networking off, since this machine
has no internet to reach. Screenshots go to `artifacts/browser/` (ARTIFACTS_DIR to change it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT

CHROMIUM_FLAGS = [
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail(
            f"no Chromium at {path}: install Debian's chromium (make test does, with "
            "deploy/dev/ensure-browser.sh) or set CHROMIUM to a Chromium binary"
        )
    return path


@pytest.fixture(scope="module", autouse=True)
def _orm_beside_playwright():
    # Playwright's sync API keeps an event loop running on this thread while the browser is up,
    # and Django then refuses ORM calls from the thread (the test's own, and pytest-django's
    # flush). None of them runs inside that loop, so they are safe: say so, for this module only.
    saved = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if saved is None:
        del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = saved


@pytest.fixture(scope="module")
def browser(_orm_beside_playwright):
    """One Chromium per test module: the event loop must be gone before other modules run."""
    from playwright.sync_api import expect, sync_playwright

    # An `expect` without a timeout of its own is a wait, not a bound: it returns as soon as the
    # page shows what it expects. Playwright's 5 s ran out on a busy CI machine while Swagger UI
    # was still drawing; the waits that are bounds (the sign offline at the first 503) keep
    # their own timeout.
    expect.set_options(timeout=15_000)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=_chromium(), args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A fresh 1920x1080 tab; `page.console_errors` collects script errors and CSP refusals."""
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    page.console_errors = []
    page.on(
        "console",
        lambda message: message.type == "error" and page.console_errors.append(message.text),
    )
    page.on("pageerror", lambda error: page.console_errors.append(str(error)))
    yield page
    context.close()


@pytest.fixture
def artifacts() -> Path:
    """artifacts/browser/, where screenshots go (a test with several tabs saves each there)."""
    folder = Path(os.environ.get("ARTIFACTS_DIR", ROOT / "artifacts")) / "browser"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def screenshot(page, artifacts):
    """`screenshot("name")` saves the page as artifacts/browser/name.png."""

    def save(name: str) -> Path:
        path = artifacts / f"{name}.png"
        page.screenshot(path=str(path))
        return path

    return save
