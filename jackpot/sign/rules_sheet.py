"""The progressive's rules as posted at each table (compliance 56; arrêté of 14 May 2007, art.
56-3-1 and 66-2): one sheet per pool, French and English, as data, then as a page and an A4 PDF.

Invariants:
- the sheet is a function of the pool's increment terms (`Terms`), the date they took effect and
  whether the pool is stopped, nothing else: its name, verification threshold, surveillance,
  meter or suspension leave it byte for byte the same;
- every figure comes from integer cents (or 1/10,000-cent units) by integer arithmetic;
- `Terms.digest` is the SHA-256 of the terms' canonical JSON (`jackpot.money.canonical`): the
  sheet prints its first 12 hex, and the HTTP pages use it as their ETag;
- it reads one pool row (`posted_terms`), never the journal.
"""

from __future__ import annotations

import functools
import io
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal
from xml.sax.saxutils import escape

from django.conf import settings
from django.utils import timezone
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.platypus import KeepTogether, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle
from reportlab.platypus.flowables import Flowable

from jackpot.models import UNITS_PER_CENT, Pool, PoolStatus
from jackpot.money.canonical import fingerprint
from rules.paytables import ProgressiveSchedule, get_progressive_paytable

Lang = Literal["fr", "en"]

#: Bumped when the terms' JSON changes shape, so that two shapes never share a digest.
TERMS_FORMAT = 1
DIGEST_SHOWN = 12  # hex characters printed on the sheet: enough to tell two sheets apart
_UNITS_PER_EURO = 100 * UNITS_PER_CENT


@dataclass(frozen=True, slots=True)
class Terms:
    """A progressive's increment terms: what a player's stake does and what it can win."""

    currency: str
    stake_cents: int
    meter_share_bp: int
    reserve_share_bp: int
    seed_cents: int
    paytable_version: str

    @property
    def house_share_bp(self) -> int:
        return 10_000 - self.meter_share_bp - self.reserve_share_bp

    @property
    def paytable(self) -> ProgressiveSchedule:
        return get_progressive_paytable(self.paytable_version)

    def canonical(self) -> dict[str, Any]:
        """The terms as JSON values, the paytable's amounts written out (its version pins them,
        but a reader of the sheet can then recompute the digest from the sheet alone)."""
        paytable = self.paytable
        return {
            "format": TERMS_FORMAT,
            "currency": self.currency,
            "stake_cents": self.stake_cents,
            "meter_share_bp": self.meter_share_bp,
            "reserve_share_bp": self.reserve_share_bp,
            "house_share_bp": self.house_share_bp,
            "seed_cents": self.seed_cents,
            "units_per_cent": UNITS_PER_CENT,
            "rounding": "meter and reserve in units; shown and paid rounded down to the cent",
            "paytable_version": self.paytable_version,
            "jackpot_percent_bp": paytable.jackpot_percent_bp,
            "community_royal_cents": paytable.community_royal_cents,
            "straight_flush_cents": paytable.straight_flush_cents,
            "four_of_a_kind_cents": paytable.four_of_a_kind_cents,
            "full_house_cents": paytable.full_house_cents,
            "envy_cents": paytable.envy_cents,
        }

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of the canonical terms JSON."""
        return fingerprint(self.canonical())


@dataclass(frozen=True, slots=True)
class Posted:
    """What a pool's sheet is made from: its number, terms, since when, and its stop if any."""

    pool_id: int
    terms: Terms
    since: datetime
    stopped_since: datetime | None

    @property
    def version(self) -> str:
        """What the sheet depends on, for an ETag: the terms' digest and whether it is stopped."""
        return self.terms.digest[:DIGEST_SHOWN] + ("-stopped" if self.stopped_since else "")


