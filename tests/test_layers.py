"""The layers contract of pyproject.toml places every module, so a new one cannot slip past it.

import-linter checks only the modules a contract names: a new `jackpot/odds.py` listed in no layer
could import anything. These tests fail until each new module of config, jackpot and tables is
put in a layer, and until the rules engine's contract forbids it every other module of tables.
"""

from __future__ import annotations

import pkgutil
import tomllib
from pathlib import Path

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
    assert {"jackpot.ledger", "jackpot.api", "tables.rules", "config.errors"} <= (
        children("config") | children("jackpot") | children("tables")
    )


def test_every_module_of_the_project_is_in_a_layer() -> None:
    modules = children("config") | children("jackpot") | children("tables")
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
