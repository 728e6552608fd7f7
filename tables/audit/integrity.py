"""Integrity monitoring: award counts that fair deals make improbable, flagged and stored.

`check_integrity` compares, at each table and in each pool, each award kind's count over the
window with what the played stakes make expected (the exact odds of `rules.progressive`, the
tails of `rules.tails`), with the voids watched (`tables.selectors.voids`) in the same Holm
family at level INTEGRITY_ALPHA.

Invariants:
- reads only, then one transaction inserting the new flags, each at most once (its unique
  constraint): a task run twice stores nothing twice; nothing is ever updated, no money moves;
- each new flag is a significant event (SE10 a void rate, SE11 an award count) on the admin chain
  in the transaction that stores it.

The test's statistics and why they are valid: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_CEILING, Context, Decimal
from fractions import Fraction

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from jackpot.models import Award, AwardKind, Pool
from jackpot.money import ledger
from rules.progressive import AWARD_DEALS, TOTAL_DEALS, ProgressiveAward
from rules.tails import holm, poisson_upper_tail_bound
from tables.models import IntegrityFlag, Round, RoundSeat, RoundState
from tables.selectors.voids import IN_SHIFT, IN_WINDOW, read_window, void_tests

logger = logging.getLogger(__name__)
_STATEMENT_TIMEOUT_MS = 300_000
ACTOR = "system:integrity"
VOID_RATE = (
    "integrity.void_rate"  # significant events SE10 and SE11 (jackpot.notifications.significant)
)
AWARD_RATE = "integrity.award_rate"

_P = {award: Fraction(deals, TOTAL_DEALS) for award, deals in AWARD_DEALS.items()}
#: Kinds whose round probability is m x p (union bound; exact for the jackpot).
_PER_SEAT = {
    AwardKind.ROYAL_FLUSH: _P[ProgressiveAward.ROYAL_FLUSH],
    AwardKind.STRAIGHT_FLUSH: _P[ProgressiveAward.STRAIGHT_FLUSH],
    AwardKind.FOUR_OF_A_KIND: _P[ProgressiveAward.FOUR_OF_A_KIND],
    AwardKind.FULL_HOUSE: _P[ProgressiveAward.FULL_HOUSE],
}


def round_probability(kind: AwardKind, staked_seats: int) -> Fraction:
    """The probability (or, for straight flush, quads and full house, an upper bound of it) that
    a fair round with ``staked_seats`` progressive stakes pays at least one award of ``kind``."""
    if kind in _PER_SEAT:
        return min(Fraction(1), staked_seats * _PER_SEAT[kind])
    if kind == AwardKind.COMMUNITY_ROYAL:
        return _P[ProgressiveAward.COMMUNITY_ROYAL]
    # Envy: one of the seats hits the jackpot and another seat staked.
    return staked_seats * _P[ProgressiveAward.ROYAL_FLUSH] if staked_seats >= 2 else Fraction(0)


@dataclass(frozen=True, slots=True)
class Finding:
    """One (scope, kind) test of a run: a table's (``table`` set) or a pool's as a whole; ``kind``
    an award kind, or a void signal (``tables.selectors.voids``: ``observed`` voids of ``rounds``
    decided, ``seats`` the stakes they refunded, ``awards`` 0)."""

    pool_id: int
    table_id: int | None
    kind: str
    window_from: datetime
    window_to: datetime
    rounds: int
    seats: int
    observed: int
    awards: int
    expected: Fraction
    tail: Fraction


def _up(value: Fraction) -> str:
    """6 significant digits, rounded up (a tail is never shown smaller than it is)."""
    context = Context(prec=6, rounding=ROUND_CEILING, Emin=-(10**9), Emax=10**9)
    return str(context.divide(Decimal(value.numerator), Decimal(value.denominator)))


def window_start(pool: Pool, now: datetime) -> datetime:
    hours = settings.INTEGRITY_WINDOW_HOURS
    return max(pool.created_at, now - timedelta(hours=hours)) if hours else pool.created_at


def expected_awards(kind: AwardKind, sizes: Mapping[int, int]) -> Fraction:
    """The exact expected number of awards of ``kind`` (not of rounds with one: the auditors'
    chart, ``tables.audit.pool_history``) in ``sizes`` rounds (number of staked seats ->
    rounds): by linearity, each staked seat's probability of the kind as the PAR sheet gives it
    with the seat's ``other_bettors`` (m - 1): p for the per-seat kinds and the community royal
    (every bettor holds the board), ``(m - 1) x p(jackpot)`` for envy. Exact whatever the
    dependence between the seats of a round, where :func:`round_probability` bounds."""
    if kind == AwardKind.ENVY:
        per_round = {m: m * (m - 1) * _P[ProgressiveAward.ROYAL_FLUSH] for m in sizes}
    elif kind == AwardKind.COMMUNITY_ROYAL:
        per_round = {m: m * _P[ProgressiveAward.COMMUNITY_ROYAL] for m in sizes}
    else:
        per_round = {m: m * _PER_SEAT[kind] for m in sizes}
    return sum((count * per_round[m] for m, count in sizes.items()), start=Fraction(0))


def rounds_by_stakes(settled: QuerySet[Round]) -> list[tuple[int, int, int]]:
    """``(table id, staked seats, rounds)`` of the ``settled`` rounds that had a progressive
    stake: all that a round's probability of any kind depends on. One aggregate query."""
    stakes = (
        RoundSeat.objects.filter(round=OuterRef("pk"), progressive_cents__gt=0)
        .values("round")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return list(
        settled.annotate(size=Subquery(stakes))
        .filter(size__gt=0)
        .values("table_id", "size")
        .annotate(count=Count("pk"))
        .values_list("table_id", "size", "count")
    )


def _void_findings(now: datetime) -> list[Finding]:
    return [
        Finding(
            pool_id=test.pool_id,
            table_id=test.table_id,
            kind=test.kind,
            window_from=test.window_from,
            window_to=test.window_to,
            rounds=test.cell.rounds,
            seats=test.cell.refunded_stakes,
            observed=test.cell.voids,
            awards=0,
            expected=test.expected,
            tail=test.tail,
        )
        for test in void_tests(read_window(now=now))
    ]


def _pool_findings(pool: Pool, now: datetime) -> list[Finding]:
    since = window_start(pool, now)
    settled = Q(state=RoundState.SETTLED, pool=pool, closed_at__gte=since, closed_at__lt=now)
    # Rounds by table and number of staked seats.
    by_size: dict[int | None, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for table, size, count in rounds_by_stakes(Round.objects.filter(settled)):
        by_size[table][size] += count
        by_size[None][size] += count
    seen: dict[tuple[int | None, str], tuple[int, int]] = defaultdict(lambda: (0, 0))
    for table, kind, rounds, awards in (
        Award.objects.filter(round__in=Round.objects.filter(settled))
        .values("round__table_id", "kind")
        .annotate(rounds=Count("round", distinct=True), awards=Count("pk"))
        .values_list("round__table_id", "kind", "rounds", "awards")
    ):
        seen[(table, kind)] = (rounds, awards)
        before = seen[(None, kind)]
        seen[(None, kind)] = (before[0] + rounds, before[1] + awards)
    findings = []
    for scope, sizes in by_size.items():
        rounds = sum(sizes.values())
        seats = sum(size * count for size, count in sizes.items())
        for kind in AwardKind:
            expected = sum(
                (count * round_probability(kind, size) for size, count in sizes.items()),
                start=Fraction(0),
            )
            if scope is None:
                observed, awards = seen[(None, kind.value)]
            else:
                observed, awards = seen[(scope, kind.value)]
            if expected == 0 and observed == 0:
                continue  # nothing could happen, nothing did: not a test
            findings.append(
                Finding(
                    pool_id=pool.pk,
                    table_id=scope,
                    kind=kind.value,
                    window_from=since,
                    window_to=now,
                    rounds=rounds,
                    seats=seats,
                    observed=observed,
                    awards=awards,
                    expected=expected,
                    tail=poisson_upper_tail_bound(expected, observed),
                )
            )
    return findings


def check_integrity(*, now: datetime | None = None) -> list[IntegrityFlag]:
    """Test every pool's tables and the pool itself, kind by kind, and every table's voids; store
    and return the flags this run found that were not stored yet. One Holm family for the whole
    run."""
    now = now or timezone.now()
    alpha = Fraction(settings.INTEGRITY_ALPHA)
    stored = []
    with transaction.atomic():
        if connection.vendor == "postgresql":
            # A scan of every round since a pool began can take longer than the requests'
            # statement_timeout; this transaction only reads, then inserts a few rows.
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL statement_timeout = %s", [_STATEMENT_TIMEOUT_MS])
        findings = [f for pool in Pool.objects.order_by("pk") for f in _pool_findings(pool, now)]
        findings += _void_findings(now)
        significant, adjusted = holm([f.tail for f in findings], alpha)
        for finding, flagged, corrected in zip(findings, significant, adjusted, strict=True):
            if not flagged:
                continue
            flag, created = IntegrityFlag.objects.get_or_create(
                pool_id=finding.pool_id,
                table_id=finding.table_id,
                kind=finding.kind,
                window_from=finding.window_from,
                rounds=finding.rounds,
                observed=finding.observed,
                defaults={
                    "window_to": finding.window_to,
                    "seats": finding.seats,
                    "awards": finding.awards,
                    "expected": f"{finding.expected.numerator}/{finding.expected.denominator}",
                    "tail": _up(finding.tail),
                    "adjusted": _up(corrected),
                    "family": len(findings),
                    "alpha": str(alpha),
                    "checked_at": now,
                },
            )
            if created:
                stored.append(flag)
                ledger.record(
                    chain=ledger.ADMIN_CHAIN,
                    kind=VOID_RATE if finding.kind in (IN_SHIFT, IN_WINDOW) else AWARD_RATE,
                    actor=ACTOR,
                    occurred_at=now,
                    payload={
                        "flag": flag.pk,
                        "pool": finding.pool_id,
                        "table": finding.table_id,
                        "test": finding.kind,
                        "window_from": finding.window_from.isoformat(),
                        "window_to": finding.window_to.isoformat(),
                        "rounds": finding.rounds,
                        "observed": finding.observed,
                        "expected": flag.expected,
                        "adjusted_tail": flag.adjusted,
                        "alpha": flag.alpha,
                    },
                )
                scope = f"table {finding.table_id}" if finding.table_id else "the pool as a whole"
                logger.error(
                    "integrity flag: pool %s, %s: %s in %s of %s rounds, expected %.4g; "
                    "tail <= %s, Holm-adjusted %s < alpha %s",
                    finding.pool_id,
                    scope,
                    finding.kind,
                    finding.observed,
                    finding.rounds,
                    float(finding.expected),  # for the log line only
                    flag.tail,
                    flag.adjusted,
                    flag.alpha,
                )
    return stored