def posted_terms(pool_id: int) -> Posted | None:
    """The pool's posted terms from its one row; None: no such pool.

    Since when: the pool's creation. Domain.md settles that new terms mean a new progressive (a
    new pool), so a pool's terms are those it was created with."""
    row = (
        Pool.objects.filter(pk=pool_id)
        .values_list(
            "currency",
            "stake_cents",
            "meter_share_bp",
            "reserve_share_bp",
            "seed_cents",
            "paytable_version",
            "created_at",
            "status",
            "status_since",
        )
        .first()
    )
    if row is None:
        return None
    currency, stake, meter_bp, reserve_bp, seed, paytable, created, status, status_since = row
    terms = Terms(currency, stake, meter_bp, reserve_bp, seed, paytable)
    stopped = (status_since or created) if status == PoolStatus.STOPPED else None
    return Posted(pool_id, terms, created, stopped)


# --- the content --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Line:
    """A sentence, or a row of a list with its figure beside it (`figure`)."""

    text: str
    figure: str = ""


@dataclass(frozen=True, slots=True)
class Section:
    heading: str
    lines: tuple[Line, ...]


@dataclass(frozen=True, slots=True)
class RulesSheet:
    lang: Lang
    title: str
    subtitle: str
    stopped: str  # the stop's notice, "" while the progressive runs
    since: str  # "Terms in force since ..."
    digest: str  # the digest line
    sections: tuple[Section, ...]


# The months, as each language writes a date.
_MONTHS = {
    "fr": (
        "janvier",
        "février",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "août",
        "septembre",
        "octobre",
        "novembre",
        "décembre",
    ),
    "en": (
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ),
}


def money(units: int, currency: str, lang: Lang) -> str:
    """An amount of 1/10,000-cent units in euros: two decimals, more only for a fraction of a
    cent ("EUR 0.3702"); French "0,3702 EUR" with spaces between thousands.

    >>> money(1_000_000, "EUR", "en"), money(100_000_000_000, "EUR", "fr")
    ('EUR 1.00', '10 000,00 EUR')
    >>> money(370_200, "EUR", "en")
    'EUR 0.3702'
    """
    euros, rest = divmod(units, _UNITS_PER_EURO)
    decimals = f"{rest:06d}".rstrip("0").ljust(2, "0")
    if lang == "fr":
        return f"{euros:,}".replace(",", " ") + f",{decimals} {currency}"
    return f"{currency} {euros:,}.{decimals}"


def cents(amount_cents: int, currency: str, lang: Lang) -> str:
    return money(amount_cents * UNITS_PER_CENT, currency, lang)


def percent(bp: int, lang: Lang) -> str:
    """Basis points as a percentage with two decimals: "20.00%", "12,34 %"."""
    whole, rest = divmod(bp, 100)
    return f"{whole},{rest:02d} %" if lang == "fr" else f"{whole}.{rest:02d}%"


def _date(moment: datetime, lang: Lang) -> str:
    local = timezone.localtime(moment)
    day = "1er" if lang == "fr" and local.day == 1 else str(local.day)
    return f"{day} {_MONTHS[lang][local.month - 1]} {local.year}"


def _share_lines(terms: Terms, lang: Lang) -> tuple[Line, ...]:
    def share(bp: int) -> str:
        return f"{money(terms.stake_cents * bp, terms.currency, lang)} ({percent(bp, lang)})"

    words = _WORDS[lang]
    return (
        Line(words["to_meter"], share(terms.meter_share_bp)),
        Line(words["to_reserve"], share(terms.reserve_share_bp)),
        Line(words["to_house"], share(terms.house_share_bp)),
    )


