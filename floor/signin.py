"""The sign-in's steps after the password, one page for both doors (the floor's and the
admin's): `/floor/login/next/` shows the step the pending sign-in owes now and takes its answer.

The steps and their order are `floor.login`'s (`next_step`): the code of the second
factor (a TOTP code or a recovery code, throttled with the password's counters), a new password
when an admin's reset asks for one (Django's validators, never the temporary one again), the
enrollment of a TOTP device where the second factor is required: first the activation code
another admin issued (`jackpot.staff.second_factor.activation_issue`), then a new key (in base32 and
as an otpauth:// URI) made by the very view that shows it, confirmed by a first code of that
device only (its id is kept in the session that was shown it); ten recovery codes are then
issued and shown once. A sign-in the journal refuses (its device is gone) shows why, once.
A posted answer names its step: an answer to a step the sign-in no longer owes (a second tab, a
replay) changes nothing and shows the step it owes. The session is signed in only by
`floor.login.sign_in_next`, after the last step.
"""

from __future__ import annotations

from base64 import b32encode

from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters
from django_otp.models import Device
from django_otp.plugins.otp_totp.models import TOTPDevice

from core.pages import page_language
from floor.layout import staff_page
from floor.login import (
    CODE,
    ENROLL,
    NEW_PASSWORD,
    SIGN_IN_REFUSED,
    PendingSignIn,
    code_given,
    next_step,
    pending_sign_in,
    sign_in_next,
    throttled_code,
)
from jackpot.models import SealedTOTPDevice
from jackpot.staff import second_factor

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
        "activate_intro": "La première activation d'un deuxième facteur demande un code "
        "d'activation, remis par un administrateur qui n'a pas réinitialisé votre mot de passe.",
        "activation_label": "Code d'activation",
        "wrong_activation": "Code d'activation incorrect, expiré ou déjà utilisé : demandez-en un "
        "autre à un administrateur.",
        "key_shown_once": "La clé n'est affichée qu'une fois, à sa création.",
        "new_key": "Recommencer avec une nouvelle clé",
        "refused_title": "Connexion refusée",
        "refused": "Le journal indique que ce compte a activé un deuxième facteur, mais celui-ci "
        "n'existe plus dans la base de données : aucun nouvel appareil ne peut être activé ainsi. "
        "Appelez deux administrateurs pour qu'ils réinitialisent votre deuxième facteur.",
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
        "activate_intro": "Setting up a second factor for the first time takes an activation "
        "code, given to you by an administrator who did not reset your password.",
        "activation_label": "Activation code",
        "wrong_activation": "Wrong, expired or used activation code: ask an administrator for "
        "another one.",
        "key_shown_once": "The key is shown only once, when it is made.",
        "new_key": "Start again with a new key",
        "refused_title": "Sign-in refused",
        "refused": "The journal says this account set up a second factor, but it is no longer "
        "in the database: no new device can be set up this way. Call two administrators to "
        "reset your second factor.",
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


#: The session's enrollment under way (the sign-in's or the account page's): whose, the
#: activation code accepted, the device whose key was shown last.
ENROLLING = "staff_enrolling"
#: An enrollment page's phases: the activation code; a new key and its first code; the first
#: code again (a wrong one, a throttled one) without showing any key.
ACTIVATE, NEW_KEY, CODE_AGAIN = "activate", "new_key", "code_again"


def _enrolling(request: HttpRequest, user: User) -> dict[str, int | None]:
    state = request.session.get(ENROLLING)
    if not isinstance(state, dict) or state.get("user") != user.pk:
        return {"user": user.pk, "activation": None, "device": None}
    return dict(state)


def enrollment_setup(request: HttpRequest, user: User) -> dict[str, str] | None:
    """A new TOTP device's setup for `user`, made now and shown in this response only (the
    session keeps its id for the confirmation), when an activation code stands behind this
    enrollment; None otherwise (the activation code is asked first)."""
    state = _enrolling(request, user)
    if not state["activation"]:
        return None
    try:
        device = second_factor.totp_new_device(user, activation_id=state["activation"])
    except second_factor.ActivationNeeded:
        request.session[ENROLLING] = {**state, "activation": None, "device": None}
        return None
    request.session[ENROLLING] = {**state, "device": device.pk}
    return totp_setup(device)


def enrollment_activate(request: HttpRequest, user: User, *, door: str) -> tuple[bool, int]:
    """The activation code `user` typed, behind the login throttle: (accepted, 0), (False, 0)
    for a wrong one, (False, seconds) when throttled. Accepted, the session keeps its row."""
    typed = str(request.POST.get("activation", ""))[:64]
    row, wait = throttled_code(
        request,
        username=user.get_username(),
        door=door,
        check=lambda: second_factor.activation_check(user, typed),
    )
    if row is not None:
        request.session[ENROLLING] = {"user": user.pk, "activation": row.pk, "device": None}
    return row is not None, wait


