"""The staff pages' common frame: the base layout (`pages/base.html`: the header with who is
signed in, the language switch and the sign-out button), its style, and who may open a page.

Every page is rendered by `staff_page`, which inlines the shared style (and the page's own
script, if any) and sets the Content-Security-Policy that allows exactly those blocks; forms may
post to this origin only. A page is for staff with a role (`ROLES`): an anonymous visitor is sent
to the login page, a signed-in user without a role gets a 403 page that says so.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, Concatenate, ParamSpec

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from core.pages import (
    content_security_policy,
    inline_asset,
    page_config,
    page_language,
    remember_language,
)
from jackpot.api.authentication import has_role
from tables.api.registers import READERS as REGISTER_READERS

ROLES = ("supervisor", "auditor", "admin", "surveillance", "manager")
ASSETS = Path(__file__).resolve().parent / "static" / "floor"

TEXT: dict[str, dict[str, str]] = {
    "fr": {
        "locale": "fr-FR",
        "service": "Jackpot progressif",
        "signed_in_as": "Connecté : {user}",
        "logout": "Se déconnecter",
        "language": "Langue",
        "nav_registers": "Registres",
        "no_role_title": "Accès refusé",
        "no_role": "Votre compte ({user}) n'a aucun rôle du service (superviseur, auditeur ou "
        "administrateur). Demandez-le à un administrateur.",
        "nav": "Pages du service",
        "nav_awards": "Gains",
        "nav_sessions": "Séances",
    },
    "en": {
        "locale": "en-GB",
        "service": "Progressive jackpot",
        "signed_in_as": "Signed in: {user}",
        "logout": "Sign out",
        "language": "Language",
        "nav_registers": "Registers",
        "no_role_title": "Access refused",
        "no_role": "Your account ({user}) holds none of the service's roles (supervisor, "
        "auditor or admin). Ask an administrator for one.",
        "nav": "The service's pages",
        "nav_awards": "Awards",
        "nav_sessions": "Sessions",
    },
}

P = ParamSpec("P")
PageView = Callable[Concatenate[HttpRequest, P], HttpResponse]


# --- the floor's navigation: the pages a person's roles open -------------------------------------

#: (URL name, label's key, the roles that open it).
NAVIGATION = (
    ("floor-awards", "nav_awards", ROLES),
    ("floor-sessions", "nav_sessions", ("supervisor", "manager")),
    ("floor-registers", "nav_registers", REGISTER_READERS),
)


def navigation(request: HttpRequest, lang: str) -> list[dict[str, Any]]:
    """The header's links for `request.user`: each page its roles open, the current one marked."""
    if not request.user.is_authenticated:
        return []
    held = set(roles_of(request.user))
    links = []
    for name, label, roles in NAVIGATION:
        if held.intersection(roles):
            url = reverse(name)
            current = request.path.startswith(url)
            links.append({"url": url, "label": TEXT[lang][label], "current": current})
    return links


def roles_of(user: Any) -> list[str]:
    """The service's roles `user` holds (a superuser holds them all)."""
    return [role for role in ROLES if has_role(user, role)]


def staff_page(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    *,
    lang: str,
    text: dict[str, str],
    script: str | None = None,
    extra_style: str | None = None,
    config: dict[str, Any] | None = None,
    status: int = 200,
) -> HttpResponse:
    """`template` (which extends pages/base.html) in `lang`, with `text` (the page's words over
    the layout's), the shared style and `extra_style`, and `script` given `config` (both files
    of static/floor)."""
    style, style_hash = inline_asset(ASSETS / "pages.css")
    styles = [style_hash]
    page_style = None
    if extra_style is not None:
        page_style, page_style_hash = inline_asset(ASSETS / extra_style)
        styles.append(page_style_hash)
    scripts: list[str] = []
    page_script = None
    if script is not None:
        page_script, script_hash = inline_asset(ASSETS / script)
        scripts.append(script_hash)
    other_lang = "en" if lang == "fr" else "fr"
    switch = request.GET.copy()  # the same page, the same query (a login's next), other words
    switch["lang"] = other_lang
    user = request.user
    response = render(
        request,
        template,
        {
            **context,
            "lang": lang,
            "other_lang": other_lang,
            "other_lang_url": f"{request.path}?{switch.urlencode()}",
            "text": {**TEXT[lang], **text},
            "navigation": navigation(request, lang),
            "signed_in_as": TEXT[lang]["signed_in_as"].format(user=user.get_username())
            if user.is_authenticated
            else "",
            "style": style,
            "page_style": page_style,
            "script": page_script,
            "config": page_config(config or {}),
        },
        status=status,
    )
    response["Content-Security-Policy"] = content_security_policy(
        styles=styles, scripts=scripts, form_action="'self'"
    )
    response["Cache-Control"] = "no-store"  # a page with a person's name and a CSRF token
    remember_language(request, response, lang)
    return response


def staff_only(view: PageView[P]) -> PageView[P]:
    """The page for a signed-in user with a role; the login page for anyone else, or a clear
    refusal for a signed-in user without a role."""

    @wraps(view)
    def page(request: HttpRequest, *args: P.args, **kwargs: P.kwargs) -> HttpResponse:
        user = request.user
        if not user.is_authenticated:
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        if not roles_of(user):
            lang = page_language(request)
            refusal = TEXT[lang]["no_role"].format(user=user.get_username())
            return staff_page(
                request,
                "floor/refused.html",
                {"refusal_title": TEXT[lang]["no_role_title"], "refusal": refusal},
                lang=lang,
                text={},
                status=403,
            )
        return view(request, *args, **kwargs)

    return page
