"""Amounts in words and figures, as the payment slip prints them (no database)."""

from __future__ import annotations

import pytest

from floor.amounts import (
    MAX_CENTS,
    amount_in_figures,
    amount_in_words,
    english_number,
    french_number,
)

FRENCH = {
    0: "zéro",
    1: "un",
    16: "seize",
    17: "dix-sept",
    21: "vingt et un",
    22: "vingt-deux",
    61: "soixante et un",
    70: "soixante-dix",
    71: "soixante et onze",
    77: "soixante-dix-sept",
    80: "quatre-vingts",
    81: "quatre-vingt-un",
    90: "quatre-vingt-dix",
    91: "quatre-vingt-onze",
    99: "quatre-vingt-dix-neuf",
    100: "cent",
    101: "cent un",
    180: "cent quatre-vingts",
    200: "deux cents",
    201: "deux cent un",
    1_000: "mille",
    1_080: "mille quatre-vingts",
    2_000: "deux mille",
    80_000: "quatre-vingt mille",
    200_000: "deux cent mille",
    300_080: "trois cent mille quatre-vingts",
    1_000_000: "un million",
    2_000_000: "deux millions",
    200_000_000: "deux cents millions",
    80_000_000: "quatre-vingts millions",
    1_000_000_000: "un milliard",
    999_999_999_999: "neuf cent quatre-vingt-dix-neuf milliards neuf cent quatre-vingt-dix-neuf "
    "millions neuf cent quatre-vingt-dix-neuf mille neuf cent quatre-vingt-dix-neuf",
}

ENGLISH = {
    0: "zero",
    13: "thirteen",
    21: "twenty-one",
    100: "one hundred",
    101: "one hundred and one",
    1_000: "one thousand",
    1_005: "one thousand and five",
    1_234: "one thousand two hundred and thirty-four",
    2_000_021: "two million and twenty-one",
    3_000_100: "three million one hundred",
    1_000_000_000: "one billion",
}


@pytest.mark.parametrize(("number", "words"), FRENCH.items())
def test_french_numbers(number, words):
    assert french_number(number) == words


@pytest.mark.parametrize(("number", "words"), ENGLISH.items())
def test_english_numbers(number, words):
    assert english_number(number) == words


@pytest.mark.parametrize(
    ("cents", "lang", "words"),
    [
        (100, "fr", "un euro"),
        (150, "fr", "un euro et cinquante centimes"),
        (1, "fr", "un centime"),
        (99, "fr", "quatre-vingt-dix-neuf centimes"),
        (5_000, "fr", "cinquante euros"),
        (100_000_000, "fr", "un million d'euros"),
        (100_000_001, "fr", "un million d'euros et un centime"),
        (100_100_000, "fr", "un million mille euros"),
        (1_000_060_000, "fr", "dix millions six cents euros"),
        (100, "en", "one euro"),
        (201, "en", "two euros and one cent"),
        (55, "en", "fifty-five cents"),
        (1_000_060_000, "en", "ten million six hundred euros"),
    ],
)
def test_amounts_in_words(cents, lang, words):
    assert amount_in_words(cents, "EUR", lang) == words


def test_another_currency_has_its_own_names_or_its_code():
    assert amount_in_words(250, "GBP", "en") == "two pounds and fifty pence"
    assert amount_in_words(200, "XYZ", "en") == "two XYZ"


@pytest.mark.parametrize("cents", [-1, MAX_CENTS + 1, 1.5, True])
def test_what_is_not_an_amount_is_refused(cents):
    with pytest.raises(ValueError, match="not an amount in cents"):
        amount_in_words(cents, "EUR", "fr")


def test_figures():
    assert amount_in_figures(1_000_060_000, "EUR", "fr") == "10\u00a0000\u00a0600,00\u00a0€"
    assert amount_in_figures(5, "EUR", "en") == "€0.05"
    assert amount_in_figures(123_456, "CHF", "en") == "CHF 1,234.56"


def test_the_docstrings_examples_hold():
    import doctest

    from floor import amounts

    result = doctest.testmod(amounts)
    assert result.attempted >= 8 and result.failed == 0
