"""Amounts of money in figures and in words, French and English, as a payment slip writes them
(the French register wants the amount in figures and in words).

Integer cents in, text out (and back, for an amount a person types: `cents_from_text`): no
float anywhere. French follows the traditional spelling of
cheques and deeds (hyphens below a hundred, "et" without them: "vingt et un",
"quatre-vingt-un"; "cents" and "quatre-vingts" take their s only at the end of the number or
before "million(s)"/"milliard(s)", never before "mille", which never varies; "un million
d'euros"). English is British: "two hundred and five", "one euro", "one cent".

>>> amount_in_words(123_450, "EUR", "fr")
'mille deux cent trente-quatre euros et cinquante centimes'
>>> amount_in_words(8_000_000, "EUR", "fr")
'quatre-vingt mille euros'
>>> amount_in_words(100_000_000, "EUR", "en")
'one million euros'
"""

from __future__ import annotations

import re

MAX_CENTS = 10**14 - 1  # up to 999,999,999,999.99: milliards / billions are the largest unit

_FR_UNITS = [
    "zéro",
    "un",
    "deux",
    "trois",
    "quatre",
    "cinq",
    "six",
    "sept",
    "huit",
    "neuf",
    "dix",
    "onze",
    "douze",
    "treize",
    "quatorze",
    "quinze",
    "seize",
    "dix-sept",
    "dix-huit",
    "dix-neuf",
]
_FR_TENS = {2: "vingt", 3: "trente", 4: "quarante", 5: "cinquante", 6: "soixante"}

_EN_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_EN_TENS = ["-", "-", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]

# currency: (unit, units, hundredth, hundredths) in French and in English
_CURRENCIES: dict[str, dict[str, tuple[str, str, str, str]]] = {
    "EUR": {
        "fr": ("euro", "euros", "centime", "centimes"),
        "en": ("euro", "euros", "cent", "cents"),
    },
    "USD": {
        "fr": ("dollar", "dollars", "cent", "cents"),
        "en": ("dollar", "dollars", "cent", "cents"),
    },
    "GBP": {
        "fr": ("livre", "livres", "penny", "pence"),
        "en": ("pound", "pounds", "penny", "pence"),
    },
    "CHF": {
        "fr": ("franc", "francs", "centime", "centimes"),
        "en": ("franc", "francs", "centime", "centimes"),
    },
}


def _fr_below_100(number: int) -> str:
    if number < 20:
        return _FR_UNITS[number]
    tens, unit = divmod(number, 10)
    if tens in (7, 9):  # soixante-dix, quatre-vingt-dix: 60 or 80 plus 10 to 19
        base, rest = ("soixante", 10 + unit) if tens == 7 else ("quatre-vingt", 10 + unit)
        joint = " et " if tens == 7 and unit == 1 else "-"
        return base + joint + _FR_UNITS[rest]
    base = "quatre-vingt" if tens == 8 else _FR_TENS[tens]
    if unit == 0:
        return "quatre-vingts" if tens == 8 else base
    joint = " et " if unit == 1 and tens != 8 else "-"
    return base + joint + _FR_UNITS[unit]


def _fr_below_1000(number: int) -> str:
    hundreds, rest = divmod(number, 100)
    words = []
    if hundreds:
        words.append("cent" if hundreds == 1 else f"{_FR_UNITS[hundreds]} cent")
        if rest == 0 and hundreds > 1:
            words[-1] += "s"
    if rest or not hundreds:
        words.append(_fr_below_100(rest))
    return " ".join(words)


def _fr_invariable(words: str) -> str:
    # Before "mille" the final s of "cents" and "quatre-vingts" goes: "deux cent mille".
    for plural in ("cents", "quatre-vingts"):
        if words.endswith(plural):
            return words[:-1]
    return words


def french_number(number: int) -> str:
    """`number` (0 to 999,999,999,999) in French words.

    >>> french_number(71), french_number(80), french_number(81), french_number(91)
    ('soixante et onze', 'quatre-vingts', 'quatre-vingt-un', 'quatre-vingt-onze')
    >>> french_number(200_000), french_number(200_000_000), french_number(1_001)
    ('deux cent mille', 'deux cents millions', 'mille un')
    """
    if number == 0:
        return "zéro"
    milliards, rest = divmod(number, 10**9)
    millions, rest = divmod(rest, 10**6)
    thousands, units = divmod(rest, 1000)
    words = []
    for count, singular in ((milliards, "milliard"), (millions, "million")):
        if count:
            words.append(f"{_fr_below_1000(count)} {singular}{'s' if count > 1 else ''}")
    if thousands:
        below = _fr_invariable(_fr_below_1000(thousands))
        words.append("mille" if thousands == 1 else f"{below} mille")
    if units:
        words.append(_fr_below_1000(units))
    return " ".join(words)


