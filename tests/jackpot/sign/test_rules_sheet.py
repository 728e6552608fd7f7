"""The progressive's rules posted at the table (compliance 56, second sentence): a page and a PDF
per pool, French and English, from its terms alone, to the cent; unchanged by anything that is not
a term; cached by the terms' digest; 404 for no such pool.

What the browser shows of them, and the PDF drawn: tests/browser/test_rules_sheet.py."""

from __future__ import annotations

import hashlib
import io
import re
from html import unescape

import pytest
from django.test import Client
from pypdf import PdfReader

from jackpot.models import AuditEvent, Pool
from jackpot.money.canonical import canonical_json
from jackpot.sign.rules_sheet import Terms, money, percent
from tables.models import Table
from tests.conftest import Floor, make_floor, uth_play, uth_seat
from tests.staff import api_clients

pytestmark = pytest.mark.django_db

ODD = {"stake_cents": 300, "meter_share_bp": 1234, "reserve_share_bp": 567}


def _html(pool: int, lang: str = "fr", **headers: str):
    return Client().get(f"/display/{pool}/rules?lang={lang}", headers=headers)


def _pdf(pool: int, lang: str = "fr", **headers: str):
    return Client().get(f"/display/{pool}/rules.pdf?lang={lang}", headers=headers)


def _text(html: str) -> str:
    """The page's words, one space between them (tags gone, entities read)."""
    body = re.sub(r"<(style|script)\b.*?</\1>", " ", html, flags=re.DOTALL)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", body)).split())


def _page_text(pool: int, lang: str) -> str:
    response = _html(pool, lang)
    assert response.status_code == 200
    return _text(response.content.decode())


def _pdf_text(pool: int, lang: str) -> str:
    response = _pdf(pool, lang)
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    reader = PdfReader(io.BytesIO(response.content))
    assert len(reader.pages) == 1  # one A4 sheet to post
    return " ".join(" ".join(page.extract_text() for page in reader.pages).split())


def _digest(pool: int) -> str:
    row = Pool.objects.get(pk=pool)
    terms = Terms(
        row.currency,
        row.stake_cents,
        row.meter_share_bp,
        row.reserve_share_bp,
        row.seed_cents,
        row.paytable_version,
    )
    return hashlib.sha256(canonical_json(terms.canonical())).hexdigest()[:12]


# What each sheet must say, to the cent: the default pool (500 cents, 2,000 bp, 800 bp) ...
DEFAULT_FR = (
    "coûte exactement 5,00 EUR par place et par coup",
    "Sur chaque mise de 5,00 EUR :",
    "Au compteur : le jackpot affiché au panneau 1,00 EUR (20,00 %)",
    "À la réserve du prochain montant de départ 0,40 EUR (8,00 %)",
    "À l'établissement 3,60 EUR (72,00 %)",
    "arrondi au centime inférieur",
    "au moment du gain 100,00 % du compteur",
    "Quinte flush royale communautaire : les 5 cartes communes seules 5 000,00 EUR",
    "Quinte flush 1 500,00 EUR",
    "Carré 500,00 EUR",
    "Full 50,00 EUR",
    "reçoit 500,00 EUR, en plus de son propre gain",
    "Une quinte flush royale communautaire ne donne pas de Garantie",
    "Le compteur repart de 10 000,00 EUR (le montant de départ), pris sur la réserve",
    "les mises progressives sont refusées, aucun gain ne peut être réclamé et le compteur reste "
    "immobile",
    "Table des gains uth-progressive/2026-1.",
)
DEFAULT_EN = (
    "costs exactly EUR 5.00 per seat and round",
    "Of each EUR 5.00:",
    "To the meter: the jackpot shown on the sign EUR 1.00 (20.00%)",
    "To the reserve for the next start value EUR 0.40 (8.00%)",
    "To the house EUR 3.60 (72.00%)",
    "the meter rounded down to the cent",
    "at the moment of the hit 100.00% of the meter",
    "Community royal: the 5 board cards alone are a royal flush EUR 5,000.00",
    "Straight flush EUR 1,500.00",
    "Four of a kind EUR 500.00",
    "Full house EUR 50.00",
    "receives EUR 500.00, on top of its own award",
    "A community royal pays no envy",
    "The meter starts again at EUR 10,000.00 (the start value), taken from the reserve",
    "progressive bets are refused, nothing can be claimed, and the meter stands still",
    "the next one wins the meter as it stands after the first",
    "Award table uth-progressive/2026-1.",
)
# ... and an odd one (300 cents, 1,234 bp, 567 bp): its shares are not whole cents, and the
# sheet shows them to the 1/10,000 cent the meter keeps, with the bets that make them whole.
ODD_FR = (
    "coûte exactement 3,00 EUR",
    "Au compteur : le jackpot affiché au panneau 0,3702 EUR (12,34 %)",
    "À la réserve du prochain montant de départ 0,1701 EUR (5,67 %)",
    "À l'établissement 2,4597 EUR (81,99 %)",
    "après une mise le panneau affiche 0,37 EUR de plus, et après 50 mises exactement "
    "18,51 EUR de plus (50 \u00d7 0,3702 EUR)",
)
ODD_EN = (
    "costs exactly EUR 3.00",
    "To the meter: the jackpot shown on the sign EUR 0.3702 (12.34%)",
    "To the reserve for the next start value EUR 0.1701 (5.67%)",
    "To the house EUR 2.4597 (81.99%)",
    "after one bet the sign shows EUR 0.37 more, and after 50 bets exactly EUR 18.51 more "
    "(50 \u00d7 EUR 0.3702)",
)


