"""A paid award's payment slip: `/floor/awards/<id>/slip/` (HTML, printed by the browser on A5
or, with `?paper=a4`, A4) and `/floor/awards/<id>/slip.pdf` (the same slip drawn server side for
the register), in French or English.

The fields are the French register's (arrêté of 14 May 2007; compliance requirement 34): club,
game, table, round, seat, the winning combination, the amount in figures and in words, the date
and time, who verified, surveillance's video review (who, when, the camera, the footage range,
the verdict), who approved and paid, and the award's two entries in the journal (the grant
and the payment: chain, position and hash). Both renderings print the same rows (`slip_rows`),
read by `jackpot.selectors.payment_slip`; there is a slip only for a paid award (404 otherwise,
saying why), for staff with a role.

The winner's name and masked document (compliance 50) are printed only for those who may read
identities, auditors and admins (`IDENTITY_READERS`), and for the supervisor or manager who paid
the award and typed them (`jackpot.awards.winners.paid_and_recorded_by`): they hand the slip to the
winner to sign. Each such read, HTML or PDF, is written to the security log as the auditors'
endpoint writes it (who, which award, never the identity); anyone else sees it withheld.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import datetime
from xml.sax.saxutils import escape

from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, A5
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
from reportlab.platypus.flowables import Flowable

from core.pages import page_language
from floor.amounts import amount_in_figures, amount_in_words
from floor.floor import QUEUE_TEXT
from floor.layout import staff_only, staff_page
from jackpot.api.authentication import has_role
from jackpot.awards import winners
from jackpot.selectors import NoSlip, PaymentSlip, payment_slip
from tables.models import Game

PAPERS = {"a5": A5, "a4": A4}
#: Who reads the winner's identity on any slip (as on `GET /api/v1/awards/{id}/winner`).
IDENTITY_READERS = ("auditor", "admin")
#: Who reads it on the slip of an award they paid themselves.
PAYERS = ("supervisor", "manager")

SLIP_TEXT: dict[str, dict[str, str]] = {
    "fr": {
        "title": "Bordereau de paiement",
        "heading": "Bordereau de paiement · gain n° {id}",
        "club": "Établissement",
        "pool": "Jackpot",
        "game": "Jeu",
        "table": "Table",
        "round": "Partie",
        "seat": "Siège",
        "kind": "Gain",
        "combination": "Combinaison gagnante",
        "cards": "Cartes du joueur · tableau",
        "amount": "Montant",
        "amount_words": "Montant en lettres",
        "won_at": "Gagné le",
        "verified": "Vérifié par",
        "review": "Revue vidéo",
        "reviewed": "{verdict} par {user}, le {when} · caméra {camera}, images du {start} au {end}",
        "verdict_confirmed": "confirmé",
        "verdict_referred": "signalé",
        "review_reason": " · motif « {reason} »",
        "review_decision": " · signalement levé par {user} le {when} : « {reason} »",
        "no_review": "aucune",
        "approved": "Approuvé par",
        "paid": "Payé par",
        "method": "Mode de paiement",
        "reference": "Référence",
        "winner": "Gagnant",
        "document": "Pièce d'identité",
        "document_line": "{type} n° {number}",
        "methods": "cash:espèces|cheque:chèque|bank_transfer:virement",
        "documents": "identity_card:carte d'identité|passport:passeport|"
        "residence_permit:titre de séjour|driving_licence:permis de conduire",
        "unidentified": "non identifié (sous le seuil d'identification)",
        "withheld": "identité non communiquée : réservée aux auditeurs et au superviseur qui a "
        "payé",
        "granted": "Écriture du gain",
        "payment": "Écriture du paiement",
        "entry": "{chain} n° {sequence}",
        "hash": "empreinte {hash}",
        "by": "{user}, le {when}",
        "note": " · « {note} »",
        "none": "aucune (La Garantie : le jackpot d'un autre siège de la table)",
        "signatures": "Caissier|Responsable de salle|Joueur",
        "print": "Imprimer",
        "pdf": "PDF",
        "back": "Retour aux gains",
        "paper": "Format {paper}",
        "no_slip_title": "Pas de bordereau",
        "no_award": "Il n'existe pas de gain n° {id}.",
        "not_paid": "Le gain n° {id} est « {status} » : un bordereau n'est établi qu'une fois le "
        "gain payé.",
        "void": "annulé",
        "date": "%d/%m/%Y à %H:%M:%S %Z",
    },
    "en": {
        "title": "Payment slip",
        "heading": "Payment slip · award #{id}",
        "club": "Club",
        "pool": "Jackpot",
        "game": "Game",
        "table": "Table",
        "round": "Round",
        "seat": "Seat",
        "kind": "Award",
        "combination": "Winning combination",
        "cards": "Player's cards · board",
        "amount": "Amount",
        "amount_words": "Amount in words",
        "won_at": "Won at",
        "verified": "Verified by",
        "review": "Video review",
        "reviewed": "{verdict} by {user}, {when} · camera {camera}, footage {start} to {end}",
        "verdict_confirmed": "confirmed",
        "verdict_referred": "referred",
        "review_reason": ' · reason "{reason}"',
        "review_decision": ' · referral cleared by {user}, {when}: "{reason}"',
        "no_review": "none",
        "approved": "Approved by",
        "paid": "Paid by",
        "method": "Payment method",
        "reference": "Reference",
        "winner": "Winner",
        "document": "Identity document",
        "document_line": "{type} no. {number}",
        "methods": "cash:cash|cheque:cheque|bank_transfer:bank transfer",
        "documents": "identity_card:identity card|passport:passport|"
        "residence_permit:residence permit|driving_licence:driving licence",
        "unidentified": "not identified (below the identification threshold)",
        "withheld": "identity withheld: auditors and the paying supervisor only",
        "granted": "Journal entry of the award",
        "payment": "Journal entry of the payment",
        "entry": "{chain} #{sequence}",
        "hash": "hash {hash}",
        "by": "{user}, {when}",
        "note": ' · "{note}"',
        "none": "none (envy bonus: another seat's jackpot at the table)",
        "signatures": "Cashier|Floor manager|Player",
        "print": "Print",
        "pdf": "PDF",
        "back": "Back to the awards",
        "paper": "{paper} paper",
        "no_slip_title": "No slip",
        "no_award": "There is no award #{id}.",
        "not_paid": "Award #{id} is '{status}': a slip is made only once the award is paid.",
        "void": "void",
        "date": "%d/%m/%Y %H:%M:%S %Z",
    },
}


@dataclass(frozen=True, slots=True)
class SlipRow:
    key: str
    label: str
    value: str


def _when(moment: datetime | None, lang: str) -> str:
    return "" if moment is None else timezone.localtime(moment).strftime(SLIP_TEXT[lang]["date"])


def _review(slip: PaymentSlip, lang: str) -> str:
    """Surveillance's latest review: verdict, who, when, the camera and the footage range; a
    referral's reason and the manager who cleared it (a paid award's referral was cleared)."""
    text = SLIP_TEXT[lang]
    review = slip.award.review
    if review is None:
        return text["no_review"]
    value = text["reviewed"].format(
        verdict=text[f"verdict_{review.verdict}"],
        user=review.reviewer,
        when=_when(review.reviewed_at, lang),
        camera=review.camera,
        start=_when(review.from_, lang),
        end=_when(review.to, lang),
    )
    if review.reason:
        value += text["review_reason"].format(reason=review.reason)
    if review.decision is not None:
        value += text["review_decision"].format(
            user=review.decision.decided_by,
            when=_when(review.decision.decided_at, lang),
            reason=review.decision.reason,
        )
    return value


def slip_rows(slip: PaymentSlip, lang: str) -> list[SlipRow]:
    """The slip's rows, in order, in `lang`: what the HTML page and the PDF both print."""
    text = SLIP_TEXT[lang]
    award = slip.award
    people = []
    for key, user, moment in (
        ("verified", award.verified_by, award.verified_at),
        ("approved", award.approved_by, award.approved_at),
        ("paid", award.paid_by, award.paid_at),
    ):
        value = text["by"].format(user=user, when=_when(moment, lang)) if user else ""
        note = {
            "verified": award.verification_note,
            "approved": award.approval_note,
            "paid": award.payment_note,
        }[key]
        if user and note:
            value += text["note"].format(note=note)
        people.append(SlipRow(key, text[key], value))
        if key == "verified" and (award.review is not None or award.surveillance_required):
            people.append(SlipRow("review", text["review"], _review(slip, lang)))
    dealt = " ".join(award.cards) + (f" · {' '.join(award.board)}" if award.board else "")
    rows = [
        SlipRow("club", text["club"], slip.club),
        SlipRow("pool", text["pool"], slip.pool_name),
        SlipRow("game", text["game"], Game(award.game).label),
        SlipRow("table", text["table"], award.table_name),
        SlipRow("round", text["round"], award.round_id),
        SlipRow("seat", text["seat"], str(award.seat)),
        SlipRow("kind", text["kind"], QUEUE_TEXT[lang][award.kind]),
        SlipRow("combination", text["combination"], " ".join(award.winning_five) or text["none"]),
        SlipRow("cards", text["cards"], dealt),
        SlipRow("amount", text["amount"], amount_in_figures(award.due_cents, slip.currency, lang)),
        SlipRow(
            "amount_words",
            text["amount_words"],
            amount_in_words(award.due_cents, slip.currency, lang),
        ),
        SlipRow("won_at", text["won_at"], _when(award.created_at, lang)),
        *people,
    ]
    method = award.payment_method.value if award.payment_method else ""
    rows += [
        SlipRow("method", text["method"], _named(text["methods"]).get(method, method)),
        SlipRow("reference", text["reference"], award.payment_reference or "-"),
    ]
    winner = slip.winner
    if slip.winner_withheld:
        rows.append(SlipRow("winner", text["winner"], text["withheld"]))
    elif winner is None:
        rows.append(SlipRow("winner", text["winner"], text["unidentified"]))
    else:
        kind = _named(text["documents"])[winner.document_type.value]
        line = text["document_line"].format(type=kind, number=winner.document_masked)
        rows += [
            SlipRow("winner", text["winner"], winner.name),
            SlipRow("document", text["document"], line),
        ]
    for key, event in (("granted", slip.granted), ("payment", slip.paid)):
        entry = text["entry"].format(chain=event.chain, sequence=event.sequence)
        rows.append(SlipRow(key, text[key], f"{entry} · {text['hash'].format(hash=event.hash)}"))
    return rows


