"""The layers contract of pyproject.toml places every module, so a new one cannot slip past it.

import-linter checks only the modules a contract names: a new `jackpot/odds.py` listed in no layer
could import anything. These tests fail until each new module of config, core, jackpot and tables is
put in a layer, and until the rules engine's contract forbids it every other module of tables.
"""

from __future__ import annotations

import ast
import pkgutil
import re
import tomllib
from pathlib import Path

from django.apps import apps

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = {
    contract["id"]: contract
    for contract in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
}


def children(package: str) -> set[str]:
    """The modules and packages directly inside `package`, found on disk (nothing is imported)."""
    return {f"{package}.{found.name}" for found in pkgutil.iter_modules([str(ROOT / package)])}


def layered() -> list[str]:
    return [
        module.strip()
        for layer in CONTRACTS["layers"]["layers"]
        for module in layer.replace("|", ":").split(":")
    ]


def test_the_walk_finds_the_packages() -> None:
    assert {"jackpot.ledger", "jackpot.api", "tables.rules", "core.errors"} <= (
        children("config") | children("core") | children("jackpot") | children("tables")
    )


def test_every_module_of_the_project_is_in_a_layer() -> None:
    modules = children("config") | children("core") | children("jackpot") | children("tables")
    missing = sorted(modules - set(layered()))
    assert not missing, (
        f"put {', '.join(missing)} in a layer of [tool.importlinter] in pyproject.toml"
        " (README, 'Layers')"
    )


def test_no_module_is_in_two_layers() -> None:
    assert len(layered()) == len(set(layered()))


def test_the_rules_engine_may_import_no_other_module_of_tables() -> None:
    forbidden = set(CONTRACTS["rules-pure"]["forbidden_modules"])
    missing = sorted(children("tables") - {"tables.rules"} - forbidden)
    assert not missing, f"add {', '.join(missing)} to the rules-pure contract's forbidden_modules"


def test_the_progressive_has_no_reverse_accessor_into_the_tables_rows() -> None:
    """import-linter cannot see a foreign key: a tables model's key to a jackpot model gives the
    progressive, below it, an accessor into the tables' rows (`pool.tables`, `pool.rounds`) unless
    it is declared `related_name="+"` (what it needs of them it is handed: `tables.pools`)."""
    followed = sorted(
        f"{model.__name__}.{relation.get_accessor_name()} (from {relation.related_model.__name__})"
        for model in apps.get_app_config("jackpot").get_models()
        for relation in model._meta.related_objects
        if relation.related_model._meta.app_label == "tables"
    )
    assert followed == []


def _walk() -> list[str]:
    """The modules README's "A round's result, from the view to the SQL" names, in order."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## A round's result, from the view to the SQL")[1].split("\n## ")[0]
    named: list[str] = []
    for path in re.findall(r"`((?:config|core|jackpot|tables)/[\w/]+\.py)`", section):
        module = path.removesuffix(".py").replace("/", ".")
        if module not in named:
            named.append(module)
    return named


def _imports(module: str) -> set[str]:
    """The project's modules `module` imports (`from a.b import c` counts `a.b.c` when it is a
    module, else `a.b`)."""
    tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_readmes_walk_of_a_result_never_goes_back_to_a_module_already_read() -> None:
    walk = _walk()
    assert len(walk) >= 15, walk
    backwards = {
        module: sorted(set(walk[:at]) & _imports(module)) for at, module in enumerate(walk)
    }
    assert {module: back for module, back in backwards.items() if back} == {}
