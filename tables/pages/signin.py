"""The sign-in's steps after the password, one page for both doors (the floor's and the
admin's): `/floor/login/next/` shows the step the pending sign-in owes now and takes its answer.

The steps and their order are `config.admin_login`'s (`next_step`): the code of the second
factor (a TOTP code or a recovery code, throttled with the password's counters), a new password
when an admin's reset asks for one (Django's validators, never the temporary one again), the
enrollment of a TOTP device where the second factor is required (its key in base32 and its
otpauth:// URI, confirmed by a first code; ten recovery codes are then issued and shown once).
A posted answer names its step: an answer to a step the sign-in no longer owes (a second tab, a
replay) changes nothing and shows the step it owes. The session is signed in only by
`config.admin_login.sign_in_next`, after the last step.
"""

from __future__ import annotations

from base64 import b32encode

from django.contrib.auth.forms import SetPasswordForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters
from django_otp.plugins.otp_totp.models import TOTPDevice

from config.admin_login import (
    CODE,
    ENROLL,
    NEW_PASSWORD,
    PendingSignIn,
    code_given,
    next_step,
    pending_sign_in,
    sign_in_next,
    throttled_code,
)
from core.pages import page_language
from jackpot import second_factor
from tables.pages.layout import staff_page

TEXT: dict[str, dict[str, str]] = {
    "fr": {
        "who": "Connexion de {user}",
        "code_title": "Deuxième facteur",
        "code_label": "Code de votre application d'authentification, ou un code de secours",
        "password_title": "Nouveau mot de passe",
        "password_intro": "Un administrateur a réinitialisé votre mot de passe : choisissez-en "
        "un nouveau avant de continuer.",
        "new_password1": "Nouveau mot de passe",
        "new_password2": "Confirmez-le",
        "enroll_title": "Activer le deuxième facteur",
        "enroll_intro": "Ajoutez ce compte à votre application d'authentification (TOTP : "
        "FreeOTP, Aegis, Google Authenticator…) avec la clé ou le lien ci-dessous, puis saisissez "
        "le code qu'elle affiche.",
        "key": "Clé (base32)",
        "uri": "Lien de configuration",
        "enroll_code": "Code affiché par l'application",
        "submit": "Valider",
        "wrong_code": "Code incorrect ou déjà utilisé.",
        "throttled": "Trop de tentatives échouées : réessayez dans {wait} secondes.",
        "codes_title": "Vos codes de secours",
        "codes_intro": "Chaque code remplace une fois celui de l'application (un téléphone "
        "perdu). Notez-les maintenant et rangez-les en lieu sûr : ils ne seront plus affichés.",
        "continue": "Continuer",
    },
    "en": {
        "who": "Signing in: {user}",
        "code_title": "Second factor",
        "code_label": "Code from your authenticator app, or a recovery code",
        "password_title": "New password",
        "password_intro": "An administrator reset your password: choose a new one before going on.",
        "new_password1": "New password",
        "new_password2": "Confirm it",
        "enroll_title": "Set up your second factor",
        "enroll_intro": "Add this account to your authenticator app (TOTP: FreeOTP, Aegis, "
        "Google Authenticator...) with the key or the link below, then type the code it shows.",
        "key": "Key (base32)",
        "uri": "Setup link",
        "enroll_code": "Code the app shows",
        "submit": "Confirm",
        "wrong_code": "Wrong code, or a code already used.",
        "throttled": "Too many failed attempts: try again in {wait} seconds.",
        "codes_title": "Your recovery codes",
        "codes_intro": "Each code stands in once for the app's (a lost phone). Write them down "
        "now and keep them safe: they are not shown again.",
        "continue": "Continue",
    },
}


def totp_setup(device: TOTPDevice) -> dict[str, str]:
    """What an authenticator app needs: the key in base32 (grouped by four to be typed) and the
    otpauth:// URI."""
    key = b32encode(device.bin_key).decode()
    return {
        "key": " ".join(key[i : i + 4] for i in range(0, len(key), 4)),
        "uri": device.config_url,
    }


def recovery_codes_page(
    request: HttpRequest, codes: list[str], *, continue_url: str, lang: str
) -> HttpResponse:
    """The recovery codes just issued, shown this once."""
    text = {**TEXT[lang], "title": TEXT[lang]["codes_title"]}
    return staff_page(
        request,
        "pages/recovery_codes.html",
        {"codes": codes, "continue_url": continue_url},
        lang=lang,
        text=text,
        extra_style="account.css",
    )


def _step_page(
    request: HttpRequest,
    pending: PendingSignIn,
    step: str,
    *,
    lang: str,
    error: str = "",
    form: SetPasswordForm | None = None,
    status: int = 200,
) -> HttpResponse:
    text = {**TEXT[lang], "title": TEXT[lang][f"{step}_title"]}
    context: dict[str, object] = {
        "step": step,
        "error": error,
        "who": TEXT[lang]["who"].format(user=pending.user.get_username()),
        "form": form,
    }
    if step == ENROLL:
        context["setup"] = totp_setup(second_factor.totp_enrollment(pending.user))
    return staff_page(
        request,
        "pages/sign_in_step.html",
        context,
        lang=lang,
        text=text,
        extra_style="account.css",
        status=status,
    )


def _throttled_page(
    request: HttpRequest, pending: PendingSignIn, step: str, wait: int, lang: str
) -> HttpResponse:
    error = TEXT[lang]["throttled"].format(wait=wait)
    response = _step_page(request, pending, step, lang=lang, error=error, status=429)
    response["Retry-After"] = str(wait)
    return response


@sensitive_post_parameters("code", "new_password1", "new_password2")
@csrf_protect
@never_cache
def sign_in_step(request: HttpRequest) -> HttpResponse:
    lang = page_language(request)
    pending = pending_sign_in(request)
    if pending is None:
        return sign_in_next(request)  # the login page
    step = next_step(pending)
    if step is None:
        return sign_in_next(request)
    if request.method != "POST" or request.POST.get("step") != step:
        return _step_page(request, pending, step, lang=lang)
    user = pending.user
    username = user.get_username()
    if step == NEW_PASSWORD:
        form = SetPasswordForm(user, request.POST)
        if not form.is_valid():
            return _step_page(request, pending, step, lang=lang, form=form)
        try:
            second_factor.password_set(user, form.cleaned_data["new_password2"])
        except ValidationError as refusal:
            form.add_error("new_password2", refusal)
            return _step_page(request, pending, step, lang=lang, form=form)
        return sign_in_next(request)
    code = str(request.POST.get("code", ""))[:64]
    if step == CODE:
        device, wait = throttled_code(
            request,
            username=username,
            door=pending.door,
            check=lambda: second_factor.check_code(user, code),
        )
    else:
        device, wait = throttled_code(
            request,
            username=username,
            door=pending.door,
            check=lambda: second_factor.totp_confirm(user, code),
        )
    if wait:
        return _throttled_page(request, pending, step, wait, lang)
    if device is None:
        return _step_page(request, pending, step, lang=lang, error=TEXT[lang]["wrong_code"])
    code_given(request, device)
    response = sign_in_next(request)
    if step == ENROLL:  # the last step: signed in, with the recovery codes shown once
        codes = second_factor.recovery_codes_issue(user)
        return recovery_codes_page(request, codes, continue_url=response["Location"], lang=lang)
    return response
