"""The strict JSON parser's checks of depth, NUL and surrogates, and the pre-filter that spares
an ordinary body the walk of every value."""

from __future__ import annotations

import io
import json

import pytest
from rest_framework.exceptions import ParseError

from core.parsers import MAX_DEPTH, StrictJSONParser, _may_need_check


def _parse(raw: str) -> object:
    return StrictJSONParser().parse(io.BytesIO(raw.encode()))


def _nested(containers: int) -> str:
    return "[" * containers + "1" + "]" * containers


def test_nesting_is_refused_beyond_the_limit_and_accepted_up_to_it():
    assert _parse(_nested(MAX_DEPTH - 1)) is not None
    with pytest.raises(ParseError, match="nested deeper"):
        _parse(_nested(MAX_DEPTH))
    # Deep nesting in one field of an otherwise ordinary body.
    with pytest.raises(ParseError, match="nested deeper"):
        _parse(json.dumps({"round_id": "r", "pad": json.loads(_nested(40))}))


@pytest.mark.parametrize("text", ["a\x00b", "\ud800", "\udfff", "\udbff\udbff"])
def test_nul_and_lone_surrogates_are_refused_wherever_they_stand(text):
    with pytest.raises(ParseError):
        _parse(json.dumps({"seats": [{"reason": text}]}))
    with pytest.raises(ParseError):
        _parse(json.dumps({text: 1}))


def test_an_ordinary_body_skips_the_walk_and_a_risky_one_does_not():
    seats = [{"seat": n, "bets": {"ante_cents": 500, "blind_cents": 500}} for n in range(1, 8)]
    assert not _may_need_check(json.dumps({"round_id": "r-1", "seats": seats}).encode())
    assert _may_need_check(json.dumps({"reason": "a\x00"}).encode())
    assert _may_need_check(json.dumps({"reason": "\ud83c"}).encode())
    assert _may_need_check(_nested(MAX_DEPTH).encode())
    # A paired surrogate (an emoji written as escapes) is valid text: walked, and accepted.
    assert _parse('{"reason": "\\ud83c\\udca1"}') == {"reason": "\U0001f0a1"}
