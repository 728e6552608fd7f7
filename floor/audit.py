"""The auditor's view of a pool: `/audit/pools/{pool}/`, its story in charts.

The page is a shell for signed-in auditors and admins (a Django session, `floor.layout`:
a visitor is sent to the login page, anyone else signed in gets a 403 page, and no one is shown a
byte of the pool before that): its script reads the pool's
history from the API (`GET /api/v1/pools/{pool}/history`, with the session) and draws each chart
as inline SVG of its own; each chart links to its CSV (`history.csv?chart=`), the same rows. The
documented corrections of the range (compliance 55) are marked on the meter chart and listed,
each with its reference and who proposed and approved it. Its
void watch (`GET /api/v1/pools/{pool}/voids`, tables.selectors.voids) is the integrity check's
window, not the days picked: each table's voids over the window and shift by shift, the check's
alarms marked, and the pool's void flags listed. Its liability links download the period-end
statement (`GET /api/v1/pools/{pool}/liability`, `jackpot.reporting.liability`) of last month's
close and of this month to date, as PDF and CSV, the months named in the club's time zone. Its
significant events (`jackpot.notifications.significant`) are the pool's latest 25, as `GET
/api/v1/events?pool=` lists them. What it promises:
- every figure drawn is one the API answered: amounts in whole cents, formatted, never computed;
- it needs nothing from outside the service: its style and script are inlined and allowed by hash
  (`floor.layout.staff_page`, as every staff page), requests go to this origin only;
- French by default, English with `?lang=en`; laid out for a tablet as well as a desk.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone

from core.pages import page_language
from floor.layout import staff_only, staff_page
from jackpot.api.authentication import has_role
from jackpot.bodies.notifications import SignificantEventQuery
from jackpot.models import AwardKind, Pool
from jackpot.notifications.significant import CATALOGUE, EventCode
from jackpot.selectors import event_page
from jackpot.sign.page import TEXT as SIGN_TEXT

AUDITORS = ("auditor", "admin")

_WORDS: dict[str, dict[str, str]] = {
    "fr": {
        "locale": "fr-FR",
        "title": "Historique du jackpot",
        "from": "Du",
        "to": "au",
        "show": "Afficher",
        "csv": "Télécharger (CSV)",
        "liability": "Passif du jackpot (pour le comptable)",
        "events": "Événements significatifs (les 25 derniers)",
        "events_none": "Aucun événement significatif pour ce jackpot.",
        "event_when": "Date",
        "event_code": "Code",
        "event_what": "Événement",
        "event_who": "Par",
        "liability_closed": "Clôture de {month}",
        "liability_running": "{month}, à ce jour",
        "loading": "Chargement…",
        "failed": "Historique indisponible",
        "meter": "Le jackpot, en fin de journée",
        "stakes": "Mises progressives par jour",
        "awards": "Gains par combinaison : observés et attendus",
        "awards_note": "Attendu : probabilité exacte de la fiche PAR, mise par mise, "
        "sur les tours réglés",
        "hits": "Jackpots gagnés et remise à la mise de départ",
        "reconciliation": "Rapprochement",
        "reconciliation_ok": "Rapprochement conforme",
        "reconciliation_failed": "Rapprochement en échec",
        "reconciliation_none": "Aucun rapprochement encore",
        "identity": "Identité du compteur :",
        "no_data": "Rien sur cette période",
        "day": "Jour",
        "count": "Mises",
        "amount": "Montant",
        "refunded": "Remboursées",
        "kind": "Combinaison",
        "observed": "Observés",
        "expected": "Attendus",
        "rate": "Fréquence attendue",
        "one_in": "1 sur {n}",
        "table": "Table",
        "round": "Tour",
        "seat": "Place",
        "status": "Statut",
        "reset_reserve": "Remise : réserve",
        "reset_house": "Remise : maison",
        "corrections": "Corrections documentées",
        "correction_mark": "correction",
        "target": "Objet",
        "target_meter": "compteur",
        "target_reserve": "réserve",
        "target_award": "gain n°{award}",
        "reference": "Référence du régulateur",
        "reason": "Motif",
        "approved_by": "Proposée / approuvée par",
        "meter_after": "Compteur après",
        "rounds": "{rounds} tours réglés, {stakes} mises",
        "pending": "à vérifier",
        "verified": "vérifié",
        "approved": "approuvé",
        "paid": "payé",
        "void": "annulé",
        "holds": "vérifiée",
        "broken": "rompue",
        "not_applicable": "sans objet",
        "refused_title": "Accès refusé",
        "refused": "L'historique d'un jackpot est réservé aux auditeurs et aux administrateurs.",
        "voids": "Tours annulés, par table et par équipe",
        "voids_note": "Les {shifts} dernières équipes de {hours} h, l'équipe en cours comprise ; "
        "attendus : le taux de l'équipe sur toutes les tables du jackpot ; "
        "une table est testée à partir de {min} tours",
        "decided": "Tours réglés ou annulés",
        "voided": "Annulés",
        "by_shift": "Par équipe",
        "shift_label": "{day}, {from}\u2013{to}",
        "alarms": "Alertes d'annulations",
        "no_alarm": "Aucune alerte",
        "period": "Période",
        "adjusted": "Probabilité corrigée",
        "alarm": "alerte",
        "voids_in_shift": "dans l'équipe",
        "voids_in_window": "sur la période",
        "life": "État\u00a0:",
        "life_active": "actif",
        "life_suspended": "suspendu",
        "life_stopped": "arrêté",
        "life_since": "depuis le",
    },
    "en": {
        "locale": "en-GB",
        "title": "Jackpot history",
        "from": "From",
        "to": "to",
        "show": "Show",
        "csv": "Download (CSV)",
        "liability": "Jackpot liability (for the accountant)",
        "events": "Significant events (the latest 25)",
        "events_none": "No significant event for this pool.",
        "event_when": "When",
        "event_code": "Code",
        "event_what": "Event",
        "event_who": "By",
        "liability_closed": "{month}'s close",
        "liability_running": "{month} to date",
        "loading": "Loading…",
        "failed": "History unavailable",
        "meter": "The jackpot at the end of each day",
        "stakes": "Progressive stakes per day",
        "awards": "Awards by hand: observed and expected",
        "awards_note": "Expected: the PAR sheet's exact probability, stake by stake, "
        "over the settled rounds",
        "hits": "Jackpots won and the reset to the seed",
        "reconciliation": "Reconciliation",
        "reconciliation_ok": "Reconciliation ok",
        "reconciliation_failed": "Reconciliation failed",
        "reconciliation_none": "No reconciliation yet",
        "identity": "Meter identity:",
        "no_data": "Nothing in this period",
        "day": "Day",
        "count": "Stakes",
        "amount": "Amount",
        "refunded": "Refunded",
        "kind": "Hand",
        "observed": "Observed",
        "expected": "Expected",
        "rate": "Expected frequency",
        "one_in": "1 in {n}",
        "table": "Table",
        "round": "Round",
        "seat": "Seat",
        "status": "Status",
        "reset_reserve": "Reset: reserve",
        "reset_house": "Reset: house",
        "corrections": "Documented corrections",
        "correction_mark": "correction",
        "target": "Corrects",
        "target_meter": "meter",
        "target_reserve": "reserve",
        "target_award": "award #{award}",
        "reference": "Regulator's reference",
        "reason": "Reason",
        "approved_by": "Proposed / approved by",
        "meter_after": "Meter after",
        "rounds": "{rounds} settled rounds, {stakes} stakes",
        "pending": "to verify",
        "verified": "verified",
        "approved": "approved",
        "paid": "paid",
        "void": "void",
        "holds": "holds",
        "broken": "broken",
        "not_applicable": "not applicable",
        "refused_title": "Access refused",
        "refused": "A jackpot's history is for auditors and administrators.",
        "voids": "Voided rounds, by table and shift",
        "voids_note": "The last {shifts} shifts of {hours} h, the current one included; "
        "expected: the shift's rate over all of the pool's tables; "
        "a table is tested from {min} rounds",
        "decided": "Rounds settled or voided",
        "voided": "Voided",
        "by_shift": "By shift",
        "shift_label": "{day}, {from}\u2013{to}",
        "alarms": "Void alarms",
        "no_alarm": "No alarm",
        "period": "Period",
        "adjusted": "Adjusted probability",
        "alarm": "alarm",
        "voids_in_shift": "in the shift",
        "voids_in_window": "over the window",
        "life": "Status:",
        "life_active": "active",
        "life_suspended": "suspended",
        "life_stopped": "stopped",
        "life_since": "since",
    },
}


# Each kind of award in the sign's words: one set of words for every screen.
TEXT = {
    lang: {**words, **{kind.value: SIGN_TEXT[lang][kind.value] for kind in AwardKind}}
    for lang, words in _WORDS.items()
}

#: The significant events' names on the page (docs/operations.md "Significant events").
EVENT_NAMES: dict[str, dict[EventCode, str]] = {
    "fr": {
        EventCode.TERMINAL_SILENT: "Terminal silencieux, table ouverte",
        EventCode.BOOKS_MISMATCH: "Écart au rapprochement",
        EventCode.BOOKS_AGREE_AGAIN: "Rapprochement de nouveau conforme",
        EventCode.PARAMETERS_CHANGED: "Paramètres du jackpot modifiés",
        EventCode.TABLE_CHANGED: "Table ouverte, fermée, renommée ou déplacée",
        EventCode.POOL_SUSPENDED: "Jackpot suspendu",
        EventCode.POOL_RESUMED: "Jackpot rétabli",
        EventCode.POOL_STOPPED: "Jackpot arrêté définitivement",
        EventCode.DATABASE_RESTORED: "Base de données restaurée",
        EventCode.VOID_RATE_ALARM: "Alarme : taux d'annulations",
        EventCode.AWARD_RATE_ALARM: "Alarme : fréquence des gains",
        EventCode.SURVEILLANCE_REFERRAL: "Gain signalé par la surveillance",
        EventCode.TERMINAL_ISSUED: "Jeton de terminal émis",
        EventCode.AWARD_ODDS_ALARM: "Alarme : gains improbables à une table ou un terminal",
    },
    "en": {event.code: event.title for event in CATALOGUE},
}


def _events(pool: int, lang: str) -> list[dict[str, Any]]:
    """The pool's latest significant events, as the list API reads them (`event_page`)."""
    page = event_page(SignificantEventQuery(pool=pool, limit=25))
    return [
        {
            "when": timezone.localtime(event.occurred_at),
            "code": event.code,
            "what": EVENT_NAMES[lang][EventCode(event.code)],
            "table": event.table,
            "actor": event.actor,
        }
        for event in page.results
    ]