def _named(pairs: str) -> dict[str, str]:
    """`"value:label|value:label"` as a dict."""
    return dict(pair.split(":", 1) for pair in pairs.split("|"))


def _paper(request: HttpRequest) -> str:
    return "a4" if request.GET.get("paper") == "a4" else "a5"


def _identity_reader(user: User | AnonymousUser, award_id: int) -> str | None:
    """`user:<name>` when `user` may read the winner's identity on this award's slip (an
    auditor or admin; the supervisor or manager who paid it), else None: withheld."""
    if not isinstance(user, User):
        return None
    if has_role(user, *IDENTITY_READERS) or (
        has_role(user, *PAYERS) and winners.paid_and_recorded_by(award_id, user)
    ):
        return f"user:{user.get_username()}"
    return None


def _no_slip(request: HttpRequest, refused: NoSlip, lang: str) -> HttpResponse:
    text = SLIP_TEXT[lang]
    if refused.status is None:
        why = text["no_award"].format(id=refused.award_id)
    else:
        status = QUEUE_TEXT[lang].get(f"status_{refused.status}") or text[refused.status]
        why = text["not_paid"].format(id=refused.award_id, status=status)
    return staff_page(
        request,
        "floor/refused.html",
        {"refusal_title": text["no_slip_title"], "refusal": why},
        lang=lang,
        text={},
        status=404,
    )


