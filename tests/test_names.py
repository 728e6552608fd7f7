"""One word per thing (docs/glossary.md): a wire body never shares its name with a class of the
domain, so that a reader of `Odds` or `Payout` knows which side of the API it is on.

The wire's names in the OpenAPI schema stay (clients generated from it use them); the domain's
classes take names of their own, and a body that shows a Django model of the same name is
`<Name>Body`, titled with the schema's name (tests/api/test_schema.py holds the schema to it).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import defaultdict
from pathlib import Path
from typing import get_args

from core.wire import Body, Query
from rules.boxes import BoxName
from rules.hands import Category
from tables.bodies.round_reads import RoundStateName
from tables.bodies.seats import BoxText
from tables.bodies.vocabulary import CategoryName
from tables.models import RoundState

ROOT = Path(__file__).resolve().parents[1]


def _classes() -> dict[str, set[type]]:
    """Every class defined in a module of config, core, jackpot and tables (not their
    migrations), by name."""
    found: dict[str, set[type]] = defaultdict(set)
    for package in ("config", "core", "jackpot", "tables"):
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            if ".migrations" in info.name or info.name.startswith("config.settings"):
                continue
            module = importlib.import_module(info.name)
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ == module.__name__:
                    found[cls.__name__].add(cls)
    return found


def _is_wire(cls: type) -> bool:
    return issubclass(cls, Body | Query)


def test_no_wire_body_shares_its_name_with_a_domain_class() -> None:
    clashes = {
        name: group
        for name, group in _classes().items()
        if any(map(_is_wire, group)) and not all(map(_is_wire, group))
    }
    named = {
        name: sorted(f"{cls.__module__}.{name}" for cls in group) for name, group in clashes.items()
    }
    assert clashes == {}, named


def test_the_wires_words_for_a_domain_enum_are_its_values() -> None:
    """Each word is written twice on purpose: the wire's literal (inline in the schema, as
    clients see it) and the domain's enum; this keeps them one list."""
    assert get_args(RoundStateName) == tuple(RoundState.values)
    assert get_args(BoxText) == tuple(BoxName)
    assert get_args(CategoryName) == tuple(category.name.lower() for category in Category)