def enrollment_confirm(
    request: HttpRequest, user: User, *, door: str
) -> tuple[SealedTOTPDevice | None, int]:
    """The first code of the device this session was shown, behind the login throttle, as
    `throttled_code` answers; ActivationNeeded when the activation code is no longer valid."""
    code = str(request.POST.get("code", ""))[:64]
    state = _enrolling(request, user)
    try:
        device, wait = throttled_code(
            request,
            username=user.get_username(),
            door=door,
            check=lambda: second_factor.totp_confirm(
                user, code, device_id=state["device"], activation_id=state["activation"]
            ),
        )
    except second_factor.ActivationNeeded:
        request.session.pop(ENROLLING, None)
        raise
    if device is not None:
        request.session.pop(ENROLLING, None)
    return device, wait


def recovery_codes_page(
    request: HttpRequest, codes: list[str], *, continue_url: str, lang: str
) -> HttpResponse:
    """The recovery codes just issued, shown this once."""
    text = {**TEXT[lang], "title": TEXT[lang]["codes_title"]}
    return staff_page(
        request,
        "floor/recovery_codes.html",
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
    phase: str = NEW_KEY,
) -> HttpResponse:
    text = {**TEXT[lang], "title": TEXT[lang][f"{step}_title"]}
    context: dict[str, object] = {
        "step": step,
        "error": error,
        "who": TEXT[lang]["who"].format(user=pending.user.get_username()),
        "form": form,
    }
    if step == ENROLL:
        setup = enrollment_setup(request, pending.user) if phase == NEW_KEY else None
        context["phase"] = ACTIVATE if phase == NEW_KEY and setup is None else phase
        context["setup"] = setup
    return staff_page(
        request,
        "floor/sign_in_step.html",
        context,
        lang=lang,
        text=text,
        extra_style="account.css",
        status=status,
    )


def _throttled_page(
    request: HttpRequest,
    pending: PendingSignIn,
    step: str,
    wait: int,
    lang: str,
    phase: str = CODE_AGAIN,
) -> HttpResponse:
    error = TEXT[lang]["throttled"].format(wait=wait)
    response = _step_page(request, pending, step, lang=lang, error=error, status=429, phase=phase)
    response["Retry-After"] = str(wait)
    return response


@sensitive_post_parameters("code", "activation", "new_password1", "new_password2")
@csrf_protect
@never_cache
def sign_in_step(request: HttpRequest) -> HttpResponse:
    lang = page_language(request)
    pending = pending_sign_in(request)
    if pending is None and request.session.pop(SIGN_IN_REFUSED, False):
        text = {**TEXT[lang], "title": TEXT[lang]["refused_title"]}
        context = {"refusal_title": text["title"], "refusal": text["refused"]}
        return staff_page(request, "floor/refused.html", context, lang=lang, text=text, status=403)
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
    if step == ENROLL and "activation" in request.POST:
        accepted, wait = enrollment_activate(request, user, door=pending.door)
        if wait:
            return _throttled_page(request, pending, step, wait, lang, phase=ACTIVATE)
        if not accepted:
            error = TEXT[lang]["wrong_activation"]
            return _step_page(request, pending, step, lang=lang, error=error, phase=ACTIVATE)
        return HttpResponseRedirect(reverse("floor-login-step"))  # whose view makes the key
    code = str(request.POST.get("code", ""))[:64]
    device: Device | None
    if step == CODE:
        device, wait = throttled_code(
            request,
            username=username,
            door=pending.door,
            check=lambda: second_factor.check_code(user, code),
        )
    else:
        try:
            device, wait = enrollment_confirm(request, user, door=pending.door)
        except second_factor.ActivationNeeded:
            error = TEXT[lang]["wrong_activation"]
            return _step_page(request, pending, step, lang=lang, error=error, phase=ACTIVATE)
        except second_factor.SecondFactorMissing:
            return sign_in_next(request)  # refused, as the next step says
    if wait:
        return _throttled_page(request, pending, step, wait, lang)
    if device is None:
        error = TEXT[lang]["wrong_code"]
        return _step_page(request, pending, step, lang=lang, error=error, phase=CODE_AGAIN)
    code_given(request, device)
    response = sign_in_next(request)
    if step == ENROLL:  # the last step: signed in, with the recovery codes shown once
        codes = second_factor.recovery_codes_issue(user)
        return recovery_codes_page(request, codes, continue_url=response["Location"], lang=lang)
    return response
