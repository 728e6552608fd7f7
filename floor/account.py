"""The signed-in person's own account, `/floor/account/`: their second factor, their recovery
codes and their API token. Every action acts on `request.user` and takes no other person from
the request: a credential is made only by its owner, for themselves.

- The second factor: its state (a confirmed TOTP device, the recovery codes left); without a
  device, its enrollment as at the sign-in (`floor.signin`): another admin's activation
  code, then a new key made by the view that shows it (in base32 and as an otpauth:// URI),
  confirmed by a first code of that device, throttled like a sign-in's codes; then this session
  is verified by the new device and ten recovery codes are shown once. A confirmed device is
  never replaced here: resetting it takes two admins (`jackpot.staff.accounts`); nor is one enrolled
  when the journal says the person has one the rows have lost (`second_factor.MISSING`).
- New recovery codes (the old ones stop working), shown once.
- A new API token (`jackpot.staff.accounts.staff_token_issue`, the previous ones revoked), shown
  once.
New recovery codes and a token come only from a session that signed in with its second factor
(`is_verified()`) where the second factor is required, or once the person has a device: a
password alone, or a stolen session of the demo, cannot mint a credential that outlives it.
Each is audited on the `admin` chain and in the security log by the service it calls.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django_otp import login as otp_login

from core.pages import page_language
from floor.layout import staff_only, staff_page
from floor.signin import (
    ACTIVATE,
    CODE_AGAIN,
    NEW_KEY,
    enrollment_activate,
    enrollment_confirm,
    enrollment_setup,
    recovery_codes_page,
)
from floor.signin import TEXT as SIGN_IN_TEXT
from jackpot.approvals import presence
from jackpot.staff import second_factor
from jackpot.staff.accounts import staff_token_issue

TEXT: dict[str, dict[str, str]] = {
    "fr": {
        "title": "Mon compte",
        "second_factor": "Deuxième facteur",
        "enrolled": "Activé : application d'authentification (TOTP). Codes de secours "
        "restants : {left}.",
        "not_enrolled": "Pas encore activé.",
        "session_unverified": "Cette session ne s'est pas connectée avec le deuxième facteur.",
        "new_codes": "Nouveaux codes de secours (les anciens ne valent plus)",
        "enroll_submit": "Activer",
        "token": "Jeton d'API",
        "token_intro": "Pour les scripts : un jeton à votre nom, affiché une seule fois. En "
        "émettre un nouveau révoque le précédent.",
        "token_submit": "Émettre mon jeton",
        "token_shown": "Votre nouveau jeton : copiez-le maintenant, il ne sera plus affiché.",
        "needs_second_factor": "Réservé à une session connectée avec le deuxième facteur : "
        "déconnectez-vous et reconnectez-vous avec votre code.",
        "already_enrolled": "Un appareil est déjà activé : seuls deux administrateurs peuvent "
        "le réinitialiser.",
        "missing": "Le journal indique que vous avez activé un deuxième facteur, mais il "
        "n'existe plus dans la base de données : appelez deux administrateurs pour qu'ils le "
        "réinitialisent.",
        "back": "Retour aux gains",
    },
    "en": {
        "title": "My account",
        "second_factor": "Second factor",
        "enrolled": "On: authenticator app (TOTP). Recovery codes left: {left}.",
        "not_enrolled": "Not set up yet.",
        "session_unverified": "This session did not sign in with the second factor.",
        "new_codes": "New recovery codes (the old ones stop working)",
        "enroll_submit": "Turn on",
        "token": "API token",
        "token_intro": "For scripts: a token in your name, shown once. Issuing a new one revokes "
        "the previous one.",
        "token_submit": "Issue my token",
        "token_shown": "Your new token: copy it now, it is not shown again.",
        "needs_second_factor": "Only from a session signed in with the second factor: sign out "
        "and sign in again with your code.",
        "already_enrolled": "A device is already set up: only two admins can reset it.",
        "missing": "The journal says you set up a second factor, but it is no longer in the "
        "database: call two administrators to reset it.",
        "back": "Back to the awards",
    },
}


def may_mint(request: HttpRequest) -> bool:
    """Whether this session may make a lasting credential (recovery codes, an API token): it
    signed in with its second factor, unless the second factor is not required and the person
    has none to give."""
    user = request.user
    if getattr(user, "is_verified", lambda: False)():
        return True
    assert isinstance(user, User)
    return not presence.required() and not second_factor.has_code_device(user)


def _page(
    request: HttpRequest,
    lang: str,
    *,
    token: str = "",
    error: str = "",
    status: int = 200,
    phase: str = NEW_KEY,
) -> HttpResponse:
    user = request.user
    assert isinstance(user, User)
    enrolled = second_factor.enrolled(user)
    missing = not enrolled and second_factor.journal_enrolled(user)
    context: dict[str, Any] = {
        "enrolled": enrolled,
        "left": second_factor.recovery_codes_left(user),
        "verified": getattr(user, "is_verified", lambda: False)(),
        "may_mint": may_mint(request),
        "token": token,
        "error": error,
        "queue_url": reverse("floor-awards"),
    }
    if missing:
        context["missing"] = True
    elif not enrolled:
        setup = enrollment_setup(request, user) if phase == NEW_KEY else None
        context["phase"] = ACTIVATE if phase == NEW_KEY and setup is None else phase
        context["setup"] = setup
    text = {**SIGN_IN_TEXT[lang], **TEXT[lang]}
    text["enrolled"] = text["enrolled"].format(left=context["left"])
    return staff_page(
        request,
        "floor/account.html",
        context,
        lang=lang,
        text=text,
        extra_style="account.css",
        status=status,
    )


def _throttled(request: HttpRequest, lang: str, wait: int, phase: str) -> HttpResponse:
    error = SIGN_IN_TEXT[lang]["throttled"].format(wait=wait)
    refused = _page(request, lang, error=error, status=429, phase=phase)
    refused["Retry-After"] = str(wait)
    return refused


@require_http_methods(["GET", "POST"])
@staff_only
def account_page(request: HttpRequest) -> HttpResponse:
    lang = page_language(request)
    if request.method != "POST":
        return _page(request, lang)
    user = request.user
    assert isinstance(user, User)
    action = request.POST.get("action")
    if action in ("activate", "enroll"):
        if second_factor.enrolled(user):
            return _page(request, lang, error=TEXT[lang]["already_enrolled"], status=409)
        if second_factor.journal_enrolled(user):
            second_factor.refuse_missing(user, door="account")
            return _page(request, lang, error=TEXT[lang]["missing"], status=403)
    if action == "activate":
        accepted, wait = enrollment_activate(request, user, door="account")
        if wait:
            return _throttled(request, lang, wait, ACTIVATE)
        if not accepted:
            error = SIGN_IN_TEXT[lang]["wrong_activation"]
            return _page(request, lang, error=error, status=400, phase=ACTIVATE)
        return _page(request, lang)  # the new key, shown in this response only
    if action == "enroll":
        try:
            device, wait = enrollment_confirm(request, user, door="account")
        except second_factor.ActivationNeeded:
            error = SIGN_IN_TEXT[lang]["wrong_activation"]
            return _page(request, lang, error=error, status=400, phase=ACTIVATE)
        if wait:
            return _throttled(request, lang, wait, CODE_AGAIN)
        if device is None:
            error = SIGN_IN_TEXT[lang]["wrong_code"]
            return _page(request, lang, error=error, status=400, phase=CODE_AGAIN)
        otp_login(request, device)  # this session has just proved the new device
        codes = second_factor.recovery_codes_issue(user)
        return recovery_codes_page(request, codes, continue_url=reverse("floor-account"), lang=lang)
    if action in ("recovery_codes", "token"):
        if not may_mint(request):
            return _page(request, lang, error=TEXT[lang]["needs_second_factor"], status=403)
        if action == "recovery_codes":
            if not second_factor.enrolled(user):  # codes stand in for a device, not for none
                return _page(request, lang, error=TEXT[lang]["not_enrolled"], status=409)
            codes = second_factor.recovery_codes_issue(user)
            return recovery_codes_page(
                request, codes, continue_url=reverse("floor-account"), lang=lang
            )
        token = staff_token_issue(
            user=user, revoke_others=True, actor=f"user:{user.get_username()}"
        )
        return _page(request, lang, token=token)
    return _page(request, lang, status=400)
