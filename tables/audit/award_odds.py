"""Award odds per table and per terminal: improbably many awards of a kind, flagged early
(compliance 52).

Each table and each of its terminals is tested alone over a sliding window
(AWARD_ODDS_WINDOW_HOURS), kind by kind, against the PAR sheet's exact odds (the boxes' own
cards, and the boards alone); a tail below AWARD_ODDS_THRESHOLD records SE18
`integrity.award_odds`. A settlement with fixed awards sends its table's check after commit;
the floor's watch checks again within WATCH_SECONDS.

Invariants: reads, then one transaction under its advisory lock that records each alarm once for
a given count; no money moves; the event holds no winner's identity.

The tests and their false-alarm rate: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_CEILING, Context, Decimal
from fractions import Fraction
from math import comb

from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from jackpot.models import AuditEvent, Award, AwardKind
from jackpot.money import ledger, locks
from rules.cards import parse_card
from rules.hands import Category, evaluate
from rules.progressive import AWARD_DEALS, TOTAL_DEALS, ProgressiveAward
from rules.tails import binomial_upper_tail_bound
from tables.models import Round, RoundSeat, RoundState, Table

logger = logging.getLogger(__name__)

TASK = "tables.check_award_odds"
ACTOR = "system:award_odds"
KIND = "integrity.award_odds"  # the significant event SE18 (jackpot.notifications.significant)
BOXES = "boxes"
BOARDS = "boards"

#: Each fixed kind's probability for one box, as the PAR sheet gives it.
BOX_P: dict[str, Fraction] = {
    AwardKind.ROYAL_FLUSH: Fraction(AWARD_DEALS[ProgressiveAward.ROYAL_FLUSH], TOTAL_DEALS),
    AwardKind.STRAIGHT_FLUSH: Fraction(AWARD_DEALS[ProgressiveAward.STRAIGHT_FLUSH], TOTAL_DEALS),
    AwardKind.FOUR_OF_A_KIND: Fraction(AWARD_DEALS[ProgressiveAward.FOUR_OF_A_KIND], TOTAL_DEALS),
    AwardKind.FULL_HOUSE: Fraction(AWARD_DEALS[ProgressiveAward.FULL_HOUSE], TOTAL_DEALS),
}
#: The share of 5-card boards that alone make each kind: straight flushes below the royal
#: (4 suits x 9 tops), quads (13 ranks x 48 kickers), full houses (13 x C(4,3) x 12 x C(4,2)).
BOARD_P: dict[str, Fraction] = {
    AwardKind.STRAIGHT_FLUSH: Fraction(4 * 9, comb(52, 5)),
    AwardKind.FOUR_OF_A_KIND: Fraction(13 * 48, comb(52, 5)),
    AwardKind.FULL_HOUSE: Fraction(13 * comb(4, 3) * 12 * comb(4, 2), comb(52, 5)),
}
_CATEGORY = {
    Category.STRAIGHT_FLUSH: AwardKind.STRAIGHT_FLUSH,
    Category.FOUR_OF_A_KIND: AwardKind.FOUR_OF_A_KIND,
    Category.FULL_HOUSE: AwardKind.FULL_HOUSE,
}


@dataclass(frozen=True, slots=True)
class Test:
    """One test of a check: at `table`, of one terminal's rounds (`terminal`) or all of them."""

    table_id: int
    terminal: int | None
    kind: str
    test: str  # BOXES or BOARDS
    observed: int
    trials: int  # boxes (BOXES) or rounds with a progressive stake (BOARDS)
    boxes: int
    rounds: int
    p: Fraction
    tail: Fraction

    @property
    def expected(self) -> Fraction:
        return self.trials * self.p


def _terminal_of(closed_by: str) -> int | None:
    prefix, _, number = closed_by.partition(":")
    return int(number) if prefix == "terminal" and number.isdigit() else None


def _board_kind(board: list[str]) -> str | None:
    """The fixed kind the board alone makes, if any (a royal board is the community royal)."""
    if len(board) != 5:
        return None
    return _CATEGORY.get(evaluate([parse_card(card) for card in board]).category)