@functools.lru_cache(maxsize=64)
def rules_sheet(posted: Posted, lang: Lang) -> RulesSheet:
    """The sheet of `posted` in `lang`, built once for each (terms, language)."""
    terms, words = posted.terms, _WORDS[lang]
    paytable = terms.paytable

    def eur(amount_cents: int) -> str:
        return cents(amount_cents, terms.currency, lang)

    figures = {
        "stake": eur(terms.stake_cents),
        "meter_share": money(terms.stake_cents * terms.meter_share_bp, terms.currency, lang),
        "meter_shown": eur(terms.stake_cents * terms.meter_share_bp // UNITS_PER_CENT),
        "seed": eur(terms.seed_cents),
        "envy": eur(paytable.envy_cents),
        "community": eur(paytable.community_royal_cents),
        "full_house": eur(paytable.full_house_cents),
        "jackpot_share": percent(paytable.jackpot_percent_bp, lang),
        "paytable": terms.paytable_version,
    }

    def said(*keys: str) -> tuple[Line, ...]:
        return tuple(Line(words[key].format(**figures)) for key in keys)

    rounding = said("rounding", "rounding_shown")
    meter_units = terms.stake_cents * terms.meter_share_bp
    if meter_units % UNITS_PER_CENT:
        # The fewest bets whose meter shares make whole cents: what the sign shows then is exact.
        bets = UNITS_PER_CENT // math.gcd(UNITS_PER_CENT, meter_units)
        figures["bets"] = f"{bets}"
        figures["bets_shown"] = eur(bets * meter_units // UNITS_PER_CENT)
        rounding += said("rounding_example")
    awards = (
        *said("judged"),
        Line(words["royal"], words["royal_figure"].format(**figures)),
        Line(words["community_royal"], eur(paytable.community_royal_cents)),
        Line(words["straight_flush"], eur(paytable.straight_flush_cents)),
        Line(words["four_of_a_kind"], eur(paytable.four_of_a_kind_cents)),
        Line(words["full_house"], eur(paytable.full_house_cents)),
        *said("fixed_by_house", "paytable_version"),
    )
    sections = (
        Section(words["h_stake"], said("stake", "collected") + _share_lines(terms, lang)),
        Section(words["h_rounding"], rounding),
        Section(words["h_awards"], awards),
        Section(words["h_envy"], said("envy_rule", "envy_not_community", "envy_follows")),
        Section(words["h_ties"], said("ties_seat", "ties_community", "ties_table", "ties_order")),
        Section(words["h_reset"], said("reset", "reset_fraction")),
        Section(words["h_verification"], said("verification", "void")),
        Section(words["h_suspension"], said("suspension", "suspension_resume")),
        Section(words["h_terms"], said("terms_fixed", "terms_stop")),
    )
    stopped = ""
    if posted.stopped_since is not None:
        stopped = words["stopped"].format(date=_date(posted.stopped_since, lang))
    return RulesSheet(
        lang=lang,
        title=words["title"],
        subtitle=words["subtitle"].format(pool=posted.pool_id),
        stopped=stopped,
        since=words["since"].format(date=_date(posted.since, lang)),
        digest=words["digest"].format(digest=terms.digest[:DIGEST_SHOWN]),
        sections=sections,
    )


_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Progressive jackpot: the rules",
        "subtitle": "Ultimate Texas Hold'em · progressive no. {pool}",
        "since": "Terms in force since {date}",
        "digest": "Terms digest {digest} (SHA-256 of the terms, to match the club's journal)",
        "stopped": "This progressive has been stopped since {date}: no progressive bet is taken.",
        "h_stake": "The bet and where each cent goes",
        "stake": "The progressive bet is optional and costs exactly {stake} per seat and round.",
        "collected": "It is always collected, whatever the hand: it is the contribution to the "
        "jackpot, not returned (only a round voided by a misdeal returns every bet). Awards are "
        "paid on top of it. Of each {stake}:",
        "to_meter": "To the meter: the jackpot shown on the sign",
        "to_reserve": "To the reserve for the next start value",
        "to_house": "To the house",
        "h_rounding": "Rounding",
        "rounding": "The meter and the reserve count in ten-thousandths of a cent: no fraction of "
        "a cent is ever lost.",
        "rounding_shown": "The sign shows, and a jackpot pays, the meter rounded down to the "
        "cent; the fraction left over stays in the meter and counts towards the next cents.",
        "rounding_example": "Here each bet adds {meter_share} to the meter: after one bet the "
        "sign shows {meter_shown} more, and after {bets} bets exactly {bets_shown} more ({bets} "
        "\u00d7 {meter_share}).",
        "h_awards": "The awards",
        "judged": "A seat is judged on its 7-card hand (its 2 cards and the 5 board cards), even "
        "after a fold. Only the seat's best award is paid.",
        "royal": "Royal flush using at least one of the player's 2 cards: the jackpot, as the "
        "meter stands at the moment of the hit",
        "royal_figure": "{jackpot_share} of the meter",
        "community_royal": "Community royal: the 5 board cards alone are a royal flush",
        "straight_flush": "Straight flush",
        "four_of_a_kind": "Four of a kind",
        "full_house": "Full house",
        "fixed_by_house": "The fixed awards and the envy are paid by the house, not from the "
        "meter.",
        "paytable_version": "Award table {paytable}.",
        "h_envy": "The envy (La Garantie)",
        "envy_rule": "When a seat wins the jackpot with a royal flush, every other seat at the "
        "same table with a progressive bet in that round receives {envy}, on top of its own "
        "award. The winner and the seats without the bet receive none.",
        "envy_not_community": "A community royal pays no envy: every bettor already holds it and "
        "is paid {community}.",
        "envy_follows": "The envy is paid once the jackpot it follows is approved, and voided "
        "with it.",
        "h_ties": "Several wins",
        "ties_seat": "Awards are never shared: each seat is paid its own best award in full "
        "(three full houses at one table are three awards of {full_house}).",
        "ties_community": "A community royal pays {community} to every seat with a progressive "
        "bet in that round.",
        "ties_table": "Two jackpot royals cannot occur at one table in one round (one deck, one "
        "board): a result that shows two repeats a card and is refused, and nothing is paid "
        "until the round is entered correctly.",
        "ties_order": "Jackpots won at different tables are served one after the other, in the "
        "order they are recorded: the first wins the whole meter, the next one wins the meter "
        "as it stands after the first one's reset.",
        "h_reset": "After a jackpot",
        "reset": "The meter starts again at {seed} (the start value), taken from the reserve; "
        "where the reserve is short, the house pays the rest.",
        "reset_fraction": "The fraction of a cent the jackpot did not pay stays in the meter.",
        "h_verification": "Verification of big wins",
        "verification": "A jackpot, and any award at or above the amount the club sets, is "
        "verified by a supervisor before it is paid.",
        "void": "An award found wrong is voided, with its reason, by two people; a voided "
        "jackpot goes back to the meter.",
        "h_suspension": "Suspension",
        "suspension": "If the progressive is suspended (a technical fault), the tables play on "
        "without it: progressive bets are refused, nothing can be claimed, and the meter stands "
        "still. The sign says so.",
        "suspension_resume": "Resuming changes no figure. A round begun before the suspension "
        "is settled on these terms.",
        "h_terms": "These terms",
        "terms_fixed": "The terms above do not change while this progressive runs: new terms "
        "mean a new progressive, and a new sheet.",
        "terms_stop": "If the progressive is stopped for good, no progressive bet is taken "
        "again, and the amount it holds is moved, in the club's books, to another progressive "
        "or to the register of amounts owed to the players.",
    },
    "fr": {
        "title": "Jackpot progressif : le règlement",
        "subtitle": "Ultimate Texas Hold'em · progressif n° {pool}",
        "since": "Conditions en vigueur depuis le {date}",
        "digest": "Empreinte des conditions {digest} (SHA-256 des conditions, à rapprocher du "
        "journal du club)",
        "stopped": "Ce jackpot progressif est arrêté depuis le {date} : aucune mise progressive "
        "n'est plus acceptée.",
        "h_stake": "La mise et la destination de chaque centime",
        "stake": "La mise progressive est facultative ; elle coûte exactement {stake} par "
        "place et par coup.",
        "collected": "Elle est toujours prélevée, quelle que soit la main : c'est la "
        "contribution au jackpot, elle n'est pas rendue (seul un coup annulé pour une erreur de "
        "donne rend toutes les mises). Les gains s'y ajoutent. Sur chaque mise de {stake} :",
        "to_meter": "Au compteur : le jackpot affiché au panneau",
        "to_reserve": "À la réserve du prochain montant de départ",
        "to_house": "À l'établissement",
        "h_rounding": "Arrondi",
        "rounding": "Le compteur et la réserve comptent en dix-millièmes de centime : aucune "
        "fraction de centime n'est jamais perdue.",
        "rounding_shown": "Le panneau affiche, et le jackpot paie, le compteur arrondi au "
        "centime inférieur ; la fraction restante demeure dans le compteur et compte pour les "
        "centimes suivants.",
        "rounding_example": "Ici chaque mise ajoute {meter_share} au compteur : après une mise "
        "le panneau affiche {meter_shown} de plus, et après {bets} mises exactement "
        "{bets_shown} de plus ({bets} \u00d7 {meter_share}).",
        "h_awards": "Les gains",
        "judged": "Chaque place est jugée sur sa main de 7 cartes (ses 2 cartes et les 5 cartes "
        "communes), même après un abandon. Seul le meilleur gain de la place est payé.",
        "royal": "Quinte flush royale avec au moins une des 2 cartes du joueur : le jackpot, "
        "tel que le compteur le montre au moment du gain",
        "royal_figure": "{jackpot_share} du compteur",
        "community_royal": "Quinte flush royale communautaire : les 5 cartes communes seules",
        "straight_flush": "Quinte flush",
        "four_of_a_kind": "Carré",
        "full_house": "Full",
        "fixed_by_house": "Les gains fixes et la Garantie sont payés par l'établissement, pas "
        "par le compteur.",
        "paytable_version": "Table des gains {paytable}.",
        "h_envy": "La Garantie",
        "envy_rule": "Quand une place gagne le jackpot avec une quinte flush royale, chaque "
        "autre place de la même table ayant misé le progressif sur ce coup reçoit {envy}, en "
        "plus de son propre gain. Le gagnant et les places sans mise progressive n'en reçoivent "
        "pas.",
        "envy_not_community": "Une quinte flush royale communautaire ne donne pas de Garantie : "
        "chaque joueur ayant misé la détient déjà et reçoit {community}.",
        "envy_follows": "La Garantie est payée une fois le jackpot qu'elle suit approuvé, et "
        "annulée avec lui.",
        "h_ties": "Plusieurs gains",
        "ties_seat": "Les gains ne se partagent jamais : chaque place reçoit son propre meilleur "
        "gain en entier (trois fulls à une table font trois gains de {full_house}).",
        "ties_community": "Une quinte flush royale communautaire paie {community} à chaque "
        "place ayant misé le progressif sur ce coup.",
        "ties_table": "Deux jackpots ne peuvent pas sortir à une même table sur un même coup "
        "(un seul jeu, un seul tableau) : un résultat qui en montre deux répète une carte ; il "
        "est refusé et rien n'est payé tant que le coup n'est pas saisi correctement.",
        "ties_order": "Des jackpots gagnés à des tables différentes sont servis l'un après "
        "l'autre, dans l'ordre de leur enregistrement : le premier gagne tout le compteur, le "
        "suivant le compteur tel qu'il est après la remise à zéro du premier.",
        "h_reset": "Après un jackpot",
        "reset": "Le compteur repart de {seed} (le montant de départ), pris sur la réserve ; "
        "si la réserve ne suffit pas, l'établissement paie le reste.",
        "reset_fraction": "La fraction de centime que le jackpot n'a pas payée reste dans le "
        "compteur.",
        "h_verification": "Vérification des gros gains",
        "verification": "Un jackpot, et tout gain à partir du montant fixé par le club, est "
        "vérifié par un responsable avant d'être payé.",
        "void": "Un gain reconnu erroné est annulé, avec son motif, par deux personnes ; un "
        "jackpot annulé retourne au compteur.",
        "h_suspension": "Suspension",
        "suspension": "Si le progressif est suspendu (un incident technique), les tables "
        "continuent sans lui : les mises progressives sont refusées, aucun gain ne peut être "
        "réclamé et le compteur reste immobile. Le panneau l'indique.",
        "suspension_resume": "La reprise ne change aucun montant. Un coup commencé avant la "
        "suspension est réglé selon ces conditions.",
        "h_terms": "Ces conditions",
        "terms_fixed": "Les conditions ci-dessus ne changent pas tant que ce progressif "
        "fonctionne : de nouvelles conditions font un nouveau progressif, et un nouveau "
        "règlement.",
        "terms_stop": "Si le progressif est arrêté définitivement, plus aucune mise "
        "progressive n'est prise, et le montant qu'il détient est transféré, dans les comptes "
        "du club, à un autre progressif ou au registre des sommes dues aux joueurs.",
    },
}


