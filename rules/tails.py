"""Upper tails of counts, bounded from above and compared exactly: the integrity check's statistics.

The integrity check asks, for each table or pool and each award kind, how improbable its count is
when the deals are fair. The count is a sum of independent rounds' indicators with known (or
bounded) probabilities q_r: a Poisson-binomial. Its exact tail is out of reach for 10^5 trials
with probabilities of denominators near 3 x 10^9, so the test uses the Poisson tail of the same
mean, which bounds it from above beyond the mean: for c >= mean + 1, P(Poisson-binomial >= c)
<= P(binomial(n, mean / n) >= c) (Hoeffding, 1956) <= P(Poisson(mean) >= c) (Anderson and
Samuels, 1967). Below mean + 1 the bound is taken as 1: such a count is never suspicious.

No binary floating point decides anything: :func:`poisson_upper_tail_bound` computes in decimal
arithmetic (60 significant digits) rounding every operation up, adds a bound on the series' cut
tail, and returns an exact ``Fraction`` at least the true tail; :func:`holm` compares Fractions.
So a reported tail may exceed the true one by a relative 10^-50 or so, never fall below it: the
test can only be (negligibly) conservative.

The award odds per table and terminal (``tables.audit.award_odds``) count boxes, each with the PAR
sheet's exact probability p: :func:`binomial_upper_tail_bound` bounds P(binomial(n, p) >= k) from
above in the same decimal arithmetic, by its first term over one minus the ratio of two successive
terms at k (the ratios fall as j grows): within a factor 1 / (1 - ratio) of the true tail, which
is next to 1 wherever the tail is small enough to matter, however small (no float underflows).

Invariants: pure; ``0 < poisson_upper_tail_bound(mean, c) <= 1``; non-decreasing in ``mean``;
``binomial_upper_tail_bound`` is at least the true tail and at most 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_CEILING, Context, Decimal
from fractions import Fraction
from math import comb

__all__ = ["binomial_upper_tail_bound", "holm", "poisson_upper_tail_bound"]

_DIGITS = 60
# Relative slack for exp(), which Decimal rounds to nearest whatever the context says.
_SLACK = Decimal(1) + Decimal(10) ** -(_DIGITS - 5)


def _context() -> Context:
    return Context(prec=_DIGITS, rounding=ROUND_CEILING, Emax=10**9, Emin=-(10**9))


def poisson_upper_tail_bound(mean: Fraction, observed: int) -> Fraction:
    """An upper bound, within a relative 10^-50, of P(Poisson(mean) >= observed); 1 when
    ``observed <= mean + 1`` (see the module docstring).

    >>> poisson_upper_tail_bound(Fraction(1), 1)
    Fraction(1, 1)
    >>> round(float(poisson_upper_tail_bound(Fraction(1), 3)), 12)  # 1 - 2.5 / e
    0.080301397071
    """
    if mean < 0 or observed < 0:
        raise ValueError("mean and observed must be non-negative")
    if observed <= mean + 1:
        return Fraction(1)
    if mean == 0:
        return Fraction(0) if observed > 0 else Fraction(1)
    context = _context()
    lam = context.divide(Decimal(mean.numerator), Decimal(mean.denominator))  # rounded up
    # e^-lam x lam^observed / observed!, built up term by term (rounded up at every step).
    term = context.multiply(context.exp(context.minus(lam)), _SLACK)
    for i in range(1, observed + 1):
        term = context.divide(context.multiply(term, lam), Decimal(i))
    total = term
    i = observed
    while True:
        i += 1
        term = context.divide(context.multiply(term, lam), Decimal(i))
        total = context.add(total, term)
        ratio = context.divide(lam, Decimal(i + 1))  # < 1: i > observed > lam + 1
        # Every later term is at most term x ratio^k: the rest is below term x ratio / (1 - ratio).
        rest = context.divide(context.multiply(term, ratio), context.subtract(Decimal(1), ratio))
        if rest <= context.multiply(total, Decimal(10) ** -(_DIGITS - 5)):
            total = context.add(total, rest)
            break
    return min(Fraction(1), Fraction(total))


def _up(value: Fraction, context: Context) -> Decimal:
    return context.divide(Decimal(value.numerator), Decimal(value.denominator))


def binomial_upper_tail_bound(trials: int, p: Fraction, observed: int) -> Fraction:
    """An upper bound of P(binomial(trials, p) >= observed), within a factor 1 / (1 - r) of it,
    r the ratio of the terms at ``observed`` and ``observed + 1``; 1 when ``observed`` is at most
    the mean ``trials x p`` (never improbable: the median is at least its floor).

    >>> binomial_upper_tail_bound(10, Fraction(1, 2), 3)
    Fraction(1, 1)
    >>> round(float(binomial_upper_tail_bound(4, Fraction(1, 10), 4)), 12)  # 0.1 ** 4
    0.0001
    >>> float(binomial_upper_tail_bound(2, Fraction(1, 100), 2)) <= 1e-4 * (1 + 1e-40)
    True
    """
    if trials < 0 or observed < 0 or not 0 <= p <= 1:
        raise ValueError("trials and observed are non-negative, p a probability")
    if observed > trials or (p == 0 and observed > 0):
        return Fraction(0)
    if observed <= trials * p or p == 1:
        return Fraction(1)
    context = _context()
    # The first term C(n, k) p^k (1 - p)^(n - k), each factor rounded up.
    term = context.multiply(Decimal(comb(trials, observed)), _SLACK)
    term = context.multiply(term, context.power(_up(p, context), observed))
    term = context.multiply(term, context.power(_up(1 - p, context), trials - observed))
    term = context.multiply(term, _SLACK)
    # t(j+1) / t(j) = (n - j) / (j + 1) x p / (1 - p): exact, below 1 from k > np on, falling.
    ratio = Fraction(trials - observed, observed + 1) * p / (1 - p)
    if ratio >= 1:
        return Fraction(1)
    bound = context.multiply(term, _up(1 / (1 - ratio), context))
    return min(Fraction(1), Fraction(bound))


def holm(tails: Sequence[Fraction], alpha: Fraction) -> tuple[list[bool], list[Fraction]]:
    """Holm's step-down procedure over a family of tests: which tails are significant at family
    level ``alpha``, and each test's adjusted tail (the smallest family level at which it would
    be), both in the input's order.

    The i-th smallest tail (from 0) is significant when it and every smaller one satisfy
    tail x (m - i) < alpha. Holm controls the family-wise error rate under any dependence between
    the tests (a table's count and its pool's are dependent) and rejects everything Bonferroni
    does, and more.

    >>> holm([Fraction(1, 100), Fraction(1, 1000), Fraction(1, 2)], Fraction(1, 100))
    ([False, True, False], [Fraction(1, 50), Fraction(3, 1000), Fraction(1, 2)])
    """
    count = len(tails)
    order = sorted(range(count), key=lambda index: tails[index])
    significant = [False] * count
    adjusted = [Fraction(1)] * count
    running = Fraction(0)
    still = True
    for rank, index in enumerate(order):
        running = max(running, min(Fraction(1), tails[index] * (count - rank)))
        adjusted[index] = running
        still = still and tails[index] * (count - rank) < alpha
        significant[index] = still
    return significant, adjusted
