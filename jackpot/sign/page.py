"""The jackpot sign: `/display/{pool}/`, the full-screen page above the tables.

The page is a shell; everything it shows comes from the public API, polled by its script:
`GET /api/v1/pools/{pool}/meter` every second with If-None-Match (a 304 costs the server
nothing), and `GET /api/v1/pools/{pool}` (the fixed awards) every few minutes. What it promises:
- it never shows a number as live that it has not just read: when no answer has come for
  `OFFLINE_AFTER_MS`, or at once when the meter answers 503 (the progressive is closed: its
  database cannot be reached), the amount is taken off the screen and the sign says it is
  offline;
- it needs nothing from outside the service: its style and script are inlined, and the page's
  Content-Security-Policy allows those two blocks (by hash) and requests to this origin only;
- French by default, English with `?lang=en`.

Beside it, the progressive's rules as posted at the table (`jackpot.sign.rules_sheet`):
`/display/{pool}/rules` and `/display/{pool}/rules.pdf`, public like the sign, each read from
the pool's one row and answered 304 while its ETag (the terms' digest and the language) holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotModified
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import parse_etags

from core.pages import content_security_policy, inline_asset, page_config, page_language
from jackpot.models import Pool
from jackpot.sign.rules_sheet import Lang, Posted, posted_terms, rules_pdf, rules_sheet

POLL_MS = 1_000
FETCH_TIMEOUT_MS = 2_500
OFFLINE_AFTER_MS = 5_000
CONFIG_REFRESH_MS = 300_000

_ASSETS = Path(__file__).resolve().parents[1] / "static" / "jackpot"

TEXT: dict[str, dict[str, str]] = {
    "fr": {
        "locale": "fr-FR",
        "title": "Jackpot progressif",
        "jackpot": "JACKPOT",
        "stake": "Ultimate Texas Hold'em · mise progressive {amount}",
        "fixed": "Bonus",
        "winners": "Derniers gagnants",
        "no_winners": "Aucun gagnant pour l'instant",
        "table": "Table",
        "hit": "JACKPOT GAGNÉ !",
        "verifying": "Vérification en cours",
        "offline": "HORS LIGNE",
        "offline_detail": "Montant momentanément indisponible · reconnexion…",
        "connecting": "Connexion…",
        "suspended": "SUSPENDU",
        "suspended_detail": "Jackpot progressif suspendu · le jeu continue sans mise progressive",
        "stopped": "ARRÊTÉ",
        "stopped_detail": "Ce jackpot progressif est arrêté",
        "jackpot_share": "{percent} % du jackpot",
        "envy_detail": "à chaque autre joueur de la table",
        "royal_flush": "Quinte flush royale",
        "community_royal": "Quinte flush royale communautaire",
        "straight_flush": "Quinte flush",
        "four_of_a_kind": "Carré",
        "full_house": "Full",
        "envy": "La Garantie",
        "rules": "Règlement",
    },
    "en": {
        "locale": "en-GB",
        "title": "Progressive jackpot",
        "jackpot": "JACKPOT",
        "stake": "Ultimate Texas Hold'em · progressive bet {amount}",
        "fixed": "Fixed awards",
        "winners": "Last winners",
        "no_winners": "No winners yet",
        "table": "Table",
        "hit": "JACKPOT WON!",
        "verifying": "Being verified",
        "offline": "OFFLINE",
        "offline_detail": "Amount unavailable for now · reconnecting…",
        "connecting": "Connecting…",
        "suspended": "SUSPENDED",
        "suspended_detail": "Progressive jackpot suspended · play goes on without the progressive",
        "stopped": "STOPPED",
        "stopped_detail": "This progressive jackpot has been stopped",
        "jackpot_share": "{percent}% of the jackpot",
        "envy_detail": "to every other bettor at the table",
        "royal_flush": "Royal flush",
        "community_royal": "Community royal",
        "straight_flush": "Straight flush",
        "four_of_a_kind": "Four of a kind",
        "full_house": "Full house",
        "envy": "Envy bonus",
        "rules": "Rules",
    },
}


def display_sign(request: HttpRequest, pool: int) -> HttpResponse:
    if not Pool.objects.filter(pk=pool).exists():
        raise Http404(f"no pool {pool}")
    lang = page_language(request)
    style, style_hash = inline_asset(_ASSETS / "sign.css")
    script, script_hash = inline_asset(_ASSETS / "sign.js")
    config: dict[str, Any] = {
        "meterUrl": reverse("pool-meter", kwargs={"pool": pool}),
        "poolUrl": reverse("pool-detail", kwargs={"pool": pool}),
        "pollMs": POLL_MS,
        "fetchTimeoutMs": FETCH_TIMEOUT_MS,
        "offlineAfterMs": OFFLINE_AFTER_MS,
        "configRefreshMs": CONFIG_REFRESH_MS,
        "text": TEXT[lang],
    }
    response = render(
        request,
        "jackpot/sign.html",
        {
            "lang": lang,
            "text": TEXT[lang],
            "style": style,
            "script": script,
            "config": page_config(config),
            "rules_url": reverse("display-rules", kwargs={"pool": pool}) + f"?lang={lang}",
        },
    )
    response["Content-Security-Policy"] = content_security_policy(
        styles=[style_hash], scripts=[script_hash]
    )
    response["Cache-Control"] = "no-cache"
    return response


RULES_TEXT: dict[str, dict[str, str]] = {
    "fr": {"pdf": "Version imprimable (PDF)", "other": "English"},
    "en": {"pdf": "Printable version (PDF)", "other": "Français"},
}


def _posted(request: HttpRequest, pool: int, kind: str) -> tuple[Posted, Lang, str]:
    """The pool's posted terms, the language asked and the page's ETag; 404: no such pool."""
    posted = posted_terms(pool)
    if posted is None:
        raise Http404(f"no pool {pool}")
    lang = cast(Lang, page_language(request))
    return posted, lang, f'"rules-{kind}-{posted.version}-{lang}"'


def _unchanged(request: HttpRequest, etag: str) -> HttpResponse | None:
    """304 when the client holds this version (the sheet changes only with the terms)."""
    held = parse_etags(request.headers.get("If-None-Match", ""))
    if etag in held or "*" in held:
        response = HttpResponseNotModified()
        _cache_headers(response, etag)
        return response
    return None


def _cache_headers(response: HttpResponse, etag: str) -> None:
    response["ETag"] = etag
    response["Cache-Control"] = "public, no-cache"  # kept, and asked again with If-None-Match
    response["Vary"] = "Cookie"  # the language may come from the cookie (core.pages)


def display_rules(request: HttpRequest, pool: int) -> HttpResponse:
    posted, lang, etag = _posted(request, pool, "html")
    unchanged = _unchanged(request, etag)
    if unchanged is not None:
        return unchanged
    other = "en" if lang == "fr" else "fr"
    here = reverse("display-rules", kwargs={"pool": pool})
    style, style_hash = inline_asset(_ASSETS / "rules_sheet.css")
    response = render(
        request,
        "jackpot/rules_sheet.html",
        {
            "sheet": rules_sheet(posted, lang),
            "text": RULES_TEXT[lang],
            "club": settings.CLUB_NAME,
            "style": style,
            "pdf_url": reverse("display-rules-pdf", kwargs={"pool": pool}) + f"?lang={lang}",
            "other_url": f"{here}?lang={other}",
            "other_lang": other,
        },
    )
    response["Content-Security-Policy"] = content_security_policy(styles=[style_hash], scripts=[])
    _cache_headers(response, etag)
    return response


def display_rules_pdf(request: HttpRequest, pool: int) -> HttpResponse:
    posted, lang, etag = _posted(request, pool, "pdf")
    unchanged = _unchanged(request, etag)
    if unchanged is not None:
        return unchanged
    response = HttpResponse(rules_pdf(rules_sheet(posted, lang)), content_type="application/pdf")
    filename = f"rules-{pool}-{lang}.pdf" if lang == "en" else f"reglement-{pool}-{lang}.pdf"
    response["Content-Disposition"] = f'inline; filename="{filename}"'
    _cache_headers(response, etag)
    return response
