"""What every page served to a browser shares: its language, its inlined assets and its
Content-Security-Policy (the jackpot sign's and the staff pages' alike).

Invariants:
- a page needs nothing from outside the service: its style and script are inlined, and the
  policy allows exactly those blocks (by their SHA-256, as the browser hashes them) and requests
  to this origin only;
- French unless English is asked for: `?lang=en` (or `?lang=fr`) chooses, and is remembered in a
  cookie so that a redirect (to the login page and back) keeps the language.
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.safestring import SafeString, mark_safe

LANGUAGES = ("fr", "en")
LANGUAGE_COOKIE = "lang"


@cache
def inline_asset(path: Path) -> tuple[SafeString, str]:
    """A file to inline and its CSP source expression (its SHA-256, as the browser hashes it)."""
    text = path.read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
    return mark_safe(text), f"'sha256-{digest}'"  # our own file, not user input


def page_config(config: Any) -> SafeString:
    """A page's configuration as JSON to put in a `<script type="application/json">` block: no
    `<` in it, so no text in it can close the block."""
    return mark_safe(json.dumps(config).replace("<", "\\u003c"))


def page_language(request: HttpRequest) -> str:
    """`?lang=` if it names a language we write, else the remembered one, else French."""
    for asked in (request.GET.get("lang"), request.COOKIES.get(LANGUAGE_COOKIE)):
        if asked in LANGUAGES:
            return str(asked)
    return "fr"


def remember_language(request: HttpRequest, response: HttpResponse, lang: str) -> None:
    """Keep the language the URL asked for (a year; it is no secret, the page's script may read
    it)."""
    if request.GET.get("lang") in LANGUAGES:
        response.set_cookie(LANGUAGE_COOKIE, lang, max_age=365 * 86400, samesite="Lax")


def content_security_policy(
    *, styles: list[str], scripts: list[str], form_action: str = "'none'"
) -> str:
    """The policy of a page whose only style and script are the inlined blocks hashed in
    `styles` and `scripts`, which talks to this origin only and is framed by no one (as
    X-Frame-Options DENY already says)."""
    script_src = " ".join(scripts) or "'none'"
    return (
        f"default-src 'none'; connect-src 'self'; style-src {' '.join(styles)}; "
        f"script-src {script_src}; base-uri 'none'; form-action {form_action}; "
        "frame-ancestors 'none'"
    )