def table_tests(table_id: int, *, since: datetime, now: datetime) -> list[Test]:
    """Every (scope, kind, test) of the table over the window: two aggregate reads (boxes and
    rounds by terminal; the fixed awards with their boards)."""
    rounds = Round.objects.filter(
        table_id=table_id, state=RoundState.SETTLED, opened_at__gte=since, opened_at__lt=now
    )
    played: dict[int | None, tuple[int, int]] = defaultdict(lambda: (0, 0))
    for closed_by, boxes, count in (
        RoundSeat.objects.filter(round__in=rounds, progressive_cents__gt=0)
        .values("round__closed_by")
        .annotate(boxes=Count("pk"), rounds=Count("round", distinct=True))
        .values_list("round__closed_by", "boxes", "rounds")
    ):
        for scope in {None, _terminal_of(closed_by)}:
            seen = played[scope]
            played[scope] = (seen[0] + boxes, seen[1] + count)
    if not played:
        return []
    own: dict[tuple[int | None, str], int] = defaultdict(int)
    boards: dict[tuple[int | None, str], set[int]] = defaultdict(set)
    made: dict[int, str | None] = {}
    for round_pk, closed_by, kind, board in Award.objects.filter(
        round__in=rounds, kind__in=list(BOX_P)
    ).values_list("round_id", "round__closed_by", "kind", "board"):
        if round_pk not in made:
            made[round_pk] = _board_kind(board)
        for scope in {None, _terminal_of(closed_by)}:
            if made[round_pk] == kind:
                boards[(scope, kind)].add(round_pk)
            else:
                own[(scope, kind)] += 1
    tests = []
    for scope, (box_count, round_count) in sorted(played.items(), key=lambda s: s[0] or 0):
        cases = [(BOXES, kind, own[(scope, kind)], box_count, p) for kind, p in BOX_P.items()]
        cases += [
            (BOARDS, kind, len(boards[(scope, kind)]), round_count, q)
            for kind, q in BOARD_P.items()
        ]
        for test, kind, observed, trials, p in cases:
            if observed == 0:
                continue  # nothing seen: the tail is 1
            tests.append(
                Test(
                    table_id=table_id,
                    terminal=scope,
                    kind=kind,
                    test=test,
                    observed=observed,
                    trials=trials,
                    boxes=box_count,
                    rounds=round_count,
                    p=p,
                    tail=binomial_upper_tail_bound(trials, p, observed),
                )
            )
    return tests


def _shown(value: Fraction) -> str:
    """6 significant digits, rounded up (a tail is never shown smaller than it is)."""
    context = Context(prec=6, rounding=ROUND_CEILING, Emin=-(10**9), Emax=10**9)
    return str(context.divide(Decimal(value.numerator), Decimal(value.denominator)))


def _told_before(test: Test, since: datetime) -> bool:
    return AuditEvent.objects.filter(
        kind=KIND,
        occurred_at__gte=since,
        payload__table=test.table_id,
        payload__terminal=test.terminal,
        payload__award_kind=test.kind,
        payload__test=test.test,
        payload__count__gte=test.observed,
    ).exists()


def _record(table: Table, test: Test, *, since: datetime, now: datetime, threshold: str) -> int:
    event = ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind=KIND,
        actor=ACTOR,
        occurred_at=now,
        payload={
            "table": table.pk,
            "table_name": table.name,
            "pool": table.pool_id,
            "terminal": test.terminal,
            "award_kind": test.kind,
            "test": test.test,
            "count": test.observed,
            "boxes": test.boxes,
            "rounds": test.rounds,
            "trials": test.trials,
            "probability": f"{test.p.numerator}/{test.p.denominator}",
            "expected": _shown(test.expected),
            "p_value": _shown(test.tail),
            "threshold": threshold,
            "window_from": since.isoformat(),
            "window_to": now.isoformat(),
        },
    )
    where = f"terminal {test.terminal}" if test.terminal is not None else "all its terminals"
    logger.error(
        "award odds: table %s (%s): %s %s %s of %s, expected %s, tail <= %s < %s",
        table.pk,
        where,
        test.observed,
        test.kind,
        test.test,
        test.trials,
        _shown(test.expected),
        _shown(test.tail),
        threshold,
    )
    return event.pk


def check_award_odds(
    table_ids: list[int] | None = None, *, now: datetime | None = None
) -> list[int]:
    """Test `table_ids` (None: every table that settled a round in the window) and record an
    alarm for each test below AWARD_ODDS_THRESHOLD not recorded yet; the new events' ids."""
    now = now or timezone.now()
    since = now - timedelta(hours=settings.AWARD_ODDS_WINDOW_HOURS)
    threshold = settings.AWARD_ODDS_THRESHOLD
    if table_ids is None:
        table_ids = sorted(
            set(
                Round.objects.filter(
                    state=RoundState.SETTLED, opened_at__gte=since, opened_at__lt=now
                ).values_list("table_id", flat=True)
            )
        )
    recorded = []
    with transaction.atomic():
        locks.advisory(locks.Advisory.AWARD_ODDS)
        for table in Table.objects.filter(pk__in=table_ids).order_by("pk"):
            for test in table_tests(table.pk, since=since, now=now):
                if test.tail >= Fraction(threshold) or _told_before(test, since):
                    continue
                recorded.append(_record(table, test, since=since, now=now, threshold=threshold))
    return recorded
