"""One registry of error codes (core.codes): every code the code base raises is in it, and
docs/api.md's "Error codes" table lists exactly its codes, with the same status and meaning.

The code base is read, not run: every call that makes an error (`ApiError` and its subclasses,
`RulesError`, `error_body`) with a literal code, every `ErrorCode.X` named, and the DRF
exceptions' table of config.handlers.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from config.handlers import _DRF_TYPES
from core.codes import ERRORS, ErrorCode

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("config", "core", "jackpot", "tables")
MAKERS = {"ApiError", "NotFound", "Conflict", "Forbidden", "PayloadTooLarge", "RulesError"}


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def raised_codes() -> dict[str, set[str]]:
    """Each literal error code in the code base, with the files that use it."""
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text(), filename=str(path))
            where = str(path.relative_to(ROOT))
            for node in ast.walk(tree):
                codes: list[ast.expr] = []
                if isinstance(node, ast.Call) and _name(node.func) in MAKERS and node.args:
                    codes.append(node.args[0])
                elif isinstance(node, ast.Call) and _name(node.func) == "error_body":
                    codes.extend(node.args[1:2])
                elif (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "ErrorCode"
                ):
                    found.setdefault(ErrorCode[node.attr].value, set()).add(where)
                for code in codes:
                    if isinstance(code, ast.Constant) and isinstance(code.value, str):
                        found.setdefault(code.value, set()).add(where)
    return found


def test_the_walk_finds_codes_in_every_layer() -> None:
    found = raised_codes()
    assert {"invalid_bet", "round_not_found", "four_eyes", "internal_error"} <= set(found)


def test_every_code_raised_is_in_the_registry() -> None:
    registry = {code.value for code in ErrorCode}
    found = raised_codes()
    unknown = {code: sorted(files) for code, files in found.items() if code not in registry}
    assert not unknown, f"add these codes to core/codes.py (and docs/api.md): {unknown}"


def test_the_framework_errors_are_in_the_registry() -> None:
    assert {code for _, code in _DRF_TYPES.values()} <= {code.value for code in ErrorCode}


def test_every_code_has_a_status_and_a_meaning() -> None:
    assert set(ERRORS) == set(ErrorCode)
    assert all(400 <= status < 600 and meaning for status, meaning in ERRORS.values())


ROW = re.compile(r"^\| `(?P<code>[a-z_]+)` \| (?P<status>\d{3}) \| (?P<meaning>.+?) \|$")


def documented() -> dict[str, tuple[int, str]]:
    """docs/api.md's "Error codes" table: code -> (status, meaning)."""
    text = (ROOT / "docs" / "api.md").read_text()
    section = text.split("### Error codes", 1)[1].split("\n#", 1)[0]
    rows = [ROW.match(line) for line in section.splitlines() if line.startswith("| `")]
    assert all(rows), "every row of the table is | `code` | status | meaning |"
    return {row["code"]: (int(row["status"]), row["meaning"]) for row in rows if row}


def test_the_docs_list_exactly_the_registry() -> None:
    docs = documented()
    registry = {code.value: entry for code, entry in ERRORS.items()}
    assert sorted(set(registry) - set(docs)) == [], "codes missing from docs/api.md"
    assert sorted(set(docs) - set(registry)) == [], "docs/api.md lists codes the registry lacks"
    assert docs == registry, "docs/api.md says another status or meaning than core/codes.py"


def test_the_docs_list_the_codes_in_the_registrys_order() -> None:
    assert list(documented()) == [code.value for code in ErrorCode]
