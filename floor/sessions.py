"""The club's sessions for supervisors and managers: `/floor/sessions/` (the open session with
its Close button, or an Open button; the recent closed ones) and `/floor/sessions/<id>/` (a
session's snapshot per table and pool, and each table's drop box: count, blind confirmation,
then count, expected and difference).

Invariants:
- every POST (CSRF-protected) calls `tables.club`'s services, never a second implementation;
  their refusals (`core.errors.ApiError`) come back as readable messages, and nothing is written;
- the second person's confirmation is blind: the first count's amount is not on the page until it
  is confirmed (`tables.selectors.sessions` withholds it), and it carries a fresh second-factor
  code (`jackpot.staff.second_factor.present`, before the step, as the API does);
- only supervisors and managers see the page (others get the floor's refusal page); an account
  that configures sees it without its forms (the services would refuse it anyway).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods

from core.errors import ApiError
from core.pages import page_language
from floor.amounts import amount_in_figures, cents_from_text
from floor.layout import TEXT as LAYOUT_TEXT
from floor.layout import roles_of, staff_only, staff_page
from jackpot.approvals import presence
from jackpot.approvals.presence import PRESENCE_FIELD
from jackpot.models import Pool
from jackpot.selectors import pool_currencies
from jackpot.staff import duties, second_factor
from tables.bodies.sessions import DropCountBody, SessionBody, SessionQuery, SessionSummary
from tables.club import drops, sessions
from tables.models import ClubSession, SessionStatus, Table
from tables.selectors import sessions as reads

RECENT = 20  # the closed sessions listed
AMOUNT_FIELD = "counted"  # the form's amount, in euros and cents as typed
DEFAULT_CURRENCY = "EUR"

TEXT: dict[str, dict[str, str]] = {
    "fr": {
        "title": "Séances",
        "open_session": "Séance en cours",
        "none_open": "Aucune séance n'est ouverte.",
        "open": "Ouvrir une séance",
        "close": "Clore la séance",
        "close_confirm": "Clore la séance n° {number} : le relevé par table est pris dans le "
        "journal à cet instant.",
        "recent": "Séances closes récentes",
        "no_recent": "Aucune séance close.",
        "number": "N°",
        "session_n": "Séance n° {number}",
        "club_day": "Journée",
        "opened": "Ouverte par {by} le {at}",
        "closed": "Close par {by} le {at}",
        "closed_by_day": "Close à la fin de la journée le {at}",
        "opened_closed": "Ouverture et clôture",
        "status_open": "ouverte",
        "status_closed": "close",
        "status": "État",
        "see": "Voir",
        "back": "Toutes les séances",
        "read_only": "Lecture seule : un compte qui configure ne manie pas l'argent.",
        "still_open": "La séance est ouverte : son relevé et le comptage des urnes viennent "
        "à sa clôture.",
        "tables": "Mises progressives retenues par table (registre modèle 8)",
        "pools": "Montant affiché à la clôture (registre modèle 8 ter)",
        "table": "Table",
        "pool": "Jackpot",
        "rounds": "Parties",
        "stakes": "Mises",
        "stakes_cents": "Montant des mises",
        "voided": "Annulées",
        "voided_cents": "Remboursé",
        "withheld": "Retenu",
        "displayed": "Affiché",
        "corrections": "Corrections",
        "drops": "Comptage des urnes",
        "no_tables": "Aucune mise progressive pendant cette séance : aucune urne à compter.",
        "expected": "Attendu",
        "count": "Comptage",
        "counted_amount": "Montant compté",
        "difference": "Écart",
        "exact": "Juste",
        "state": "Où en est-on",
        "to_count": "À compter",
        "count_submit": "Enregistrer le comptage",
        "recount_submit": "Recompter",
        "counted_by": "Compté par {by} le {at} : une autre personne confirme, à l'aveugle.",
        "you_counted": "Vous avez compté cette urne le {at} : une autre personne la recompte "
        "et confirme. Vous pouvez encore recompter.",
        "confirm_intro": "Compté par {by} le {at}. Recomptez l'urne sans voir le premier "
        "montant : s'il est le même, le comptage est confirmé.",
        "confirm_submit": "Confirmer le comptage",
        "code": "Code de votre application d'authentification (ou un code de secours)",
        "confirmed_by": "Compté par {counted}, confirmé par {confirmed} le {at}.",
        "flag": "de {amount} : événement significatif SE19, enregistré, jamais corrigé.",
        "amount_help": "En euros, par exemple 1 250,00",
        "done_opened": "Séance n° {number} ouverte.",
        "done_closed": "Séance n° {number} close : son relevé est pris dans le journal.",
        "done_counted": "Comptage de la table {table} enregistré : une autre personne confirme.",
        "done_confirmed": "Comptage de la table {table} confirmé.",
        "not_money": "Cette page est réservée aux superviseurs et aux responsables.",
        "refused": "Refusé : {message}",
    },
    "en": {
        "title": "Sessions",
        "open_session": "Open session",
        "none_open": "No session is open.",
        "open": "Open a session",
        "close": "Close the session",
        "close_confirm": "Close session {number}: each table's figures are taken from the "
        "journal at this moment.",
        "recent": "Recent closed sessions",
        "no_recent": "No closed session.",
        "number": "No.",
        "session_n": "Session {number}",
        "club_day": "Club day",
        "opened": "Opened by {by} on {at}",
        "closed": "Closed by {by} on {at}",
        "closed_by_day": "Closed at the club day's end on {at}",
        "opened_closed": "Opened and closed",
        "status_open": "open",
        "status_closed": "closed",
        "status": "Status",
        "see": "View",
        "back": "All sessions",
        "read_only": "Read only: an account that configures does not handle money.",
        "still_open": "The session is open: its figures and the drop counts come with its close.",
        "tables": "Progressive stakes withheld per table (register model 8)",
        "pools": "Amount displayed at the close (register model 8 ter)",
        "table": "Table",
        "pool": "Jackpot",
        "rounds": "Rounds",
        "stakes": "Stakes",
        "stakes_cents": "Stakes amount",
        "voided": "Voided",
        "voided_cents": "Refunded",
        "withheld": "Withheld",
        "displayed": "Displayed",
        "corrections": "Corrections",
        "drops": "Drop box counts",
        "no_tables": "No progressive stake in this session: no drop box to count.",
        "expected": "Expected",
        "count": "Count",
        "counted_amount": "Amount counted",
        "difference": "Difference",
        "exact": "Exact",
        "state": "Where it stands",
        "to_count": "To count",
        "count_submit": "Record the count",
        "recount_submit": "Count again",
        "counted_by": "Counted by {by} on {at}: another person confirms it, blind.",
        "you_counted": "You counted this box on {at}: another person counts it again and "
        "confirms. You may still count it again.",
        "confirm_intro": "Counted by {by} on {at}. Count the box again without seeing the "
        "first amount: if it is the same, the count is confirmed.",
        "confirm_submit": "Confirm the count",
        "code": "Your authenticator's current code (or a recovery code)",
        "confirmed_by": "Counted by {counted}, confirmed by {confirmed} on {at}.",
        "flag": "of {amount}: significant event SE19, recorded, never corrected.",
        "amount_help": "In euros, e.g. 1,250.00",
        "done_opened": "Session {number} opened.",
        "done_closed": "Session {number} closed: its figures are taken from the journal.",
        "done_counted": "Count of table {table} recorded: another person confirms it.",
        "done_confirmed": "Count of table {table} confirmed.",
        "not_money": "This page is for supervisors and managers.",
        "refused": "Refused: {message}",
    },
}

# The services' refusals as a supervisor reads them; any other code shows the service's message.
REFUSALS: dict[str, dict[str, str]] = {
    "fr": {
        "four_eyes": "la personne qui a compté l'urne ne peut pas confirmer son propre "
        "comptage : une autre personne la recompte.",
        "count_disagrees": "votre comptage diffère du premier : rien n'est confirmé. La "
        "première personne recompte l'urne.",
        "drop_counted_by_another": "une autre personne a déjà compté cette urne : vous la "
        "confirmez, ou elle la recompte.",
        "drop_confirmed": "ce comptage est déjà confirmé : un écart est enregistré, jamais "
        "corrigé.",
        "drop_not_counted": "cette urne n'a pas encore été comptée.",
        "count_unexplained": "le comptage enregistré ne correspond pas au journal : rien n'est "
        "fait (la vérification du journal le signale).",
        "session_open": "une séance est déjà ouverte : elle est close avant d'en ouvrir une autre.",
        "session_closed": "cette séance est déjà close.",
        "session_not_closed": "la séance est ouverte : ses urnes sont comptées à sa clôture.",
        "second_factor_code_required": "cette étape est celle de la seconde personne : donnez "
        "un code de votre application d'authentification.",
        "second_factor_code_wrong": "ce code n'est pas celui de votre application en ce "
        "moment (ou il a déjà servi).",
        "separation_of_duties": "un compte qui configure ne manie pas l'argent.",
        "permission_denied": "seuls un superviseur ou un responsable le peuvent.",
        "table_not_in_session": "cette table n'a pris aucune mise progressive pendant la séance.",
        "unread_amount": "montant illisible : en euros, par exemple 1 250,00.",
    },
    "en": {
        "four_eyes": "the person who counted the box cannot confirm their own count: another "
        "person counts it again.",
        "count_disagrees": "your count differs from the first one: nothing is confirmed. The "
        "first person counts the box again.",
        "drop_counted_by_another": "another person counted this box already: you confirm it, "
        "or they count it again.",
        "drop_confirmed": "this count is confirmed already: a difference is recorded, never "
        "corrected.",
        "drop_not_counted": "this box has not been counted yet.",
        "count_unexplained": "the recorded count is not what the journal says: nothing is done "
        "(the journal's verification reports it).",
        "session_open": "a session is open already: it is closed before another opens.",
        "session_closed": "this session is closed already.",
        "session_not_closed": "the session is open: its boxes are counted once it is closed.",
        "second_factor_code_required": "this step is the second person's: give a code of your "
        "authenticator.",
        "second_factor_code_wrong": "this code is not your authenticator's now (or it was used "
        "already).",
        "separation_of_duties": "an account that configures does not handle money.",
        "permission_denied": "only a supervisor or a manager may do this.",
        "table_not_in_session": "this table took no progressive stake in the session.",
        "unread_amount": "an amount that cannot be read: in euros, e.g. 1,250.00.",
    },
}


def _refusal(lang: str, refused: ApiError) -> str:
    unread = refused.code == "invalid_request" and refused.param == AMOUNT_FIELD
    message = REFUSALS[lang].get("unread_amount" if unread else refused.code, refused.message)
    return TEXT[lang]["refused"].format(message=message)


def _when(moment: datetime | None, lang: str) -> str:
    if moment is None:
        return ""
    local = timezone.localtime(moment)
    return local.strftime("%d/%m/%Y %H:%M" if lang == "fr" else "%d %b %Y, %H:%M")


def _who(actor: str) -> str:
    """`user:ana` as `ana`; `system:club_day` as it is."""
    return actor.removeprefix("user:")


def _money(cents: int | None, currency: str, lang: str) -> str:
    if cents is None:
        return ""
    figure = amount_in_figures(abs(cents), currency, lang)
    return f"\u2212{figure}" if cents < 0 else figure  # a minus sign, not a hyphen


def _acting(user: Any) -> bool:
    return isinstance(user, User) and not duties.configures(user)


def _refused_page(request: HttpRequest, lang: str) -> HttpResponse:
    return staff_page(
        request,
        "floor/refused.html",
        {"refusal_title": LAYOUT_TEXT[lang]["no_role_title"], "refusal": TEXT[lang]["not_money"]},
        lang=lang,
        text={},
        status=403,
    )


def _summary(session: ClubSession | SessionSummary, lang: str) -> dict[str, Any]:
    text = TEXT[lang]
    closed = (
        text["closed_by_day"].format(at=_when(session.closed_at, lang))
        if session.closed_how == "club_day"
        else text["closed"].format(by=_who(session.closed_by), at=_when(session.closed_at, lang))
    )
    return {
        "id": session.id,
        "number": session.number,
        "club_day": session.club_day.strftime("%d/%m/%Y" if lang == "fr" else "%d %b %Y"),
        "status": session.status,
        "status_label": text[f"status_{session.status}"],
        "opened": text["opened"].format(
            by=_who(session.opened_by), at=_when(session.opened_at, lang)
        ),
        "closed": closed if session.closed_at else "",
        "url": reverse("floor-session", kwargs={"session": session.id}),
    }


def _list_context(lang: str) -> dict[str, Any]:
    """The open session (the partial unique index keeps it to one) and the recent closed ones."""
    current = ClubSession.objects.filter(status=SessionStatus.OPEN).first()
    page = reads.session_page(SessionQuery(limit=RECENT + 1))
    closed = [s for s in page.results if s.status == SessionStatus.CLOSED][:RECENT]
    return {
        "current": _summary(current, lang) if current is not None else None,
        "close_confirm": TEXT[lang]["close_confirm"].format(number=current.number)
        if current is not None
        else "",
        "recent": [_summary(s, lang) for s in closed],
    }


def _render(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    lang: str,
    *,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    done = _done_message(request, lang)
    context = {
        **context,
        "error": error,
        "done": done,
        "acting": _acting(request.user),
        "code_required": presence.required(),
        "code_field": PRESENCE_FIELD,
        "list_url": reverse("floor-sessions"),
    }
    return staff_page(
        request,
        template,
        context,
        lang=lang,
        text=TEXT[lang],
        extra_style="sessions.css",
        status=status,
    )


def _done_message(request: HttpRequest, lang: str) -> str:
    """The message of the step that redirected here (`?done=counted&table=3`): words only, from
    this module's table, with numbers alone from the query."""
    done = request.GET.get("done", "")
    key = f"done_{done}"
    if key not in TEXT[lang]:
        return ""
    number, table = request.GET.get("number", ""), request.GET.get("table", "")
    names = Table.objects.filter(pk=int(table)) if table.isdigit() else Table.objects.none()
    name = names.values_list("name", flat=True).first() or ""
    return TEXT[lang][key].format(number=number if number.isdigit() else "", table=name)