@staff_only
def slip_page(request: HttpRequest, award: int) -> HttpResponse:
    lang = page_language(request)
    try:
        slip = payment_slip(award, reader=_identity_reader(request.user, award))
    except NoSlip as refused:
        return _no_slip(request, refused, lang)
    paper = _paper(request)
    other = "a4" if paper == "a5" else "a5"
    text = SLIP_TEXT[lang]
    context = {
        "rows": slip_rows(slip, lang),
        "award": slip.award,
        "heading": text["heading"].format(id=slip.award.id),
        "signatures": text["signatures"].split("|"),
        "paper": paper,
        "other_paper": other,
        "other_paper_label": text["paper"].format(paper=other.upper()),
        "pdf_url": f"{reverse('floor-slip-pdf', kwargs={'award': award})}?paper={paper}",
        "queue_url": reverse("floor-awards"),
    }
    return staff_page(
        request,
        "floor/slip.html",
        context,
        lang=lang,
        text=text,
        script="slip.js",
        extra_style=f"slip-{paper}.css",
    )


def slip_pdf_bytes(slip: PaymentSlip, lang: str, paper: str = "a5") -> bytes:
    """The slip as a PDF document (reportlab's standard fonts: the text is Latin-1, the cards
    are written as the API writes them, `Ah`)."""
    text = SLIP_TEXT[lang]
    buffer = io.BytesIO()
    small = paper == "a5"
    margin = (10 if small else 15) * mm
    document = SimpleDocTemplate(
        buffer,
        pagesize=PAPERS[paper],
        leftMargin=margin,
        rightMargin=margin,
        topMargin=margin,
        bottomMargin=margin,
        title=text["heading"].format(id=slip.award.id),
        author=slip.club,
        subject=text["title"],
    )
    size = 8.5 if small else 10
    body = ParagraphStyle("body", fontName="Helvetica", fontSize=size, leading=size * 1.25)
    label = ParagraphStyle("label", parent=body, fontName="Helvetica-Bold")
    title = ParagraphStyle(
        "title", parent=body, fontName="Helvetica-Bold", fontSize=size * 1.6, leading=size * 2
    )
    width = document.width
    rows = [
        [Paragraph(escape(row.label), label), Paragraph(escape(row.value), body)]
        for row in slip_rows(slip, lang)
    ]
    table = Table(rows, colWidths=[width * 0.3, width * 0.7])
    table.setStyle(
        TableStyle(
            [
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LINEBELOW", (0, 0), (-1, -1), 0.3, colors.grey),
                ("TOPPADDING", (0, 0), (-1, -1), 2),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
            ]
        )
    )
    signatures = Table(
        [[Paragraph(escape(name), body) for name in text["signatures"].split("|")]],
        colWidths=[width / 3] * 3,
        rowHeights=[18 * mm],
    )
    signatures.setStyle(
        TableStyle(
            [
                ("LINEABOVE", (0, 0), (-1, 0), 0.6, colors.black),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    story: list[Flowable] = [
        Paragraph(escape(text["heading"].format(id=slip.award.id)), title),
        Paragraph(escape(slip.club), label),
        Spacer(1, 3 * mm),
        table,
        Spacer(1, 10 * mm),
        signatures,
    ]
    document.build(story)
    return buffer.getvalue()


@staff_only
def slip_pdf(request: HttpRequest, award: int) -> HttpResponse:
    lang = page_language(request)
    try:
        slip = payment_slip(award, reader=_identity_reader(request.user, award))
    except NoSlip as refused:
        return _no_slip(request, refused, lang)
    response = HttpResponse(
        slip_pdf_bytes(slip, lang, _paper(request)), content_type="application/pdf"
    )
    response["Content-Disposition"] = f'inline; filename="slip-{award}.pdf"'
    response["Cache-Control"] = "no-store"
    return response
