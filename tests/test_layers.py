"""The import contracts of pyproject.toml place every package and wing, so a new one cannot slip
past them.

import-linter checks only the modules a contract names: a new top-level package, or a new wing of
`jackpot` or `tables`, listed in no layer could import anything. These tests fail until it is
placed (docs/architecture.md, "The layers").
"""

from __future__ import annotations

import ast
import pkgutil
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
#: Not the service's code: the tests, the benches, the deployment's scripts.
NOT_CODE = {"tests", "bench", "deploy", "docs", "artifacts", "var"}
#: History: a migration may import what it needed when it was written.
HISTORY = {"migrations"}


def packages() -> set[str]:
    """The project's top-level packages, found on disk (nothing is imported)."""
    return {
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if path.parent.name not in NOT_CODE and not path.parent.name.startswith(".")
    }


def children(package: str) -> set[str]:
    """The modules and packages directly inside `package`."""
    found = pkgutil.iter_modules([str(ROOT / package)])
    return {child.name for child in found if child.name not in HISTORY}


def placed(contract: str) -> list[str]:
    return [
        name.strip()
        for layer in CONTRACTS[contract]["layers"]
        for name in layer.replace("|", ":").split(":")
    ]


def test_the_walk_finds_the_packages() -> None:
    assert {"config", "core", "floor", "jackpot", "rules", "simulator", "tables"} <= packages()


def test_every_package_is_in_a_layer_once() -> None:
    layers = placed("layers")
    assert sorted(layers) == sorted(packages()), "put the package in the layers contract"
    assert sorted(CONTRACTS["no-cycles"]["ancestors"]) == sorted(packages())


def test_every_wing_of_the_two_apps_is_in_a_layer_once() -> None:
    for app in ("jackpot", "tables"):
        wings = placed(f"{app}-wings")
        assert len(wings) == len(set(wings)), wings
        missing = sorted(children(app) - set(wings))
        assert not missing, f"put {', '.join(missing)} in the {app}-wings contract"


def test_the_rules_engine_may_import_no_other_package() -> None:
    forbidden = set(CONTRACTS["rules-pure"]["forbidden_modules"])
    assert packages() - {"rules"} <= forbidden


def _imports_of(package: str) -> set[str]:
    """The top-level packages `package`'s modules import, migrations left out."""
    found: set[str] = set()
    for path in (ROOT / package).rglob("*.py"):
        if HISTORY & set(path.parts):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
    return found & packages()


def test_the_two_apps_import_each_other_one_way() -> None:
    """The tables feed the progressive: `tables` imports `jackpot`, never the reverse (what a
    pool change needs of its tables, the tables app registers: `jackpot.pools.at_rest`)."""
    assert "jackpot" in _imports_of("tables")
    assert _imports_of("jackpot") & {"tables", "floor", "config", "simulator"} == set()


def test_the_staff_pages_have_no_models() -> None:
    assert list(apps.get_app_config("floor").get_models()) == []


def test_the_progressive_has_no_reverse_accessor_into_the_tables_rows() -> None:
    """import-linter cannot see a foreign key: a tables model's key to a jackpot model gives the
    progressive, below it, an accessor into the tables' rows (`pool.tables`, `pool.rounds`) unless
    it is declared `related_name="+"`."""
    followed = sorted(
        f"{model.__name__}.{relation.get_accessor_name()} (from {relation.related_model.__name__})"
        for model in apps.get_app_config("jackpot").get_models()
        for relation in model._meta.related_objects
        if relation.related_model._meta.app_label == "tables"
    )
    assert followed == []
