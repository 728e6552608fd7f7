"""The sessions' staff page through Django's client: who sees it, its steps through
`tables.club`, the services' refusals as readable messages, the blind confirmation, CSRF.
(tests/browser/test_sessions.py walks the same story in a real browser.)"""

from __future__ import annotations

import pytest
from django.test import Client

from floor.amounts import cents_from_text
from tables.models import ClubSession, DropCount
from tests.conftest import make_floor
from tests.staff import code, enrolled, person, signed_in
from tests.tables.club.story import play

pytestmark = pytest.mark.django_db

LIST = "/floor/sessions/"


def _post(client: Client, url: str, **form: str):
    return client.post(url, form)


@pytest.fixture
def crew(settings):
    settings.STAFF_SECOND_FACTOR_REQUIRED = True
    return {
        "ana": enrolled("ana", "supervisor"),
        "bob": enrolled("bob", "manager"),
        "ida": person("ida", "auditor"),
    }


def test_only_supervisors_and_managers_see_the_page(crew):
    refused = signed_in(crew["ida"]).get(LIST)
    assert refused.status_code == 403
    assert "réservée aux superviseurs" in refused.content.decode()
    assert Client().get(LIST).status_code == 302  # to the login page
    page = signed_in(crew["ana"]).get(LIST + "?lang=en")
    assert page.status_code == 200
    assert 'id="open-session"' in page.content.decode()
    assert '<a href="/floor/sessions/" aria-current="page">Sessions</a>' in page.content.decode()


def test_a_post_without_the_csrf_token_is_refused(crew):
    client = Client(enforce_csrf_checks=True)
    client.force_login(crew["ana"])
    assert client.post(LIST, {"action": "open"}).status_code == 403
    assert not ClubSession.objects.exists()


def test_open_close_count_and_a_blind_confirmation(crew):
    ana, bob = signed_in(crew["ana"]), signed_in(crew["bob"])
    floor = make_floor(1)
    opened = _post(ana, LIST, action="open")
    assert opened.status_code == 303
    session = ClubSession.objects.get()
    assert "Séance n° 1 ouverte." in ana.get(opened["Location"]).content.decode()
    again = _post(bob, LIST, action="open")
    assert again.status_code == 409
    assert "une séance est déjà ouverte" in again.content.decode()

    play(floor.uth[0], "r1", 3)  # 1 500 cents withheld
    url = f"/floor/sessions/{session.pk}/"
    assert _post(ana, url, action="close").status_code == 303
    table = str(floor.uth[0].table_id)
    unread = _post(ana, url, action="count", table=table, counted="quinze")
    assert unread.status_code == 400 and "montant illisible" in unread.content.decode()
    assert _post(ana, url, action="count", table=table, counted="14,50").status_code == 303

    page = bob.get(url).content.decode()
    assert 'data-state="to_confirm"' in page and "14,50" not in page  # blind: no count shown
    own = _post(ana, url, action="confirm", table=table, counted="14,50", second_factor_code="1")
    assert own.status_code == 403  # ana's code is not hers now: the code is checked first
    mine = _post(
        ana,
        url,
        action="confirm",
        table=table,
        counted="14,50",
        second_factor_code=code(crew["ana"]),
    )
    assert mine.status_code == 403 and "ne peut pas confirmer son propre" in mine.content.decode()
    differs = _post(
        bob,
        url,
        action="confirm",
        table=table,
        counted="14,00",
        second_factor_code=code(crew["bob"]),
    )
    assert differs.status_code == 409 and "diffère du premier" in differs.content.decode()
    assert DropCount.objects.get().confirmed_at is None
    done = _post(
        bob,
        url + "?lang=en",
        action="confirm",
        table=table,
        counted="14.50",
        second_factor_code=code(crew["bob"], steps_ahead=1),
    )
    assert done.status_code == 303
    shown = bob.get(done["Location"]).content.decode()
    assert 'data-state="difference"' in shown and "SE19" in shown and "\u2212€0.50" in shown
    assert (DropCount.objects.get().difference_cents, DropCount.objects.get().confirmed_by) == (
        -50,
        "user:bob",
    )


@pytest.mark.parametrize(
    ("typed", "lang", "cents"),
    [
        ("1 250,00", "fr", 125_000),
        ("1250.5", "fr", 125_050),
        ("0,07", "fr", 7),
        ("1,250.00", "en", 125_000),
        ("€12", "en", 1_200),
        ("12.30 €", "fr", 1_230),
    ],
)
def test_amounts_are_read_as_cents(typed, lang, cents):
    assert cents_from_text(typed, lang) == cents


@pytest.mark.parametrize(
    ("typed", "lang"),
    [("-5", "fr"), ("1,234", "fr"), ("1.234", "en"), ("1,25", "en"), ("", "fr"), ("12,345", "fr")],
)
def test_an_amount_that_cannot_be_read_is_refused(typed, lang):
    with pytest.raises(ValueError):
        cents_from_text(typed, lang)