@pytest.mark.parametrize(
    ("options", "lang", "expected"),
    [
        ({}, "fr", DEFAULT_FR),
        ({}, "en", DEFAULT_EN),
        (ODD, "fr", ODD_FR),
        (ODD, "en", ODD_EN),
    ],
)
def test_the_page_and_the_pdf_say_each_figure_to_the_cent(options, lang, expected):
    floor = make_floor(**options)
    page, pdf = _page_text(floor.pool_id, lang), _pdf_text(floor.pool_id, lang)
    for sentence in expected:
        assert sentence in page, sentence
        assert sentence in pdf, sentence
    digest = _digest(floor.pool_id)
    for text in (page, pdf):
        assert digest in text
        assert (
            "Conditions en vigueur depuis le " if lang == "fr" else "Terms in force since "
        ) in text
    if not options:  # whole cents: no example of carried fractions
        assert "0,3702" not in page and "after one bet" not in page


def test_shares_of_each_stake_add_up_to_it_exactly():
    for stake, meter_bp, reserve_bp in (
        (500, 2000, 800),
        (300, 1234, 567),
        (1, 1, 1),
        (7, 9999, 1),
    ):
        terms = Terms("EUR", stake, meter_bp, reserve_bp, 100, "uth-progressive/2026-1")
        shares = (meter_bp, reserve_bp, terms.house_share_bp)
        assert sum(stake * bp for bp in shares) == stake * 10_000
    assert money(1, "EUR", "en") == "EUR 0.000001"  # one unit: 1/10,000 of a cent
    assert money(123_456_789 * 10_000, "EUR", "fr") == "1 234 567,89 EUR"
    assert (percent(1, "en"), percent(10_000, "fr")) == ("0.01%", "100,00 %")


def test_the_digest_on_the_sheet_is_recomputed_from_the_journal():
    """A posted sheet is matched to the journal: the terms the `pool.created` event recorded give
    the digest the sheet prints."""
    floor = make_floor(**ODD)
    event = AuditEvent.objects.get(kind="pool.created", payload__pool=floor.pool_id)
    recorded = event.payload
    terms = Terms(
        Pool.objects.get(pk=floor.pool_id).currency,
        recorded["stake_cents"],
        recorded["meter_share_bp"],
        recorded["reserve_share_bp"],
        recorded["seed_cents"],
        recorded["paytable_version"],
    )
    assert terms.digest[:12] in _page_text(floor.pool_id, "en")


def _close_tables(admin: Client, pool: int) -> None:
    for table in Table.objects.filter(pool_id=pool):
        response = admin.patch(
            f"/api/v1/tables/{table.pk}", {"enabled": False}, content_type="application/json"
        )
        assert response.status_code == 200, response.json()


def _sheets(pool: int) -> dict[str, object]:
    """Everything a posted sheet is: both pages' bodies, both PDFs' text, and their ETags."""
    found: dict[str, object] = {}
    for lang in ("fr", "en"):
        html, pdf = _html(pool, lang), _pdf(pool, lang)
        found[f"html-{lang}"] = html.content
        found[f"pdf-{lang}"] = _pdf_text(pool, lang)
        found[f"etag-{lang}"] = (html["ETag"], pdf["ETag"])
    return found


