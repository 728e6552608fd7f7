"""The integrity check's statistics: the Poisson tail bound is above the exact tails it stands
for (binomial and Poisson-binomial, computed exactly with Fractions), close to the Poisson tail,
and Holm's procedure flags what it should."""

from __future__ import annotations

import doctest
import math
from fractions import Fraction

import pytest

from rules import tails
from rules.tails import holm, poisson_upper_tail_bound


def poisson_binomial_tail(probabilities: list[Fraction], at_least: int) -> Fraction:
    """P(sum of independent Bernoulli(p_i) >= at_least), exactly, by convolution."""
    distribution = [Fraction(1)]
    for p in probabilities:
        distribution = [
            (distribution[k] if k < len(distribution) else 0) * (1 - p)
            + (distribution[k - 1] * p if k >= 1 else 0)
            for k in range(len(distribution) + 1)
        ]
    return sum(distribution[at_least:], start=Fraction(0))


@pytest.mark.parametrize(
    "probabilities",
    [
        [Fraction(1, 20)] * 60,  # a binomial
        [Fraction(1, 595)] * 100 + [Fraction(7, 595)] * 40,  # rounds of 1 and 7 stakes
        [Fraction(k, 400) for k in range(1, 41)],  # all different
    ],
)
def test_the_bound_is_above_the_exact_tail_beyond_the_mean(probabilities):
    mean = sum(probabilities, start=Fraction(0))
    for at_least in range(math.ceil(mean + 1), 14):
        exact = poisson_binomial_tail(probabilities, at_least)
        bound = poisson_upper_tail_bound(mean, at_least)
        assert exact <= bound, (at_least, float(exact), float(bound))


@pytest.mark.parametrize(("mean", "at_least"), [(Fraction(5, 2), 10), (Fraction(30), 60)])
def test_the_bound_is_the_poisson_tail(mean, at_least):
    # Poisson(m) >= c is 1 - the first c terms; fsum in floats is good to ~1e-15 absolute here.
    m = float(mean)
    below = math.fsum(math.exp(-m) * m**i / math.factorial(i) for i in range(at_least))
    assert float(poisson_upper_tail_bound(mean, at_least)) == pytest.approx(1 - below, rel=1e-9)


def test_the_bound_near_and_below_the_mean_is_one_and_it_grows_with_the_mean():
    assert poisson_upper_tail_bound(Fraction(3), 4) == 1
    assert poisson_upper_tail_bound(Fraction(3), 0) == 1
    assert poisson_upper_tail_bound(Fraction(0), 5) == 0
    values = [poisson_upper_tail_bound(Fraction(m, 10), 12) for m in range(1, 60, 7)]
    assert values == sorted(values) and 0 < values[0] < values[-1] < 1
    with pytest.raises(ValueError):
        poisson_upper_tail_bound(Fraction(-1), 3)


def test_a_huge_count_is_a_tiny_but_positive_tail():
    tail = poisson_upper_tail_bound(Fraction(12, 595), 12)
    assert Fraction(9, 10**30) < tail < Fraction(1, 10**29)  # (12/595)^12 / 12! x e^-mean
    assert 0 < poisson_upper_tail_bound(Fraction(2_600), 3_000) < Fraction(1, 10**12)


def test_holm_steps_down_and_beats_bonferroni():
    # Bonferroni at 0.05 over 4 tests needs < 0.0125: 0.012 and 0.001 only. Holm also takes
    # 0.02 (0.001 x 4, 0.012 x 3 = 0.036, 0.02 x 2 = 0.04 < 0.05) and stops at 0.06 x 1.
    found, adjusted = holm(
        [Fraction(12, 1000), Fraction(2, 100), Fraction(6, 100), Fraction(1, 1000)],
        Fraction(5, 100),
    )
    assert found == [True, True, False, True]
    assert adjusted == [Fraction(36, 1000), Fraction(4, 100), Fraction(6, 100), Fraction(4, 1000)]
    assert holm([], Fraction(1, 10)) == ([], [])


def test_doctests():
    assert doctest.testmod(tails).failed == 0
