"""A strict JSON parser: malformed, deeply nested or non-standard JSON is a 400, never a 500,
and a body over DATA_UPLOAD_MAX_MEMORY_SIZE is a 413 without being read whole.

The standard parser lets a RecursionError (very deep nesting) escape as a 500 and accepts NaN and
Infinity; money never needs either.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from config.errors import PayloadTooLarge

MAX_DEPTH = 32


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def _depth(value: Any, limit: int = MAX_DEPTH) -> int:
    stack = [(value, 1)]
    deepest = 0
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)
    return deepest


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
                raw.decode("utf-8"), parse_constant=_refuse_constant, parse_float=_finite_float
            )
        except RecursionError:
            raise ParseError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
        except (ValueError, UnicodeDecodeError) as error:
            raise ParseError(f"malformed JSON: {error}") from None
        if _depth(value) > MAX_DEPTH:
            raise ParseError(f"JSON nested deeper than {MAX_DEPTH} levels")
        return value
