"""docs/architecture.md's "The layers" and "The tree" held to the code.

"The tree" names every package and every wing of `jackpot` and `tables` found on disk, and none
that is gone; "The layers" lists the packages and the two apps' wings in the order and grouping of
pyproject.toml's import contracts (`layers`, `jackpot-wings`, `tables-wings`).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.test_layers import children, packages

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text()
CONTRACTS = {
    contract["id"]: contract
    for contract in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
}
APPS = ("jackpot", "tables")


def section(text: str, heading: str, level: str = "##") -> str:
    """The text under `heading` up to the next heading of the same level or above."""
    match = re.search(
        rf"^{level} {re.escape(heading)}\n(.*?)(?=^#{{1,{len(level)}}} |\Z)", text, re.S | re.M
    )
    assert match, f"docs/architecture.md has no {level} {heading!r}"
    return match.group(1)


def named_in_tree() -> set[str]:
    """The paths the tree's items start with: `config/`, `jackpot/money/`, `jackpot/tasks.py`."""
    tree = section(DOC, "The tree").split("\nBeside the code:\n")[0]  # tests, bench, deploy, docs
    found = set()
    for path in re.findall(r"^\s*- `([a-z_]+(?:/[a-z_]+(?:\.py)?)?)/?`", tree, re.M):
        found.add(path.removesuffix(".py"))
    return found


def on_disk() -> set[str]:
    return packages() | {f"{app}/{wing}" for app in APPS for wing in children(app)}


def contract_layers(contract: str) -> list[set[str]]:
    return [
        {name.strip() for name in layer.replace("|", ":").split(":")}
        for layer in CONTRACTS[contract]["layers"]
    ]


def doc_layers(heading: str, prefix: str) -> list[set[str]]:
    """Each numbered item's names, before its dash: `jackpot.awards` | `jackpot.pools` -> one
    layer {"awards", "pools"} (the prefix `jackpot.` taken off)."""
    body = section(section(DOC, "The layers"), heading, "###")
    layers = []
    for item in re.findall(r"^\d+\. (.*?) —", body, re.M):
        names = re.findall(r"`([a-z_.]+)`", item)
        layers.append({name.removeprefix(prefix) for name in names})
    return layers


def test_the_tree_names_every_package_and_wing_on_disk() -> None:
    missing = sorted(on_disk() - named_in_tree())
    assert not missing, f"docs/architecture.md, 'The tree', does not name {', '.join(missing)}"


def test_the_tree_names_nothing_that_is_gone() -> None:
    gone = sorted(named_in_tree() - on_disk())
    assert not gone, f"docs/architecture.md, 'The tree', names {', '.join(gone)}: not on disk"


def test_the_layers_follow_the_packages_contract() -> None:
    assert doc_layers("The packages, top to bottom (contract `layers`)", "") == contract_layers(
        "layers"
    )


def test_the_layers_follow_the_wings_contracts() -> None:
    for app in APPS:
        heading = f"The wings of `{app}`, top to bottom (contract `{app}-wings`)"
        assert doc_layers(heading, f"{app}.") == contract_layers(f"{app}-wings"), app


def test_the_doc_names_the_contracts_it_follows() -> None:
    """A check of the checks: the parsing finds every layer, so an empty section cannot pass."""
    assert len(doc_layers("The packages, top to bottom (contract `layers`)", "")) == 7
    assert named_in_tree() >= {"config", "rules", "jackpot/money", "tables/rounds"}


def _slug(heading: str, seen: dict[str, int]) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to
    hyphens, a repeated one suffixed -1, -2..."""
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
    count = seen.get(slug, 0)
    seen[slug] = count + 1
    return slug if count == 0 else f"{slug}-{count}"


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    fenced = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (heading := re.match(r"#{1,6} (.*)$", line)):
            found.add(_slug(heading.group(1), seen))
    return found


def test_the_docs_index_lists_every_document_and_its_links_land() -> None:
    docs = ROOT / "docs"
    index = (docs / "README.md").read_text()
    listed = set(re.findall(r"\]\(([a-z_]+\.md)\)", index))
    assert listed == {path.name for path in docs.glob("*.md")} - {"README.md"}
    links = re.findall(r"\]\(([a-z_]+\.md)#([^)]+)\)", index)
    assert len(links) > 60, "the sections of api.md and operations.md"
    broken = [f"{name}#{anchor}" for name, anchor in links if anchor not in anchors(docs / name)]
    assert not broken, f"docs/README.md links to no heading: {broken}"