# --- the PDF ----------------------------------------------------------------------------------

# One A4 page for the table: the house style of the register (Helvetica), sized to fit.
_BODY = ParagraphStyle("body", fontName="Helvetica", fontSize=8.4, leading=10.3, spaceAfter=1.3)
_STYLES = {
    "body": _BODY,
    "small": ParagraphStyle(
        "small", parent=_BODY, fontSize=7.5, leading=9.5, textColor=colors.grey
    ),
    "heading": ParagraphStyle(
        "heading",
        parent=_BODY,
        fontName="Helvetica-Bold",
        fontSize=10.5,
        leading=13,
        spaceBefore=2 * mm,
        spaceAfter=0.8 * mm,
    ),
    "title": ParagraphStyle(
        "title", parent=_BODY, fontName="Helvetica-Bold", fontSize=17, leading=21
    ),
    "figure": ParagraphStyle("figure", parent=_BODY, fontName="Helvetica-Bold", alignment=2),
    "stopped": ParagraphStyle(
        "stopped",
        parent=_BODY,
        fontName="Helvetica-Bold",
        textColor=colors.white,
        backColor=colors.HexColor("#b00020"),
        borderPadding=2 * mm,
        spaceBefore=4 * mm,
        spaceAfter=3 * mm,
    ),
}


