"""The French register of paid awards for a period, with each winner's name: CSV and PDF.

What the register holds (arrêté of 14 May 2007; anti-money-laundering for the winner's name):
per award PAID in the period (`paid_at` in [from, to)), oldest payment first: game, table, round,
seat, the combination and its cards, the date and time of the payment, the amount, the winner's
name (decrypted, `jackpot.awards.winners`; empty below the identification threshold when none was
given), the method and reference of the payment, the cashier (who paid) and the approver (the
manager who approved; for an award approved at once, none). The PDF ends with the period's count
and sum and the lines where the cashier and a manager sign.

Invariants: one row per paid award of the period, each with the amount its `award.paid` event
moved, so the register's count and sum equal the journal's `award_paid` transfers of the period
(tests/jackpot/awards/test_winners.py checks it to the cent); every CSV cell is spreadsheet-safe
(`jackpot.reporting.exports.spreadsheet_safe`). Read only (the auditors' endpoints run it on the
replica).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import UTC, datetime
from xml.sax.saxutils import escape

from django.conf import settings
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
from reportlab.platypus.flowables import Flowable

from jackpot.awards import winners
from jackpot.models import Award, AwardStatus
from jackpot.reporting.exports import spreadsheet_safe

HEADER = (
    "award_id",
    "paid_at_utc",
    "game",
    "table",
    "round",
    "seat",
    "combination",
    "hole_cards",
    "board",
    "amount_cents",
    "currency",
    "winner_name",
    "payment_method",
    "payment_reference",
    "cashier",
    "approver",
)


@dataclass(frozen=True, slots=True)
class RegisterRow:
    award: int
    paid_at: datetime
    game: str
    table: str
    round: str
    seat: int
    combination: str
    hole_cards: str
    board: str
    amount_cents: int
    currency: str
    winner_name: str
    payment_method: str
    payment_reference: str
    cashier: str
    approver: str

    def cells(self) -> tuple[object, ...]:
        return (
            self.award,
            self.paid_at.astimezone(UTC).isoformat(),
            self.game,
            self.table,
            self.round,
            self.seat,
            self.combination,
            self.hole_cards,
            self.board,
            self.amount_cents,
            self.currency,
            self.winner_name,
            self.payment_method,
            self.payment_reference,
            self.cashier,
            self.approver,
        )


def register_rows(start: datetime, end: datetime, *, reader: str) -> list[RegisterRow]:
    """The awards paid in [start, end), oldest payment first, with their winners' names (the
    read of their identities by `reader` written to the security log)."""
    awards = list(
        Award.objects.filter(status=AwardStatus.PAID, paid_at__gte=start, paid_at__lt=end)
        .select_related("pool", "approved_by", "paid_by")
        .order_by("paid_at", "pk")
    )
    names = winners.identities((award.pk for award in awards), reader=reader)
    rows = []
    for award in awards:
        assert award.paid_at is not None  # a paid award's time of payment
        rows.append(
            RegisterRow(
                award=award.pk,
                paid_at=award.paid_at,
                game=award.game,
                table=award.table_name,
                round=award.round_name,
                seat=award.seat,
                combination=award.kind,
                hole_cards=" ".join(award.hole_cards),
                board=" ".join(award.board),
                amount_cents=award.due_cents,  # what was paid: its corrections included
                currency=award.pool.currency,
                winner_name=names.get(award.pk, {}).get("name", ""),
                payment_method=award.payment_method,
                payment_reference=award.payment_reference,
                cashier=award.paid_by.get_username() if award.paid_by else "",
                approver=award.approved_by.get_username() if award.approved_by else "",
            )
        )
    return rows


def register_csv(rows: list[RegisterRow]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows([spreadsheet_safe(cell) for cell in row.cells()] for row in rows)
    return buffer.getvalue()


def _euros(cents: int) -> str:
    euros, rest = divmod(cents, 100)
    return f"{euros:,}.{rest:02d}".replace(",", " ")


def register_pdf(rows: list[RegisterRow], start: datetime, end: datetime) -> bytes:
    """The register as a PDF (A4 landscape, bilingual labels) with the cashier's and a
    manager's signature lines."""
    buffer = io.BytesIO()
    document = SimpleDocTemplate(
        buffer,
        pagesize=landscape(A4),
        leftMargin=12 * mm,
        rightMargin=12 * mm,
        topMargin=12 * mm,
        bottomMargin=12 * mm,
        title="Registre des gains · Register of awards",
        author=settings.CLUB_NAME,
    )
    body = ParagraphStyle("body", fontName="Helvetica", fontSize=7.5, leading=9)
    bold = ParagraphStyle("bold", parent=body, fontName="Helvetica-Bold")
    title = ParagraphStyle("title", parent=body, fontName="Helvetica-Bold", fontSize=13, leading=16)
    labels = (
        "N°",
        "Payé le (UTC) · Paid at",
        "Jeu · Game",
        "Table",
        "Siège · Seat",
        "Combinaison · Combination",
        "Cartes · Cards",
        "Montant · Amount",
        "Gagnant · Winner",
        "Paiement · Payment",
        "Caissier · Cashier",
        "Approuvé par · Approver",
    )
    lines: list[list[Flowable]] = [[Paragraph(escape(label), bold) for label in labels]]
    for row in rows:
        payment = row.payment_method + (
            f" {row.payment_reference}" if row.payment_reference else ""
        )
        cells = (
            str(row.award),
            row.paid_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
            row.game,
            row.table,
            str(row.seat),
            row.combination,
            f"{row.hole_cards} · {row.board}" if row.board else row.hole_cards,
            f"{_euros(row.amount_cents)} {row.currency}",
            row.winner_name,
            payment,
            row.cashier,
            row.approver,
        )
        lines.append([Paragraph(escape(cell), body) for cell in cells])
    width = document.width
    shares = (4, 11, 5, 8, 4, 9, 12, 9, 12, 10, 8, 8)
    table = Table(lines, colWidths=[width * share / sum(shares) for share in shares], repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LINEBELOW", (0, 0), (-1, -1), 0.3, colors.grey),
                ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eeeeee")),
            ]
        )
    )
    total = sum(row.amount_cents for row in rows)
    signatures = Table(
        [
            [
                Paragraph("Le caissier · The cashier", body),
                Paragraph("Le responsable · The manager", body),
            ]
        ],
        colWidths=[width / 2.5] * 2,
        rowHeights=[20 * mm],
        hAlign="LEFT",
        spaceBefore=10 * mm,
    )
    signatures.setStyle(TableStyle([("LINEABOVE", (0, 0), (-1, 0), 0.6, colors.black)]))
    period = f"{start.astimezone(UTC):%Y-%m-%d %H:%M} to {end.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    story: list[Flowable] = [
        Paragraph("Registre des gains payés · Register of paid awards", title),
        Paragraph(escape(f"{settings.CLUB_NAME} · {period}"), bold),
        Spacer(1, 4 * mm),
        table,
        Spacer(1, 3 * mm),
        Paragraph(escape(f"{len(rows)} gains · awards, total {_euros(total)}"), bold),
        signatures,
    ]
    document.build(story)
    return buffer.getvalue()
