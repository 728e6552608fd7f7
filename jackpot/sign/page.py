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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from core.pages import content_security_policy, inline_asset, page_config, page_language
from jackpot.models import Pool

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
        },
    )
    response["Content-Security-Policy"] = content_security_policy(
        styles=[style_hash], scripts=[script_hash]
    )
    response["Cache-Control"] = "no-cache"
    return response
