"""The tree's shape in figures: what a newcomer meets before reading a line.

Prints, for the project's packages (tests, bench and migrations left out): the modules per
folder, the import arrows between the project's modules and between its folders, the longest
import chain, the longest module and function, and the length of the README and of docs/.
Reads the files only (nothing is imported), so it runs on any checkout:

    python bench/layout.py [ROOT]
"""

from __future__ import annotations

import ast
import json
import sys
from collections import Counter
from functools import cache
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
SKIP = {"tests", "bench", "migrations", "deploy", "docs", ".venv", "var", "artifacts"}


def packages() -> list[str]:
    return sorted(
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if path.parent.name not in SKIP and path.parent.name != "tests"
    )


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in packages():
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if SKIP & set(parts):
                continue
            name = ".".join(parts).removesuffix(".__init__")
            found[name] = path
    return found


MODULES = modules()


def resolve(name: str) -> str | None:
    """The project module `name` is, or is in (a name imported from a module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str) -> set[str]:
    tree = ast.parse(MODULES[module].read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            target = resolve(name)
            if target and target != module and not module.startswith(target + "."):
                found.add(target)
    return found


ARROWS = {module: imports(module) for module in MODULES}


@cache
def depth(module: str, seen: frozenset[str] = frozenset()) -> int:
    below = [depth(target, seen | {module}) for target in ARROWS[module] if target not in seen]
    return 1 + max(below, default=0)


def folder(module: str) -> str:
    return str(MODULES[module].parent.relative_to(ROOT))


def room(module: str) -> str:
    """A room of an app: a module at its root or one of its folders (a wing), as a reader meets
    them; elsewhere, the package."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] in ("jackpot", "tables") else parts[0]


def rooms(app: str) -> dict[str, set[str]]:
    arrows: dict[str, set[str]] = {}
    for source, targets in ARROWS.items():
        if source.startswith(app + ".") and ".migrations" not in source:
            here = room(source)
            arrows.setdefault(here, set()).update(
                room(t) for t in targets if t.startswith(app + ".") and room(t) != here
            )
    return arrows


def room_depth(arrows: dict[str, set[str]]) -> int:
    @cache
    def down(here: str, seen: frozenset[str]) -> int:
        below = [down(t, seen | {here}) for t in arrows.get(here, ()) if t not in seen]
        return 1 + max(below, default=0)

    return max(down(here, frozenset()) for here in arrows)


def functions() -> tuple[int, str]:
    longest = (0, "")
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                longest = max(longest, (lines, f"{module}.{node.name}"))
    return longest


def words(path: Path) -> int:
    return len(path.read_text().split())


def main() -> None:
    per_folder = Counter(
        folder(module) for module in MODULES if MODULES[module].name != "__init__.py"
    )
    top = {m.split(".")[0] for m in MODULES}
    folder_arrows = {
        (folder(source), folder(target))
        for source, targets in ARROWS.items()
        for target in targets
        if folder(source) != folder(target)
    }
    back_and_forth = sorted(
        f"{a} <-> {b}" for a, b in folder_arrows if (b, a) in folder_arrows and a < b
    )
    app_arrows = {
        (source.split(".")[0], target.split(".")[0])
        for source, targets in ARROWS.items()
        for target in targets
        if source.split(".")[0] != target.split(".")[0]
    }
    docs = sorted((ROOT / "docs").glob("*.md"))
    lines, longest_function = functions()
    longest_module = max((len(p.read_text().splitlines()), m) for m, p in MODULES.items())
    figures = {
        "packages": sorted(top),
        "modules": len(MODULES),
        "modules_per_folder": dict(sorted(per_folder.items())),
        "import_arrows": sum(len(t) for t in ARROWS.values()),
        "jackpot_import_arrows": sum(
            len({t for t in targets if t.startswith("jackpot")})
            for source, targets in ARROWS.items()
            if source.startswith("jackpot")
        ),
        "longest_chain": max(depth(m) for m in MODULES),
        "rooms": {
            app: {
                "rooms": len(rooms(app)),
                "arrows": sum(len(t) for t in rooms(app).values()),
                "levels": room_depth(rooms(app)),
            }
            for app in ("jackpot", "tables")
        },
        "folders_importing_each_other": back_and_forth,
        "apps_importing_each_other": sorted(
            f"{a} <-> {b}" for a, b in app_arrows if (b, a) in app_arrows and a < b
        ),
        "longest_module": {"module": longest_module[1], "lines": longest_module[0]},
        "longest_function": {"function": longest_function, "lines": lines},
        "readme_lines": len((ROOT / "README.md").read_text().splitlines()),
        "docs_words": {path.name: words(path) for path in docs},
        "docs_words_total": sum(words(path) for path in docs),
    }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
