"""The session registers' page, `/floor/registers/`: models 8 and 8 ter for a range of club days.

For signed-in auditors, managers and supervisors (as the API, `tables.api.registers`): anyone
else signed in gets a 403 page, a visitor the login page. The page renders the registers' rows
server side from `tables.club.registers` (no script), with links to the API's CSV and PDF of the
same range. What it promises:
- every figure shown is the register's, in whole cents formatted, never computed here;
- a bad range is said on the page, naming the field, as the API would refuse it;
- French by default, English with `?lang=en`; the PDF links follow the page's language.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone

from core.errors import ApiError
from core.pages import page_language
from core.wire import read_query
from floor.layout import staff_only, staff_page
from jackpot.api.authentication import has_role
from tables.api.registers import READERS
from tables.bodies.registers import (
    DisplayedRegister,
    SessionRegisterQuery,
    WithheldLine,
    WithheldRegister,
    WithheldTotal,
)
from tables.club.registers import WORDS, amount, club_time, displayed_register, withheld_register

#: The club days shown when the page is opened without a range: the last week, today included.
DEFAULT_DAYS = 7

TEXT: dict[str, dict[str, str]] = {
    "fr": {
        "title": "Registres des séances",
        "intro": "Les registres tenus à la clôture de chaque séance (arrêté du 14 mai 2007, "
        "art. 66-2 et 66-3).",
        "from": "Du",
        "to": "au",
        "show": "Afficher",
        "download": "Télécharger :",
        "refused_title": "Accès refusé",
        "refused": "Les registres des séances sont réservés aux auditeurs, responsables et "
        "superviseurs.",
        "bad_range": "Période refusée : {message}",
        "count": "Urne",
    },
    "en": {
        "title": "Session registers",
        "intro": "The registers kept at each session's close (arrêté of 14 May 2007, "
        "art. 66-2 and 66-3).",
        "from": "From",
        "to": "to",
        "show": "Show",
        "download": "Download:",
        "refused_title": "Access refused",
        "refused": "The session registers are for auditors, managers and supervisors.",
        "bad_range": "Range refused: {message}",
        "count": "Drop box",
    },
}


def _withheld_cells(line: WithheldLine, lang: str) -> list[str]:
    count = line.drop_count
    if count is None:
        counted = ["", "", "", "", ""]
    else:
        difference = count.difference_cents
        counted = [
            amount(count.counted_cents, lang),
            amount(count.expected_cents, lang),
            WORDS[lang]["not_confirmed"]
            if difference is None
            else amount(difference, lang, signed=True),
            count.counted_by.removeprefix("user:"),
            count.confirmed_by.removeprefix("user:"),
        ]
    return [
        str(line.rounds),
        str(line.stakes),
        *(
            amount(cents, lang)
            for cents in (
                line.stakes_cents,
                line.meter_cents,
                line.reserve_cents,
                line.house_cents,
            )
        ),
        str(line.voided),
        amount(line.voided_cents, lang),
        amount(line.withheld_cents, lang),
        *counted,
    ]


def _total_cells(total: WithheldTotal, lang: str) -> list[str]:
    confirmed = total.boxes_confirmed > 0
    return [
        str(total.rounds),
        str(total.stakes),
        *(
            amount(cents, lang)
            for cents in (
                total.stakes_cents,
                total.meter_cents,
                total.reserve_cents,
                total.house_cents,
            )
        ),
        str(total.voided),
        amount(total.voided_cents, lang),
        amount(total.withheld_cents, lang),
        amount(total.counted_cents, lang) if confirmed else "",
        "",
        amount(total.difference_cents, lang, signed=True) if confirmed else "",
        WORDS[lang]["boxes"].format(confirmed=total.boxes_confirmed, boxes=total.boxes),
    ]


def _withheld(register: WithheldRegister, lang: str) -> dict[str, Any]:
    words = WORDS[lang]
    sessions = [
        {
            "heading": words["session"].format(
                number=part.session,
                day=part.club_day.isoformat(),
                closed=club_time(part.closed_at),
            ),
            "lines": [
                {
                    "table": line.table_name,
                    "pool": line.pool_name,
                    "cells": _withheld_cells(line, lang),
                }
                for line in part.lines
            ],
            "total_label": words["session_total"].format(number=part.session),
            "total": _total_cells(part.total, lang),
        }
        for part in register.sessions
    ]
    return {"sessions": sessions, "total": _total_cells(register.total, lang)}


def _displayed(register: DisplayedRegister, lang: str) -> dict[str, Any]:
    words = WORDS[lang]
    lines = [
        {
            "day": part.club_day.isoformat(),
            "session": part.session,
            "closed": club_time(part.closed_at),
            "pool": line.pool_name,
            "status": words.get(line.status, line.status),
            "displayed": amount(line.displayed_cents, lang),
            "corrections": line.corrections,
            "corrections_cents": amount(line.corrections_cents, lang, signed=True),
            "change": words["first"]
            if line.change_cents is None
            else amount(line.change_cents, lang, signed=True),
        }
        for part in register.sessions
        for line in part.lines
    ]
    totals = [
        {
            "pool": total.pool_name,
            "sessions": total.sessions,
            "corrections": total.corrections,
            "corrections_cents": amount(total.corrections_cents, lang, signed=True),
            "change": amount(total.change_cents, lang, signed=True),
            "last": amount(total.last_displayed_cents, lang),
        }
        for total in register.totals
    ]
    return {"lines": lines, "totals": totals}


def _downloads(name: str, query: SessionRegisterQuery, lang: str) -> dict[str, str]:
    url = reverse(name)
    days = {"from": query.from_.isoformat(), "to": query.to.isoformat()}
    return {
        "csv": f"{url}?{urlencode({**days, 'format': 'csv'})}",
        "pdf": f"{url}?{urlencode({**days, 'format': 'pdf', 'lang': lang})}",
    }


@staff_only
def registers_page(request: HttpRequest) -> HttpResponse:
    lang = page_language(request)
    text = {**WORDS[lang], **TEXT[lang]}
    if not has_role(request.user, *READERS):
        return staff_page(
            request,
            "floor/refused.html",
            {"refusal_title": text["refused_title"], "refusal": text["refused"]},
            lang=lang,
            text={},
            status=403,
        )
    today = timezone.localdate()
    asked = {
        "from": request.GET.get("from") or (today - timedelta(days=DEFAULT_DAYS - 1)).isoformat(),
        "to": request.GET.get("to") or today.isoformat(),
    }
    context: dict[str, Any] = {"days": asked}
    try:
        query = read_query(SessionRegisterQuery, asked)
    except ApiError as refusal:
        context["refusal"] = text["bad_range"].format(message=refusal.message)
        return staff_page(
            request,
            "floor/registers.html",
            context,
            lang=lang,
            text=text,
            status=400,
            extra_style="registers.css",
        )
    context |= {
        "withheld": _withheld(withheld_register(query.from_, query.to), lang),
        "displayed": _displayed(displayed_register(query.from_, query.to), lang),
        "withheld_links": _downloads("register-withheld", query, lang),
        "displayed_links": _downloads("register-displayed", query, lang),
    }
    return staff_page(
        request,
        "floor/registers.html",
        context,
        lang=lang,
        text=text,
        extra_style="registers.css",
    )