def _en_below_1000(number: int) -> str:
    hundreds, rest = divmod(number, 100)
    words = []
    if hundreds:
        words.append(f"{_EN_UNITS[hundreds]} hundred")
    if rest:
        if rest < 20:
            below = _EN_UNITS[rest]
        else:
            tens, unit = divmod(rest, 10)
            below = _EN_TENS[tens] + (f"-{_EN_UNITS[unit]}" if unit else "")
        words.append(f"and {below}" if hundreds else below)
    return " ".join(words)


def english_number(number: int) -> str:
    """`number` (0 to 999,999,999,999) in British English words.

    >>> english_number(105), english_number(2_000_021), english_number(1_000_000_000)
    ('one hundred and five', 'two million and twenty-one', 'one billion')
    """
    if number == 0:
        return "zero"
    groups = []
    for scale, name in ((10**9, "billion"), (10**6, "million"), (10**3, "thousand"), (1, "")):
        count, number = divmod(number, scale)
        if count:
            groups.append(f"{_en_below_1000(count)} {name}".strip())
    last = groups[-1]
    # "two million and twenty-one": a last group below a hundred after larger ones takes "and".
    if len(groups) > 1 and "hundred" not in last and not last.endswith(("thousand", "million")):
        groups[-1] = f"and {last}"
    return " ".join(groups)


def amount_in_words(cents: int, currency: str, lang: str) -> str:
    """`cents` of `currency` in words, in `lang` ("fr" or "en").

    >>> amount_in_words(100, "EUR", "fr"), amount_in_words(1, "EUR", "en")
    ('un euro', 'one cent')
    >>> amount_in_words(200_000_000, "EUR", "fr")
    "deux millions d'euros"
    """
    if type(cents) is not int or not 0 <= cents <= MAX_CENTS:
        raise ValueError(f"{cents!r} is not an amount in cents from 0 to {MAX_CENTS}")
    whole, hundredths = divmod(cents, 100)
    names = _CURRENCIES.get(currency, {}).get(lang)
    unit, units, hundredth, hundredths_name = names or (currency, currency, "/100", "/100")
    in_words = french_number if lang == "fr" else english_number
    singular = whole <= 1 if lang == "fr" else whole == 1  # "zéro euro", "zero euros"
    text = f"{in_words(whole)} {unit if singular else units}"
    # "un million d'euros": a French number ending in million(s) or milliard(s) takes "de".
    if lang == "fr" and text.split()[-2].startswith(("million", "milliard")):
        words, name = text.rsplit(" ", 1)
        text = f"{words} {'d' + chr(39) if name[0] in 'aeiouy' else 'de '}{name}"
    if not hundredths:
        return text
    part = f"{in_words(hundredths)} {hundredth if hundredths == 1 else hundredths_name}"
    if not whole:
        return part
    return f"{text} {'et' if lang == 'fr' else 'and'} {part}"


def amount_in_figures(cents: int, currency: str, lang: str) -> str:
    """`cents` in figures as the slip prints them: "1 234,50 €" (no-break spaces) in French,
    "€1,234.50" in English; a currency without a symbol here is written by its code.

    >>> amount_in_figures(123_450, "EUR", "fr"), amount_in_figures(123_450, "EUR", "en")
    ('1\\xa0234,50\\xa0€', '€1,234.50')
    """
    whole, hundredths = divmod(cents, 100)
    symbol = {"EUR": "€", "USD": "$", "GBP": "£"}.get(currency)
    if lang == "fr":
        figure = f"{whole:,}".replace(",", "\u00a0") + f",{hundredths:02d}"
        return f"{figure}\u00a0{symbol or currency}"
    figure = f"{whole:,}.{hundredths:02d}"
    return f"{symbol}{figure}" if symbol else f"{currency} {figure}"


def cents_from_text(text: str, lang: str) -> int:
    """An amount a person typed in whole units and hundredths, as integer cents: French takes
    "1 250,00" (spaces group the thousands; a comma, or a dot, before the cents), English
    "1,250.00" (commas group; a dot before the cents). A currency sign is allowed; a negative,
    a third decimal or anything else is a ValueError that says what is expected.

    >>> cents_from_text("1 250,5", "fr"), cents_from_text("€1,250.05", "en")
    (125050, 125005)
    >>> cents_from_text("25", "fr"), cents_from_text("0.99", "fr")
    (2500, 99)
    """
    cleaned = text.strip().strip("€").strip()
    for space in (" ", "\u00a0", "\u202f"):
        cleaned = cleaned.replace(space, "")
    if lang == "en":
        grouped = re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d{1,2})?", cleaned)
        cleaned = cleaned.replace(",", "") if grouped else cleaned
    else:
        cleaned = cleaned.replace(",", ".")
    found = re.fullmatch(r"(\d{1,12})(?:\.(\d{1,2}))?", cleaned)
    if found is None:
        example = "1 250,00" if lang == "fr" else "1,250.00"
        raise ValueError(f"{text!r} is not an amount: whole units and cents, e.g. {example}")
    whole, hundredths = found.group(1), (found.group(2) or "").ljust(2, "0")
    return int(whole) * 100 + int(hundredths)
