"""The rules engine stays pure: no Django, no I/O, in every module under rules/."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
MODULE_FILES = sorted(RULES.rglob("*.py"))

FORBIDDEN_MODULES = {
    "django",
    "os",
    "io",
    "pathlib",
    "socket",
    "subprocess",
    "shutil",
    "requests",
    "urllib",
    "http",
    "sqlite3",
    "logging",
    "tempfile",
    "pickle",
}
FORBIDDEN_CALLS = {"open", "print", "input", "breakpoint", "exec", "eval", "__import__"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_the_walk_finds_the_engine() -> None:
    names = {module_name(path) for path in MODULE_FILES}
    assert {"rules", "rules.cards", "rules.hands"} <= names


@pytest.mark.parametrize("path", MODULE_FILES, ids=lambda path: path.name)
def test_no_django_no_io(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    problems: list[str] = []
    for node in ast.walk(tree):
        imported: list[tuple[int, str]] = []
        if isinstance(node, ast.Import):
            imported = [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported = [(node.lineno, node.module)]
        for line, name in imported:
            if name.split(".")[0] in FORBIDDEN_MODULES:
                problems.append(f"line {line}: imports {name}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in FORBIDDEN_CALLS
        ):
            problems.append(f"line {node.lineno}: calls {node.func.id}()")
    assert not problems, f"{path.relative_to(ROOT)}: {problems}"


@pytest.mark.parametrize("path", MODULE_FILES, ids=lambda path: path.name)
def test_importing_does_not_load_django(path: Path) -> None:
    name = module_name(path)
    script = (
        f"import sys, importlib\nimportlib.import_module({name!r})\nprint('django' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert result.stdout.strip() == "False", result.stderr


def test_importing_hands_builds_nothing_and_skips_numpy() -> None:
    script = (
        "import sys\n"
        "import rules.hands as hands\n"
        "print('numpy' in sys.modules, bool(hands._CARD_KEY))\n"
        "hands.rank7(51, 47, 43, 39, 35, 0, 1)\n"
        "print(bool(hands._CARD_KEY))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert result.stdout.split() == ["False", "False", "True"], result.stderr
