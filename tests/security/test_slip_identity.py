"""The winner's name on the payment slip (issue 37 item 7; compliance 50).

The slip (HTML and PDF) prints the winner's name and masked document only to those who may read
identities, auditors and admins, and to the supervisor who paid the award; every such read is
one security-log line naming the reader and the award, never the name. Anyone else who may open
the slip (another supervisor, a manager who did not pay, surveillance) sees it withheld, and no
read is logged for them. An insider who edits by SQL the rows that say who paid is not the payer.
"""

from __future__ import annotations

import io
import logging

import pypdf
import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from jackpot.awards.workflow import award_approve, award_verify
from jackpot.models import AuditEvent, WinnerIdentity
from tests.floor.conftest import play_hit
from tests.staff import person, signed_in, surveilled
from tests.winners import DOCUMENT, NAME, pay_identified

pytestmark = pytest.mark.django_db

SECURITY = "jackpot.security"
MASKED = "*" * (len(DOCUMENT) - 3) + DOCUMENT[-3:]
WITHHELD = {
    "en": "identity withheld: auditors and the paying supervisor only",
    "fr": "identité non communiquée : réservée aux auditeurs et au superviseur qui a payé",
}


@pytest.fixture
def paid(floor) -> int:
    """A jackpot verified by ana, reviewed by sam (surveillance), approved and paid by bob with
    the winner identified; cal (supervisor), max (manager), ida (auditor) and root (admin)
    had no hand in it."""
    jackpot, _ = play_hit(floor.uth[0])
    ana, bob = person("ana", "supervisor"), person("bob", "supervisor")
    for name, role in (("cal", "supervisor"), ("max", "manager"), ("ida", "auditor")):
        person(name, role)
    person("root", "admin")
    award_verify(award_id=jackpot["id"], user=ana, note="video checked")
    surveilled(jackpot["id"])
    award_approve(award_id=jackpot["id"], user=bob)
    pay_identified(jackpot["id"], bob)
    return int(jackpot["id"])


def _client(name: str) -> Client:
    return signed_in(User.objects.get(username=name))


def _pdf_text(content: bytes) -> str:
    reader = pypdf.PdfReader(io.BytesIO(content))
    return "\n".join(page.extract_text() for page in reader.pages)


def _slip(name: str, award: int, lang: str) -> tuple[str, str]:
    """The slip's HTML and its PDF's text, as `name` opens them."""
    client = _client(name)
    page = client.get(f"/floor/awards/{award}/slip/?lang={lang}")
    pdf = client.get(f"/floor/awards/{award}/slip.pdf?lang={lang}")
    assert page.status_code == 200 and pdf.status_code == 200, name
    return page.content.decode(), _pdf_text(pdf.content)


def _reads(caplog) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == SECURITY and "winner identit" in record.getMessage()
    ]


@pytest.mark.parametrize("name", ["ana", "cal", "max", "sam"])
def test_who_did_not_pay_sees_the_identity_withheld_and_no_read_is_logged(paid, caplog, name):
    with caplog.at_level(logging.DEBUG):
        for lang in ("en", "fr"):
            html, pdf = _slip(name, paid, lang)
            for text in (html, pdf):
                assert NAME not in text and MASKED not in text and DOCUMENT not in text
            assert f'<td class="">{WITHHELD[lang]}</td>' in html
            assert WITHHELD[lang] in " ".join(pdf.split())
            assert 'data-row="document"' not in html
    assert _reads(caplog) == []


@pytest.mark.parametrize("name", ["bob", "ida", "root"])
def test_the_payer_an_auditor_and_an_admin_read_it_and_each_read_is_logged(paid, caplog, name):
    events = AuditEvent.objects.count()
    with caplog.at_level(logging.DEBUG):
        html, pdf = _slip(name, paid, "en")
    assert f'<td class="">{NAME}</td>' in html and f"passport no. {MASKED}" in html
    assert NAME in pdf and MASKED in pdf and DOCUMENT not in html + pdf
    # One line a read, the page's and the PDF's: who and which award, as the API's reads.
    line = f"winner identity of award {paid} read by user:{name}"
    assert _reads(caplog) == [line, line]
    assert AuditEvent.objects.count() == events  # a read writes nothing to the journal


def test_the_name_is_in_no_log_line(paid, caplog):
    with caplog.at_level(logging.DEBUG):
        for name in ("bob", "ida", "root", "cal", "sam"):
            _slip(name, paid, "en")
            _slip(name, paid, "fr")
        _client("ida").get(f"/api/v1/awards/{paid}/winner")
    assert len(_reads(caplog)) >= 6
    for record in caplog.records:
        line = f"{record.getMessage()} {record.args!r} {record.__dict__!r}"
        assert NAME not in line and DOCUMENT not in line and MASKED not in line, record.name


def test_an_insider_who_writes_himself_as_the_payer_by_sql_reads_nothing(paid, caplog):
    """cal (a supervisor) rewrites the award's payer and, triggers aside, the identity row's
    recorder to himself: the payment's event still names bob, so the slip withholds it."""
    cal = _client("cal")
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE jackpot_winneridentity DISABLE TRIGGER USER")
        cursor.execute(
            "UPDATE jackpot_winneridentity SET recorded_by_id = "
            "(SELECT id FROM auth_user WHERE username = 'cal') WHERE award_id = %s",
            [paid],
        )
        cursor.execute("ALTER TABLE jackpot_winneridentity ENABLE TRIGGER USER")
        cursor.execute(
            "UPDATE jackpot_award SET paid_by_id = "
            "(SELECT id FROM auth_user WHERE username = 'cal') WHERE id = %s",
            [paid],
        )
    assert WinnerIdentity.objects.get(award_id=paid).recorded_by.username == "cal"
    with caplog.at_level(logging.DEBUG):
        html = cal.get(f"/floor/awards/{paid}/slip/?lang=en").content.decode()
        pdf = _pdf_text(cal.get(f"/floor/awards/{paid}/slip.pdf").content)
    assert NAME not in html + pdf and MASKED not in html + pdf
    assert WITHHELD["en"] in html
    assert _reads(caplog) == []
