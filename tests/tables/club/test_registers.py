"""The registers models 8 and 8 ter (tables.club.registers, GET /api/v1/registers/...): their rows
and totals to the cent, the CSV (spreadsheet-safe) and the PDF in French and English, who may
read them and the refusals of a bad range.

The sessions' snapshot rows are written here with the ORM, as the session's close writes them
(tables.club.sessions); the end-to-end story through the real close is the sessions' tests'.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pypdf
import pytest
import time_machine
from django.conf import settings
from django.db.models import F
from django.test import Client

from jackpot.models import Pool
from jackpot.pools.creation import pool_create
from tables.bodies.registers import DisplayedRegister, WithheldRegister
from tables.club import registers
from tables.club.registers import DISPLAYED_HEADER, WITHHELD_HEADER
from tables.models import (
    ClubSession,
    DropCount,
    Game,
    SessionPool,
    SessionStatus,
    SessionTable,
    Table,
)
from tables.services import operator_terminal_issue, table_create
from tests.staff import person, token_client

pytestmark = pytest.mark.django_db

PARIS = ZoneInfo("Europe/Paris")
FIRST, LAST = date(2026, 11, 28), date(2026, 11, 29)
FORMULA = '=HYPERLINK("http://evil.example","x")'


@dataclass
class Club:
    main: Pool
    second: Pool
    uth: Table
    formula: Table


def _session(number: int, day: date, *, closed: bool = True) -> ClubSession:
    opened = datetime(day.year, day.month, day.day, 14, 0, tzinfo=PARIS)
    return ClubSession.objects.create(
        number=number,
        club_day=day,
        status=SessionStatus.CLOSED if closed else SessionStatus.OPEN,
        opened_at=opened,
        opened_by="user:sue",
        closed_at=opened.replace(hour=23, minute=58) if closed else None,
        closed_by="user:sue" if closed else "",
        closed_how="supervisor" if closed else "",
    )


def _line(session: ClubSession, table: Table, pool: Pool, *figures: int) -> SessionTable:
    rounds, stakes, stakes_cents, meter, reserve, house, voided, voided_cents = figures
    return SessionTable.objects.create(
        session=session,
        table=table,
        pool=pool,
        rounds=rounds,
        stakes=stakes,
        stakes_cents=stakes_cents,
        meter_cents=meter,
        reserve_cents=reserve,
        house_cents=house,
        voided=voided,
        voided_cents=voided_cents,
        withheld_cents=stakes_cents - voided_cents,
    )


def _count(session: ClubSession, table: Table, counted: int, expected: int, *, confirmed: bool):
    at = session.closed_at
    return DropCount.objects.create(
        session=session,
        table=table,
        counted_cents=counted,
        counted_by="user:cara",
        counted_at=at,
        expected_cents=expected,
        confirmed_by="user:dan" if confirmed else "",
        confirmed_at=at if confirmed else None,
        difference_cents=counted - expected if confirmed else None,
    )


def _shown(session: ClubSession, pool: Pool, displayed: int, *corrections: int) -> SessionPool:
    return SessionPool.objects.create(
        session=session,
        pool=pool,
        status="active",
        displayed_cents=displayed,
        meter_version=session.number * 10,
        corrections=len(corrections),
        corrections_cents=sum(corrections),
    )


@pytest.fixture
def club() -> Club:
    return make_club()


def make_club() -> Club:
    """Sessions 1 (the 27th, before the range), 2 (the 28th), 3 (the 29th), 4 (the 29th, still
    open) and 5 (the 30th, after the range); the second pool feeds nothing until session 3."""
    with time_machine.travel(datetime(2026, 11, 1, 12, tzinfo=PARIS)):  # before the sessions
        main = pool_create(name="Main floor", actor="test")
        second = pool_create(name="Second", actor="test")
    uth = table_create(name="UTH 1", game=Game.UTH, pool=main, actor="test")
    formula = table_create(name=FORMULA, game=Game.UTH, pool=main, actor="test")
    before = _session(1, date(2026, 11, 27))
    _line(before, uth, main, 99, 99, 49_500, 9_900, 3_960, 35_640, 0, 0)
    _shown(before, main, 1_000_000)
    first = _session(2, FIRST)
    _line(first, uth, main, 10, 14, 7_000, 3_500, 1_000, 2_500, 2, 1_000)
    _line(first, formula, main, 4, 4, 2_000, 1_000, 286, 714, 0, 0)
    _count(first, uth, 6_000, 6_000, confirmed=True)
    _count(first, formula, 1_900, 2_000, confirmed=True)
    _shown(first, main, 1_003_500)
    second_session = _session(3, LAST)
    _line(second_session, uth, main, 2, 2, 1_000, 500, 143, 357, 0, 0)
    _count(second_session, uth, 1_000, 1_000, confirmed=False)
    _shown(second_session, main, 1_002_000, -2_000)  # +500 of stakes, a correction of -2,000
    _shown(second_session, second, 500_000)
    _session(4, LAST, closed=False)
    after = _session(5, date(2026, 11, 30))
    _line(after, uth, main, 1, 1, 500, 250, 71, 179, 0, 0)
    _shown(after, main, 1_002_250)
    return Club(main, second, uth, formula)


# --- the rows and totals ---------------------------------------------------------------------


def test_model_8_lists_each_closed_session_of_the_range_with_its_totals(club):
    register = registers.withheld_register(FIRST, LAST)
    assert [part.session for part in register.sessions] == [2, 3]  # not 1, 4 (open) or 5
    first, second = register.sessions
    assert first.club_day == FIRST
    assert first.closed_at == datetime(2026, 11, 28, 23, 58, tzinfo=PARIS)
    # Tables by name ("=" sorts before "U"), each with its pool and its box's count.
    formula, uth = first.lines
    assert (formula.table_name, formula.pool_name, formula.withheld_cents) == (
        FORMULA,
        "Main floor",
        2_000,
    )
    assert formula.drop_count is not None
    assert (formula.drop_count.counted_cents, formula.drop_count.difference_cents) == (1_900, -100)
    assert (uth.stakes_cents, uth.meter_cents, uth.reserve_cents, uth.house_cents) == (
        7_000,
        3_500,
        1_000,
        2_500,
    )
    assert (uth.voided, uth.voided_cents, uth.withheld_cents) == (2, 1_000, 6_000)
    total = first.total
    assert (total.rounds, total.stakes, total.stakes_cents, total.withheld_cents) == (
        14,
        18,
        9_000,
        8_000,
    )
    assert (total.meter_cents, total.reserve_cents, total.house_cents) == (4_500, 1_286, 3_214)
    assert (total.boxes, total.boxes_confirmed) == (2, 2)
    assert (total.counted_cents, total.difference_cents) == (7_900, -100)
    # Session 3's box is counted, not yet confirmed: in its line, not in the confirmed sums.
    (line,) = second.lines
    assert line.drop_count is not None and line.drop_count.confirmed_by == ""
    assert line.drop_count.difference_cents is None
    assert (second.total.boxes, second.total.boxes_confirmed, second.total.counted_cents) == (
        1,
        0,
        0,
    )
    whole = register.total
    assert (whole.rounds, whole.stakes, whole.stakes_cents, whole.withheld_cents) == (
        16,
        20,
        10_000,
        9_000,
    )
    assert (whole.meter_cents, whole.reserve_cents, whole.house_cents) == (5_000, 1_429, 3_571)
    assert (whole.voided, whole.voided_cents) == (2, 1_000)
    assert (whole.boxes, whole.boxes_confirmed, whole.counted_cents) == (3, 2, 7_900)
    assert whole.difference_cents == -100
    # What the API answers is the model's own shape.
    WithheldRegister.model_validate_json(register.model_dump_json())


def test_a_table_counted_without_a_stake_has_a_line_of_zeros(club):
    idle = table_create(name="UTH 9", game=Game.UTH, pool=None, actor="test")
    session = ClubSession.objects.get(number=3)
    _count(session, idle, 500, 0, confirmed=True)
    (_, line) = registers.withheld_register(LAST, LAST).sessions[0].lines
    assert (line.table_name, line.pool, line.withheld_cents) == ("UTH 9", None, 0)
    assert line.drop_count is not None and line.drop_count.difference_cents == 500
    assert registers.withheld_register(LAST, LAST).total.difference_cents == 500


def test_model_8_ter_lists_the_amount_displayed_and_its_change(club):
    register = registers.displayed_register(FIRST, LAST)
    assert [part.session for part in register.sessions] == [2, 3]
    (first,) = register.sessions[0].lines
    # The change from session 1, before the range: read back, not left blank.
    assert (first.pool_name, first.displayed_cents, first.change_cents) == (
        "Main floor",
        1_003_500,
        3_500,
    )
    main, second = register.sessions[1].lines
    assert (main.displayed_cents, main.corrections, main.corrections_cents) == (
        1_002_000,
        1,
        -2_000,
    )
    assert main.change_cents == -1_500
    assert (second.pool_name, second.displayed_cents, second.change_cents) == (
        "Second",
        500_000,
        None,  # its first session
    )
    by_pool = {total.pool_name: total for total in register.totals}
    assert by_pool["Main floor"].model_dump() == {
        "pool": club.main.pk,
        "pool_name": "Main floor",
        "currency": "EUR",
        "sessions": 2,
        "corrections": 1,
        "corrections_cents": -2_000,
        "change_cents": 2_000,
        "last_displayed_cents": 1_002_000,
    }
    assert (by_pool["Second"].sessions, by_pool["Second"].change_cents) == (1, 0)
    DisplayedRegister.model_validate_json(register.model_dump_json())


def test_the_previous_amount_is_found_past_the_look_back(club):
    # Ten sessions of another pool between session 1 and the range: the main pool's previous
    # amount is still session 1's.
    ClubSession.objects.filter(number__gte=2).update(number=F("number") + 100)
    for number in range(2, 12):
        _shown(_session(number, date(2026, 11, 27)), club.second, 400_000 + number)
    line = registers.displayed_register(FIRST, FIRST).sessions[0].lines[0]
    assert (line.pool_name, line.change_cents) == ("Main floor", 3_500)


def test_an_empty_range_has_no_sessions_and_zero_totals(club):
    empty = registers.withheld_register(date(2025, 1, 1), date(2025, 1, 31))
    assert empty.sessions == [] and empty.total.withheld_cents == 0
    assert registers.displayed_register(date(2025, 1, 1), date(2025, 1, 31)).totals == []


# --- CSV ----------------------------------------------------------------------------------------


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_model_8_csv_holds_every_line_to_the_cent_and_no_formula(club):
    text = registers.withheld_csv(registers.withheld_register(FIRST, LAST))
    assert text.splitlines()[0] == ",".join(WITHHELD_HEADER)
    rows = _rows(text)
    assert [(row["session"], row["table"]) for row in rows] == [
        ("2", "'" + FORMULA),  # written as text: no spreadsheet evaluates it
        ("2", "UTH 1"),
        ("3", "UTH 1"),
    ]
    formula, uth, later = rows
    assert formula["closed_at_utc"] == "2026-11-28T22:58:00+00:00"
    assert (formula["withheld_cents"], formula["counted_cents"], formula["difference_cents"]) == (
        "2000",
        "1900",
        "-100",  # a negative number stays a number
    )
    assert {key: uth[key] for key in WITHHELD_HEADER[6:15]} == {
        "rounds": "10",
        "stakes": "14",
        "stakes_cents": "7000",
        "meter_cents": "3500",
        "reserve_cents": "1000",
        "house_cents": "2500",
        "voided": "2",
        "voided_cents": "1000",
        "withheld_cents": "6000",
    }
    assert (uth["counted_by"], uth["confirmed_by"]) == ("user:cara", "user:dan")
    assert (later["counted_cents"], later["difference_cents"], later["confirmed_by"]) == (
        "1000",
        "",
        "",
    )
    assert sum(int(row["withheld_cents"]) for row in rows) == 9_000


def test_model_8_ter_csv(club):
    text = registers.displayed_csv(registers.displayed_register(FIRST, LAST))
    assert text.splitlines()[0] == ",".join(DISPLAYED_HEADER)
    assert [
        (row["session"], row["pool"], row["displayed_cents"], row["change_cents"])
        for row in _rows(text)
    ] == [
        ("2", "Main floor", "1003500", "3500"),
        ("3", "Main floor", "1002000", "-1500"),
        ("3", "Second", "500000", ""),
    ]


# --- PDF ----------------------------------------------------------------------------------------


def pdf_text(content: bytes) -> str:
    reader = pypdf.PdfReader(io.BytesIO(content))
    return "\n".join(page.extract_text() for page in reader.pages)


def test_model_8_pdf_in_french_and_english(club):
    register = registers.withheld_register(FIRST, LAST)
    french = pdf_text(registers.withheld_pdf(register, "fr"))
    assert settings.CLUB_NAME in french
    assert "Registre des prélèvements (modèle 8)" in french
    assert "Journées de jeu du 2026-11-28 au 2026-11-29" in french
    assert "Séance n° 2 · journée du 2026-11-28 · close le 2026-11-28 23:58 CET" in french
    assert "=HYPERLINK(" in french  # a PDF shows the name as it is (wrapped in its cell)
    assert "Total de la séance n° 2" in french
    assert "90,00" in french and "80,00" in french  # session 2: stakes and net withheld
    assert "-1,00" in french  # the formula table's box: 1 euro short
    assert "Total de la période" in french and "100,00" in french
    assert "Le responsable de la séance" in french
    assert "Les deux personnes ayant procédé au comptage" in french
    english = pdf_text(registers.withheld_pdf(register, "en"))
    assert "Register of amounts withheld (model 8)" in english
    assert "Total of the period" in english and "100.00" in english
    assert "The session's manager" in english and "The two people who counted" in english


def test_model_8_ter_pdf_in_french_and_english(club):
    register = registers.displayed_register(FIRST, LAST)
    french = pdf_text(registers.displayed_pdf(register, "fr"))
    assert "Registre des montants affichés (modèle 8 ter)" in french
    assert "10 035,00" in french and "10 020,00" in french and "5 000,00" in french
    assert "+35,00" in french and "-15,00" in french and "première séance" in french
    assert "Le directeur responsable" in french
    assert "Le membre du comité de direction" in french
    english = pdf_text(registers.displayed_pdf(register, "en"))
    assert "Register of amounts displayed (model 8 ter)" in english
    assert "10,035.00" in english and "first session" in english
    assert "The director in charge" in english
    assert "The member of the management committee" in english


def test_an_empty_register_says_so(club):
    text = pdf_text(registers.withheld_pdf(registers.withheld_register(FIRST, FIRST), "fr"))
    assert "Séance n° 2" in text
    none = registers.displayed_register(date(2025, 1, 1), date(2025, 1, 1))
    assert "Aucune séance close sur cette période." in pdf_text(registers.displayed_pdf(none, "fr"))


# --- the API ------------------------------------------------------------------------------------

WITHHELD = "/api/v1/registers/withheld"
DISPLAYED = "/api/v1/registers/displayed"
RANGE = {"from": FIRST.isoformat(), "to": LAST.isoformat()}


@pytest.mark.parametrize("role", ["auditor", "manager", "supervisor"])
def test_the_money_people_read_both_registers(club, role):
    client = token_client(person(f"{role}-reader", role))
    answer = client.get(WITHHELD, RANGE)
    assert answer.status_code == 200, answer.content
    body = json.loads(answer.content)
    assert body["total"]["withheld_cents"] == 9_000
    assert body["sessions"][0]["closed_at"] == "2026-11-28T22:58:00+00:00"
    assert [line["table_name"] for line in body["sessions"][0]["lines"]] == [FORMULA, "UTH 1"]
    WithheldRegister.model_validate_json(answer.content)
    shown = client.get(DISPLAYED, RANGE)
    assert shown.status_code == 200, shown.content
    DisplayedRegister.model_validate_json(shown.content)
    assert shown.json()["sessions"][1]["lines"][0]["change_cents"] == -1_500


def test_the_api_downloads_csv_and_pdf(club):
    client = token_client(person("ida", "auditor"))
    answer = client.get(WITHHELD, {**RANGE, "format": "csv"})
    assert answer.status_code == 200
    assert answer["Content-Type"] == "text/csv; charset=utf-8"
    assert answer["Content-Disposition"] == (
        'attachment; filename="register-8-withheld-20261128-20261129.csv"'
    )
    assert answer.content.decode() == registers.withheld_csv(
        registers.withheld_register(FIRST, LAST)
    )
    pdf = client.get(DISPLAYED, {**RANGE, "format": "pdf", "lang": "en"})
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    assert pdf["Content-Disposition"] == (
        'attachment; filename="register-8ter-displayed-20261128-20261129-en.pdf"'
    )
    assert "Register of amounts displayed (model 8 ter)" in pdf_text(pdf.content)
    assert answer["Cache-Control"] == pdf["Cache-Control"] == "no-store"


def test_an_admin_a_terminal_and_a_stranger_are_refused(club):
    admin = token_client(person("adam", "admin"))
    for url in (WITHHELD, DISPLAYED):
        refused = admin.get(url, RANGE)
        assert refused.status_code == 403, refused.content
    terminal = operator_terminal_issue(table=club.uth, name="t", revoke_others=False, actor="test")
    as_terminal = Client(HTTP_AUTHORIZATION=f"Bearer {terminal.token}").get(WITHHELD, RANGE)
    assert as_terminal.status_code == 401, as_terminal.content
    assert Client().get(DISPLAYED, RANGE).status_code == 401
    surveillance = token_client(person("sam", "surveillance"))
    assert surveillance.get(WITHHELD, RANGE).status_code == 403


@pytest.mark.parametrize(
    ("query", "param", "message"),
    [
        ({"to": "2026-11-29"}, "from", "from is required"),
        ({"from": "2026-11-28"}, "to", "to is required"),
        ({"from": "28/11/2026", "to": "2026-11-29"}, "from", "from:"),
        ({"from": "2026-11-29", "to": "2026-11-28"}, "to", "must not be before from"),
        ({"from": "2025-11-28", "to": "2026-11-29"}, "to", "at most 366 club days"),
        ({**RANGE, "format": "xlsx"}, "format", "format:"),
        ({**RANGE, "lang": "de"}, "lang", "lang:"),
    ],
)
def test_a_bad_range_or_format_is_a_400_naming_it(club, query, param, message):
    answer = token_client(person("ida", "auditor")).get(WITHHELD, query)
    assert answer.status_code == 400, answer.content
    error = answer.json()["error"]
    assert (error["code"], error["param"]) == ("invalid_parameter", param)
    assert message in error["message"]


def test_a_year_is_accepted(club):
    answer = token_client(person("ida", "auditor")).get(
        DISPLAYED, {"from": "2025-11-30", "to": "2026-11-30"}
    )
    assert answer.status_code == 200, answer.content
    assert [part["session"] for part in answer.json()["sessions"]] == [1, 2, 3, 5]
