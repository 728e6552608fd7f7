"""A strict JSON parser: malformed, deeply nested or non-standard JSON is a 400, never a 500,
an object with a key twice is a 400 (never "the last one wins"), a body over
DATA_UPLOAD_MAX_MEMORY_SIZE is a 413 without being read whole, and text holding NUL
or an unpaired surrogate (which PostgreSQL or UTF-8 cannot store) is a 400 like malformed JSON.

The standard parser lets a RecursionError (very deep nesting) escape as a 500 and accepts NaN and
Infinity; money never needs either.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from core.errors import PayloadTooLarge

MAX_DEPTH = 32


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are all distinct: `{"ante_cents": 1, "ante_cents": 500}` is two
    answers to one question, not the last one (what json.loads would keep)."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen.add(key)
    return found


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


# Where NUL or a surrogate can come from: a JSON string holds them only as escapes (raw control
# characters are malformed JSON, raw surrogates are not UTF-8). An escaped backslash before "u"
# also matches, which only costs the walk below.
_RISKY_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")


def _may_need_check(raw: bytes) -> bool:
    """False when `raw` can hold no NUL, no surrogate and no nesting deeper than `MAX_DEPTH`
    (fewer brackets than that), so the walk of `_check` would find nothing: the common case,
    decided in C instead of a Python walk of every value of every request."""
    nesting_bound = raw.count(b"[") + raw.count(b"{")
    return nesting_bound >= MAX_DEPTH or _RISKY_ESCAPE.search(raw) is not None


def _check(value: Any, limit: int = MAX_DEPTH) -> None:
    """Refuse nesting deeper than `limit`, and text no database or hash can hold: NUL
    (PostgreSQL text refuses it) and unpaired surrogates (not encodable as UTF-8)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise ParseError(f"JSON nested deeper than {limit} levels")
        if isinstance(node, str):
            if "\x00" in node:
                raise ParseError("text must not contain the NUL character (\\u0000)")
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                raise ParseError(
                    "text must not contain unpaired surrogates (\\ud800-\\udfff)"
                ) from None
        elif isinstance(node, dict):
            stack.extend((key, depth + 1) for key in node)
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 64 * 1024
        # Read one byte past the limit, never the whole of an oversized body.
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(
                "body_too_large", f"the body is larger than {limit} bytes", param=None
            )
        try:
            value = json.loads(
                raw.decode("utf-8"),
                parse_constant=_refuse_constant,
                parse_float=_finite_float,
                object_pairs_hook=_unique_keys,
            )
        except RecursionError:
            raise ParseError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
        except (ValueError, UnicodeDecodeError) as error:
            raise ParseError(f"malformed JSON: {error}") from None
        if _may_need_check(raw):
            _check(value)
        return value
