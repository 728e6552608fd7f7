"""The floor supervisors' pages: `/floor/login/`, `/floor/logout/` and the award queue,
`/floor/awards/`.

The login is a Django session (CSRF-protected form), throttled and written to the security log
by `floor.login.throttled_login`, with the admin's counters: it lets in staff who hold a
role and tells anyone else why not. An accepted password begins the sign-in's steps
(`floor.login.begin_sign_in`, their page in `floor.signin`: the second factor's
code, a new password, an enrollment); the session is signed in after the last one. Sign-out is
a POST (a link cannot sign anyone out).

The queue is a shell: its script (`static/floor/floor.js`) reads `GET /api/v1/awards` for each
open status (pending, verified, approved) and the last paid ones, every `POLL_MS` with
If-None-Match (a 304 while nothing changes), and moves awards through the API's own steps with
the session and its CSRF token. So the roles, the two-person rule (the approver is not the
verifier; a jackpot's void is confirmed by another supervisor) and the money are the API's: the
page only shows who verified, disables what the API would refuse this user, and shows the API's
refusal when one comes anyway. Paying asks for the method, a reference and a note, and the
winner's identity (required by the API at or above WINNER_IDENTIFICATION_THRESHOLD_CENTS, which
the page is given so it can say so); the identity goes to the API and is never shown back here.
Surveillance's latest review shows on each award (who, when, the camera, the footage range, the
verdict); a surveillance officer records one from the page, and a manager decides a referral there.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import logout as auth_logout
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.middleware.csrf import get_token
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_POST

from core.pages import page_language
from floor.layout import TEXT as LAYOUT_TEXT
from floor.layout import roles_of, staff_only, staff_page
from floor.login import begin_sign_in, throttled_login
from jackpot.approvals import presence
from jackpot.models import AwardKind
from jackpot.selectors import pool_currencies
from jackpot.sign.page import TEXT as SIGN_TEXT
from jackpot.staff import duties

POLL_MS = 2_000  # a supervisor sees a new award within two seconds; a 304 costs two reads
PAID_SHOWN = 10  # the last paid awards listed, each with its slip

LOGIN_TEXT: dict[str, dict[str, str]] = {
    "fr": {
        "title": "Connexion du personnel",
        "username": "Identifiant",
        "password": "Mot de passe",
        "submit": "Se connecter",
        "invalid": "Identifiant ou mot de passe incorrect.",
        "inactive": "Ce compte est désactivé.",
        "no_role": "Ce compte n'a aucun rôle du service (superviseur, responsable, auditeur, "
        "administrateur ou surveillance) : l'accès lui est refusé.",
        "throttled": "Trop de tentatives échouées : réessayez dans {wait} secondes.",
    },
    "en": {
        "title": "Staff sign-in",
        "username": "User name",
        "password": "Password",
        "submit": "Sign in",
        "invalid": "Wrong user name or password.",
        "inactive": "This account is disabled.",
        "no_role": "This account holds none of the service's roles (supervisor, manager, "
        "auditor, admin or surveillance): it may not come in.",
        "throttled": "Too many failed attempts: try again in {wait} seconds.",
    },
}

_QUEUE_WORDS: dict[str, dict[str, str]] = {
    "fr": {
        "title": "Gains à traiter",
        "jackpot_waiting": "Jackpot en attente",
        "queue": "En attente, les plus récents d'abord",
        "empty": "Aucun gain en attente.",
        "paid": "Derniers gains payés",
        "no_paid": "Aucun gain payé pour l'instant.",
        "read_only": "Lecture seule : seuls les superviseurs traitent les gains.",
        "table": "Table",
        "seat": "Siège",
        "round": "Partie",
        "cards": "Cartes",
        "hand": "Main",
        "board": "Tableau",
        "amount": "Montant",
        "age": "Depuis",
        "status": "État",
        "actions": "Actions",
        "verified_by": "vérifié par {user}",
        "approved_by": "approuvé par {user}",
        "paid_by": "payé par {user}",
        "void_requested_by": "annulation demandée par {user} : {reason}",
        "status_pending": "à vérifier",
        "status_verified": "vérifié",
        "status_approved": "approuvé",
        "status_paid": "payé",
        "paid_at": "Payé à",
        "verify": "Vérifier",
        "approve": "Approuver",
        "pay": "Payer",
        "void": "Annuler",
        "void_confirm": "Confirmer l'annulation",
        "void_cancel": "Refuser l'annulation",
        "slip": "Bordereau",
        "you_verified": "Vous avez vérifié ce gain : un autre superviseur doit l'approuver.",
        "you_requested": "Vous avez demandé cette annulation : un autre superviseur la confirme.",
        "ask_note": "Note de vérification (ce que vous avez contrôlé) :",
        "ask_reason": "Motif de l'annulation :",
        "ask_cancel": "Motif du refus de l'annulation :",
        "ask_approve": "Note d'approbation (facultative) :",
        "ask_code": "Code actuel de votre application d'authentification (ou un code de "
        "secours) : cette étape est celle de la seconde personne",
        "pay_title": "Paiement du gain n°{id} · {amount}",
        "method": "Mode de paiement",
        "method_cash": "Espèces",
        "method_cheque": "Chèque",
        "method_bank_transfer": "Virement",
        "reference": "Référence (n° de chèque ou de virement)",
        "pay_note": "Note (facultative)",
        "winner": "Identité du gagnant",
        "winner_required": "Obligatoire : gain d'au moins {amount} (lutte contre le blanchiment).",
        "winner_optional": "Facultative sous {amount}.",
        "winner_name": "Nom et prénom",
        "date_of_birth": "Date de naissance",
        "document_type": "Pièce d'identité",
        "document_identity_card": "Carte d'identité",
        "document_passport": "Passeport",
        "document_residence_permit": "Titre de séjour",
        "document_driving_licence": "Permis de conduire",
        "document_number": "Numéro de la pièce",
        "nationality": "Nationalité (code ISO à 2 lettres, ex. FR)",
        "identified": "gagnant identifié",
        "ok": "Valider",
        "cancel": "Retour",
        "done_verify": "Gain n°{id} vérifié.",
        "done_approve": "Gain n°{id} approuvé.",
        "done_pay": "Gain n°{id} payé.",
        "done_void": "Gain n°{id} annulé.",
        "done_void_requested": "Annulation du gain n°{id} demandée : un autre superviseur doit "
        "la confirmer.",
        "done_void_confirm": "Annulation du gain n°{id} confirmée.",
        "done_void_cancel": "Annulation du gain n°{id} refusée.",
        "refused": "Refusé par le service : {message}",
        "four_eyes": "Refusé : la même personne ne peut pas faire les deux contrôles ({message}).",
        "wrong_status": "Ce gain a changé entre-temps ({message}) : la liste est à jour.",
        "not_allowed": "Votre rôle ne permet pas cette action.",
        "signed_out": "Votre session a expiré : reconnectez-vous.",
        "offline": "Service injoignable : nouvel essai…",
        "updated": "Mis à jour à {time}",
        "seconds": "{n} s",
        "minutes": "{n} min",
        "hours": "{n} h {m} min",
        "review": "Revue vidéo",
        "review_title": "Revue vidéo du gain n°{id}",
        "camera": "Caméra",
        "footage_from": "Images du",
        "footage_to": "au",
        "verdict": "Verdict",
        "verdict_confirmed": "confirmé",
        "verdict_referred": "signalé à un responsable",
        "review_reason": "Motif du signalement (obligatoire s'il est signalé)",
        "review_note": "Note (facultative)",
        "reviewed": "revue vidéo de {user} le {at} : gain {verdict}, caméra {camera}, images de "
        "{from} à {to}",
        "review_reason_shown": "motif : {reason}",
        "review_needed": "En attente de la revue vidéo de la surveillance.",
        "waits_follows": "Payable une fois approuvé le jackpot n°{id} qu'il suit.",
        "referral_open": "Signalé par la surveillance : un responsable doit décider.",
        "referral_decided_clear": "signalement levé par {user} : {reason}",
        "referral_decided_void": "signalement conclu par l'annulation, par {user} : {reason}",
        "referral_clear": "Lever le signalement",
        "referral_void": "Annuler le gain",
        "ask_referral": "Motif de la décision :",
        "you_reviewed": "Vous avez fait la revue vidéo de ce gain : un autre décide.",
        "you_checked": "Vous avez vérifié ou approuvé ce gain : un autre en fait la revue vidéo.",
        "done_review": "Revue vidéo du gain n°{id} enregistrée.",
        "done_referral": "Décision sur le signalement du gain n°{id} enregistrée.",
        "read_only_surveillance": "Surveillance : vous enregistrez les revues vidéo des gains "
        "en attente.",
    },
    "en": {
        "title": "Awards to handle",
        "jackpot_waiting": "Jackpot waiting",
        "queue": "Waiting, newest first",
        "empty": "No award is waiting.",
        "paid": "Last paid awards",
        "no_paid": "No award paid yet.",
        "read_only": "Read only: supervisors handle the awards.",
        "table": "Table",
        "seat": "Seat",
        "round": "Round",
        "cards": "Cards",
        "hand": "Hand",
        "board": "Board",
        "amount": "Amount",
        "age": "Waiting",
        "status": "Status",
        "actions": "Actions",
        "verified_by": "verified by {user}",
        "approved_by": "approved by {user}",
        "paid_by": "paid by {user}",
        "void_requested_by": "void requested by {user}: {reason}",
        "status_pending": "to verify",
        "status_verified": "verified",
        "status_approved": "approved",
        "status_paid": "paid",
        "paid_at": "Paid at",
        "verify": "Verify",
        "approve": "Approve",
        "pay": "Pay",
        "void": "Void",
        "void_confirm": "Confirm the void",
        "void_cancel": "Refuse the void",
        "slip": "Slip",
        "you_verified": "You verified this award: another supervisor must approve it.",
        "you_requested": "You requested this void: another supervisor confirms it.",
        "ask_note": "Verification note (what you checked):",
        "ask_reason": "Reason for the void:",
        "ask_cancel": "Reason for refusing the void:",
        "ask_approve": "Approval note (optional):",
        "ask_code": "Your authenticator's current code (or a recovery code): this step is "
        "the second person's",
        "pay_title": "Payment of award #{id} · {amount}",
        "method": "Payment method",
        "method_cash": "Cash",
        "method_cheque": "Cheque",
        "method_bank_transfer": "Bank transfer",
        "reference": "Reference (cheque or transfer number)",
        "pay_note": "Note (optional)",
        "winner": "Winner's identity",
        "winner_required": "Required: an award of {amount} or more (anti-money laundering).",
        "winner_optional": "Optional below {amount}.",
        "winner_name": "Full name",
        "date_of_birth": "Date of birth",
        "document_type": "Identity document",
        "document_identity_card": "Identity card",
        "document_passport": "Passport",
        "document_residence_permit": "Residence permit",
        "document_driving_licence": "Driving licence",
        "document_number": "Document number",
        "nationality": "Nationality (ISO 2-letter code, e.g. FR)",
        "identified": "winner identified",
        "ok": "Confirm",
        "cancel": "Back",
        "done_verify": "Award #{id} verified.",
        "done_approve": "Award #{id} approved.",
        "done_pay": "Award #{id} paid.",
        "done_void": "Award #{id} void.",
        "done_void_requested": "Void of award #{id} requested: another supervisor must confirm it.",
        "done_void_confirm": "Void of award #{id} confirmed.",
        "done_void_cancel": "Void of award #{id} refused.",
        "refused": "Refused by the service: {message}",
        "four_eyes": "Refused: one person cannot take both steps ({message}).",
        "wrong_status": "This award changed meanwhile ({message}): the list is up to date.",
        "not_allowed": "Your role does not allow this.",
        "signed_out": "Your session has expired: sign in again.",
        "offline": "Service unreachable: trying again…",
        "updated": "Updated at {time}",
        "seconds": "{n} s",
        "minutes": "{n} min",
        "hours": "{n} h {m} min",
        "review": "Video review",
        "review_title": "Video review of award #{id}",
        "camera": "Camera",
        "footage_from": "Footage from",
        "footage_to": "to",
        "verdict": "Verdict",
        "verdict_confirmed": "confirmed",
        "verdict_referred": "referred to a manager",
        "review_reason": "Why it is referred (required when referred)",
        "review_note": "Note (optional)",
        "reviewed": "video review by {user} on {at}: {verdict}, camera {camera}, footage {from} to "
        "{to}",
        "review_reason_shown": "reason: {reason}",
        "review_needed": "Waiting for surveillance's video review.",
        "waits_follows": "Payable once the jackpot it follows, award #{id}, is approved.",
        "referral_open": "Referred by surveillance: a manager must decide.",
        "referral_decided_clear": "referral cleared by {user}: {reason}",
        "referral_decided_void": "referral ended in a void, by {user}: {reason}",
        "referral_clear": "Clear the referral",
        "referral_void": "Void the award",
        "ask_referral": "Reason for the decision:",
        "you_reviewed": "You reviewed this award's video: someone else decides.",
        "you_checked": "You verified or approved this award: someone else reviews its video.",
        "done_review": "Video review of award #{id} recorded.",
        "done_referral": "Decision on the referral of award #{id} recorded.",
        "read_only_surveillance": "Surveillance: you record the video reviews of waiting awards.",
    },
}

# The queue's words, and each kind of award named as the sign names it.
QUEUE_TEXT = {
    lang: {**words, **{kind.value: SIGN_TEXT[lang][kind.value] for kind in AwardKind}}
    for lang, words in _QUEUE_WORDS.items()
}


class StaffLoginForm(AuthenticationForm):
    """Django's login form, in the page's language, which also refuses a user with no role."""

    def __init__(self, request: HttpRequest, *args: object, **kwargs: object) -> None:
        super().__init__(request, *args, **kwargs)
        text = LOGIN_TEXT[page_language(request)]
        self.error_messages = {
            "invalid_login": text["invalid"],
            "inactive": text["inactive"],
            "no_role": text["no_role"],
        }

    def confirm_login_allowed(self, user: User) -> None:
        super().confirm_login_allowed(user)
        if not roles_of(user):
            raise ValidationError(self.error_messages["no_role"], code="no_role")


def _next_url(request: HttpRequest) -> str:
    # Only a path of this site: a login link must not send anyone elsewhere once signed in.
    asked = str(request.POST.get("next") or request.GET.get("next") or "")
    safe = url_has_allowed_host_and_scheme(
        asked, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return asked if asked and safe else reverse("floor-awards")


def _login_form(request: HttpRequest) -> HttpResponse:
    lang = page_language(request)
    next_url = _next_url(request)
    if request.method == "POST":
        form = StaffLoginForm(request, data=request.POST)
        if form.is_valid():
            return begin_sign_in(request, form.get_user(), door="floor", next_url=next_url)
    elif request.user.is_authenticated and roles_of(request.user):
        return HttpResponseRedirect(next_url)
    else:
        form = StaffLoginForm(request)
    context = {"form": form, "next": next_url}
    return staff_page(request, "floor/login.html", context, lang=lang, text=LOGIN_TEXT[lang])


def _throttled(request: HttpRequest, wait: int) -> HttpResponse:
    lang = page_language(request)
    refusal = LOGIN_TEXT[lang]["throttled"].format(wait=wait)
    response = staff_page(
        request,
        "floor/refused.html",
        {"refusal_title": LOGIN_TEXT[lang]["title"], "refusal": refusal},
        lang=lang,
        text={},
        status=429,
    )
    response["Retry-After"] = str(wait)
    return response


@sensitive_post_parameters("password")
@csrf_protect
@never_cache
def login_page(request: HttpRequest) -> HttpResponse:
    return throttled_login(
        request, _login_form, door="floor", refused=lambda wait: _throttled(request, wait)
    )


@require_POST
@csrf_protect
def logout_page(request: HttpRequest) -> HttpResponse:
    auth_logout(request)
    return HttpResponseRedirect(reverse("floor-login"))


@staff_only
def award_queue(request: HttpRequest) -> HttpResponse:
    lang = page_language(request)
    roles = roles_of(request.user)
    configuring = isinstance(request.user, User) and duties.configures(request.user)
    slip = reverse("floor-slip", kwargs={"award": 0})
    config = {
        "awardsUrl": reverse("award-list"),
        "slipUrl": slip.replace("/0/", "/{id}/"),
        "loginUrl": reverse("floor-login"),
        "pollMs": POLL_MS,
        "identifyCents": settings.WINNER_IDENTIFICATION_THRESHOLD_CENTS,
        "paidShown": PAID_SHOWN,
        "user": request.user.get_username(),
        # Money is a supervisor's or a manager's, never an account that configures: the API
        # refuses it (403 `separation_of_duties`), so the page offers it to none.
        "canAct": bool(set(roles) & set(duties.MONEY_ROLES)) and not configuring,
        "canReview": "surveillance" in roles,
        "canDecide": duties.MANAGER in roles and not configuring,
        # A two-person step's second person sends a fresh code with it (the API's rule).
        "codeRequired": presence.required(),
        "csrfToken": get_token(request),
        "currencies": pool_currencies(),
        "text": {"locale": LAYOUT_TEXT[lang]["locale"], **QUEUE_TEXT[lang]},
    }
    return staff_page(
        request,
        "floor/queue.html",
        {},
        lang=lang,
        text=QUEUE_TEXT[lang],
        script="floor.js",
        config=config,
    )