def test_the_sheet_changes_only_with_the_terms(floor: Floor):
    """Not a term (the sheet never shows them): the name, the verification threshold and
    surveillance (changed by two admins, the real way), the meter (a round played) and a
    suspension. A pool with other terms has another sheet."""
    before = _sheets(floor.pool_id)
    terminal = floor.uth[0]
    assert terminal.post("/rounds", {"round_id": "r-1", "seats": [uth_seat(1)]}).status_code == 201
    result = {"board": ["Kh", "2h", "2d", "7s", "9c"], "dealer": ["Ac", "Qd"]}
    settled = terminal.post("/rounds/r-1/result", {**result, "seats": [uth_play(1, "Kd Ks")]})
    assert settled.status_code == 200  # a full house: an award, the meter raised

    staff = api_clients(ana="admin", bob="admin")
    changes = {
        "name": "Renamed progressive",
        "verification_threshold_cents": 250_000,
        "surveillance_required": False,
    }
    proposed = staff["ana"].post(
        f"/api/v1/pools/{floor.pool_id}/changes",
        {"changes": changes, "reason": "not a term"},
        content_type="application/json",
    )
    assert proposed.status_code == 201, proposed.json()
    _close_tables(staff["ana"], floor.pool_id)
    approved = staff["bob"].post(
        f"/api/v1/pools/{floor.pool_id}/changes/{proposed.json()['id']}/approve",
        {},
        content_type="application/json",
    )
    assert approved.status_code == 200, approved.json()
    suspended = staff["ana"].post(
        f"/api/v1/pools/{floor.pool_id}/suspend",
        {"reason": "meter fault"},
        content_type="application/json",
    )
    assert suspended.status_code == 200, suspended.json()
    row = Pool.objects.get(pk=floor.pool_id)
    assert (row.name, row.verification_threshold_cents, row.status) == (
        "Renamed progressive",
        250_000,
        "suspended",
    )

    assert _sheets(floor.pool_id) == before

    other = make_floor(**ODD)
    assert _sheets(other.pool_id)["etag-fr"] != before["etag-fr"]
    assert _page_text(other.pool_id, "fr") != _page_text(floor.pool_id, "fr")


def test_a_stopped_pool_s_sheet_says_it_is_stopped(floor: Floor):
    running = _html(floor.pool_id, "en")
    staff = api_clients(ana="admin", bob="admin")
    proposed = staff["ana"].post(
        f"/api/v1/pools/{floor.pool_id}/stop",
        {"reason": "decommissioned", "to": "orphan", "voluntary": False},
        content_type="application/json",
    )
    assert proposed.status_code == 201, proposed.json()
    _close_tables(staff["ana"], floor.pool_id)
    approved = staff["bob"].post(
        f"/api/v1/pools/{floor.pool_id}/changes/{proposed.json()['id']}/approve",
        {},
        content_type="application/json",
    )
    assert approved.status_code == 200, approved.json()

    stopped = _html(floor.pool_id, "en")
    assert stopped["ETag"] != running["ETag"]
    for text in (_text(stopped.content.decode()), _pdf_text(floor.pool_id, "en")):
        assert "This progressive has been stopped since " in text
        assert "no progressive bet is taken" in text
    assert "est arrêté depuis le " in _pdf_text(floor.pool_id, "fr")
    assert "stopped since" not in _text(running.content.decode())


def test_etag_by_terms_and_language_and_304(floor: Floor, django_assert_num_queries):
    digest = _digest(floor.pool_id)
    first = _html(floor.pool_id, "fr")
    assert first["ETag"] == f'"rules-html-{digest}-fr"'
    assert first["Cache-Control"] == "public, no-cache"
    assert _html(floor.pool_id, "en")["ETag"] == f'"rules-html-{digest}-en"'
    assert _pdf(floor.pool_id, "en")["ETag"] == f'"rules-pdf-{digest}-en"'
    # A sign or a tablet polling: one pool row read, nothing else, and no body.
    with django_assert_num_queries(1):
        again = _html(floor.pool_id, "fr", If_None_Match=first["ETag"])
    assert again.status_code == 304 and again.content == b""
    assert again["ETag"] == first["ETag"]
    pdf = _pdf(floor.pool_id, "fr", If_None_Match=f'"rules-pdf-{digest}-fr"')
    assert pdf.status_code == 304
    # Another language's ETag is another resource's: the whole page comes back.
    assert _html(floor.pool_id, "en", If_None_Match=first["ETag"]).status_code == 200
    with django_assert_num_queries(1):
        assert _html(floor.pool_id, "fr").status_code == 200


def test_no_such_pool_is_a_404(floor: Floor):
    missing = floor.pool_id + 1000
    assert _html(missing).status_code == 404
    assert _pdf(missing, "en").status_code == 404


def test_the_sign_links_to_its_rules_in_its_language(floor: Floor):
    french = Client().get(f"/display/{floor.pool_id}/").content.decode()
    assert f'href="/display/{floor.pool_id}/rules?lang=fr">Règlement</a>' in french
    english = Client().get(f"/display/{floor.pool_id}/?lang=en").content.decode()
    assert f'href="/display/{floor.pool_id}/rules?lang=en">Rules</a>' in english
    page = _html(floor.pool_id, "en").content.decode()
    assert f'href="/display/{floor.pool_id}/rules.pdf?lang=en"' in page
    assert f'href="/display/{floor.pool_id}/rules?lang=fr"' in page
    assert not re.search(r"(src|href)=\"https?:", page)  # nothing from elsewhere