def _paragraph(text: str, style: str) -> Paragraph:
    return Paragraph(escape(text), _STYLES[style])


@functools.lru_cache(maxsize=32)
def rules_pdf(sheet: RulesSheet) -> bytes:
    """The sheet as a PDF, A4 portrait, to print and post at the table."""
    buffer = io.BytesIO()
    document = SimpleDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=15 * mm,
        rightMargin=15 * mm,
        topMargin=11 * mm,
        bottomMargin=10 * mm,
        title=sheet.title,
        author=settings.CLUB_NAME,
        lang=sheet.lang,
    )
    story: list[Flowable] = [
        _paragraph(sheet.title, "title"),
        _paragraph(f"{settings.CLUB_NAME} · {sheet.subtitle}", "body"),
        _paragraph(sheet.since, "body"),
    ]
    if sheet.stopped:
        story.append(_paragraph(sheet.stopped, "stopped"))
    story += [KeepTogether(_section(section, document.width)) for section in sheet.sections]
    story += [Spacer(1, 4 * mm), _paragraph(sheet.digest, "small")]
    document.build(story)
    return buffer.getvalue()


def _section(section: Section, width: float) -> list[Flowable]:
    """A section's heading, its sentences, and its figures as a two-column table."""
    parts: list[Flowable] = [_paragraph(section.heading, "heading")]
    rows: list[list[Flowable]] = []
    for line in section.lines:
        if line.figure:
            rows.append([_paragraph(line.text, "body"), _paragraph(line.figure, "figure")])
            continue
        if rows:
            parts.append(_figures(rows, width))
            rows = []
        parts.append(_paragraph(line.text, "body"))
    if rows:
        parts.append(_figures(rows, width))
    return parts


def _figures(rows: list[list[Flowable]], width: float) -> Table:
    table = Table(rows, colWidths=[width * 0.68, width * 0.32], hAlign="LEFT", spaceAfter=2)
    table.setStyle(
        TableStyle(
            [
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LINEBELOW", (0, 0), (-1, -1), 0.3, colors.lightgrey),
                ("LEFTPADDING", (0, 0), (0, -1), 0),
                ("RIGHTPADDING", (-1, 0), (-1, -1), 0),
                ("TOPPADDING", (0, 0), (-1, -1), 1.5),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 1),
            ]
        )
    )
    return table