_MONTHS = {
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "en": "January February March April May June July August September October November December",
}


FORMATS = ("pdf", "csv")


def _liability_links(pool: int, lang: str) -> list[dict[str, str]]:
    """The statements an accountant files: last month's close (its `at` midnight of this
    month's first day, club time) and this month to date: each a label and its URL by format."""
    club = ZoneInfo(settings.TIME_ZONE)
    this_month = timezone.localtime(timezone.now(), club).date().replace(day=1)
    last_month = (this_month - timedelta(days=1)).replace(day=1)
    url = reverse("pool-liability", kwargs={"pool": pool})
    months = _MONTHS[lang].split()
    links = []
    for label, month, at in (
        ("liability_closed", last_month, datetime.combine(this_month, time(0), tzinfo=club)),
        ("liability_running", this_month, None),
    ):
        query = {"from": datetime.combine(month, time(0), tzinfo=club).isoformat()}
        if at is not None:
            query["at"] = at.isoformat()
        name = f"{months[month.month - 1]} {month.year}"
        links.append(
            {
                "label": TEXT[lang][label].format(month=name),
                **{format: f"{url}?{urlencode({**query, 'format': format})}" for format in FORMATS},
            }
        )
    return links


@staff_only
def audit_pool(request: HttpRequest, pool: int) -> HttpResponse:
    lang = page_language(request)
    if not has_role(request.user, *AUDITORS):
        return staff_page(
            request,
            "floor/refused.html",
            {"refusal_title": TEXT[lang]["refused_title"], "refusal": TEXT[lang]["refused"]},
            lang=lang,
            text={},
            status=403,
        )
    found = Pool.objects.filter(pk=pool).first()
    if found is None:
        raise Http404(f"no pool {pool}")
    # The day filters go to the API as they are: it refuses a bad one, naming it, and the page
    # says so.
    days = {key: request.GET[key] for key in ("from", "to") if request.GET.get(key)}
    config: dict[str, Any] = {
        "historyUrl": reverse("pool-history", kwargs={"pool": pool}),
        "csvUrl": reverse("pool-history-csv", kwargs={"pool": pool}),
        "voidsUrl": reverse("pool-voids", kwargs={"pool": pool}),
        "days": days,
        "currency": found.currency,
        "text": TEXT[lang],
    }
    return staff_page(
        request,
        "floor/audit_pool.html",
        {
            "pool": found,
            "days": days,
            "liability": _liability_links(pool, lang),
            "events": _events(pool, lang),
            "life": TEXT[lang][f"life_{found.status}"],
        },
        lang=lang,
        text=TEXT[lang],
        script="audit.js",
        extra_style="audit.css",
        config=config,
    )