def _after(url: str, lang: str, **facts: object) -> HttpResponseRedirect:
    query = "&".join(f"{key}={value}" for key, value in facts.items())
    return HttpResponseRedirect(f"{url}?lang={lang}&{query}", status=303)


def _money_page(view: Any) -> Any:
    """`staff_only`, then the floor's refusal page for anyone but a supervisor or a manager."""

    @staff_only
    def page(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not set(roles_of(request.user)) & set(duties.MONEY_ROLES):
            return _refused_page(request, page_language(request))
        return view(request, *args, **kwargs)

    page.__name__ = view.__name__
    page.__doc__ = view.__doc__
    return page


@require_http_methods(["GET", "POST"])
@csrf_protect
@_money_page
def sessions_page(request: HttpRequest) -> HttpResponse:
    """The open session (Close) or none (Open), and the recent closed ones."""
    lang = page_language(request)
    if request.method == "POST":
        user = request.user
        assert isinstance(user, User)
        try:
            opened = sessions.open_session(user=user)
        except ApiError as refused:
            context = _list_context(lang)
            return _render(
                request,
                "floor/sessions.html",
                context,
                lang,
                error=_refusal(lang, refused),
                status=refused.status_code,
            )
        return _after(request.path, lang, done="opened", number=opened.number)
    return _render(request, "floor/sessions.html", _list_context(lang), lang)


# --- one session -----------------------------------------------------------------------------


def _drop_row(
    drop: DropCountBody, names: dict[int, str], currency: str, user: Any, lang: str
) -> dict[str, Any]:
    text = TEXT[lang]
    at = _when(drop.counted_at, lang)
    state = "to_count"
    if drop.confirmed:
        state = "difference" if drop.difference_cents else "exact"
    elif drop.counted:
        mine = drop.counted_by == f"user:{user.get_username()}"
        state = "counted_by_you" if mine else "to_confirm"
    return {
        "table": drop.table,
        "name": names.get(drop.table, str(drop.table)),
        "state": state,
        "expected": _money(drop.expected_cents, currency, lang),
        "counted": _money(drop.counted_cents, currency, lang),
        "difference": _money(drop.difference_cents, currency, lang),
        "counted_note": text["counted_by"].format(by=_who(drop.counted_by), at=at),
        "mine_note": text["you_counted"].format(at=at),
        "confirm_note": text["confirm_intro"].format(by=_who(drop.counted_by), at=at),
        "confirmed_note": text["confirmed_by"].format(
            counted=_who(drop.counted_by),
            confirmed=_who(drop.confirmed_by),
            at=_when(drop.confirmed_at, lang),
        ),
        "flag": text["flag"].format(amount=_money(drop.difference_cents, currency, lang)),
    }


def _detail_context(detail: SessionBody, user: Any, lang: str) -> dict[str, Any]:
    currencies = pool_currencies()
    table_ids = {line.table for line in detail.tables}
    names = dict(Table.objects.filter(pk__in=table_ids).values_list("pk", "name"))
    pool_names = dict(Pool.objects.values_list("pk", "name"))
    pool_of = {line.table: line.pool for line in detail.tables}

    def currency(pool: int | None) -> str:
        return currencies.get(pool or 0, DEFAULT_CURRENCY)

    tables = [
        {
            "name": names.get(line.table, str(line.table)),
            "pool": pool_names.get(line.pool, str(line.pool)),
            "rounds": line.rounds,
            "stakes": line.stakes,
            "stakes_cents": _money(line.stakes_cents, currency(line.pool), lang),
            "voided": line.voided,
            "voided_cents": _money(line.voided_cents, currency(line.pool), lang),
            "withheld": _money(line.withheld_cents, currency(line.pool), lang),
        }
        for line in detail.tables
    ]
    pools = [
        {
            "pool": pool_names.get(line.pool, str(line.pool)),
            "displayed": _money(line.displayed_cents, currency(line.pool), lang),
            "corrections": line.corrections,
        }
        for line in detail.pools
    ]
    drop_rows = [
        _drop_row(drop, names, currency(pool_of.get(drop.table)), user, lang)
        for drop in detail.drops
    ]
    return {
        "session": _summary(detail, lang),
        "heading": TEXT[lang]["session_n"].format(number=detail.number),
        "tables": tables,
        "pools": pools,
        "drops": drop_rows,
    }


def _step(request: HttpRequest, session_id: int, user: User, lang: str) -> HttpResponse:
    """The POST's step, done by `tables.club`; an ApiError goes up to the caller."""
    action = request.POST.get("action")
    url = reverse("floor-session", kwargs={"session": session_id})
    if action == "close":
        closed = sessions.close_session(session_id=session_id, user=user)
        return _after(url, lang, done="closed", number=closed.number)
    table = request.POST.get("table", "")
    if not table.isdigit():
        raise ApiError("invalid_request", "table must be a table's id", param="table")
    try:
        cents = cents_from_text(request.POST.get(AMOUNT_FIELD, ""), lang)
    except ValueError as unread:
        raise ApiError("invalid_request", str(unread), param=AMOUNT_FIELD) from unread
    if action == "count":
        drops.count_drop(session_id=session_id, table_id=int(table), counted_cents=cents, user=user)
        return _after(url, lang, done="counted", table=table)
    if action == "confirm":
        shown = second_factor.present(user, request.POST.get(PRESENCE_FIELD))  # before the step
        drops.confirm_drop(
            session_id=session_id,
            table_id=int(table),
            counted_cents=cents,
            user=user,
            presence=shown,
        )
        return _after(url, lang, done="confirmed", table=table)
    raise ApiError("invalid_request", "action must be close, count or confirm", param="action")


@require_http_methods(["GET", "POST"])
@sensitive_post_parameters(PRESENCE_FIELD)
@csrf_protect
@_money_page
def session_page(request: HttpRequest, session: int) -> HttpResponse:
    """One session: its snapshot, its drop boxes, and the forms of the next steps."""
    lang = page_language(request)
    user = request.user
    assert isinstance(user, User)
    error, status = "", 200
    if request.method == "POST":
        try:
            return _step(request, session, user, lang)
        except ApiError as refused:
            error, status = _refusal(lang, refused), refused.status_code
    try:
        detail = reads.session_detail(session)
    except ApiError as missing:
        return _render(
            request,
            "floor/sessions.html",
            _list_context(lang),
            lang,
            error=_refusal(lang, missing),
            status=missing.status_code,
        )
    context = _detail_context(detail, user, lang)
    return _render(request, "floor/sessions.html", context, lang, error=error, status=status)
