"""The digest of the installed code (compliance 59): what an approver pins as JACKPOT_CODE_SHA256.

The manifest is one line `sha256  path` per file the service runs from (every file under the
packages of `PACKAGES`, and `manage.py`), sorted by path, each path relative to the project's
root with `/` between its parts; the digest is the SHA-256 of that manifest. `sha256sum -c`
reads the manifest as it is, from the root.

Invariants: the same bytes give the same digest on every machine and clone (no time, owner,
mode or absolute path enters it); a byte changed, a file added, removed or renamed changes it;
what Python and the suite write beside the code (`__pycache__/`, `.pyc`, `.pyo`) and the tests
are left out. Plain hashlib and pathlib: no Django, so any layer and any script may use it.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

#: The project's packages: every file under each is part of the running code.
PACKAGES = ("config", "core", "floor", "jackpot", "rules", "simulator", "tables")
#: The files at the root the service runs from: the entry point that runs the start-up gate.
ROOT_FILES = ("manage.py",)
#: What is not the code: Python's bytecode caches, and tests (none in the packages today).
SKIPPED_DIRECTORIES = frozenset({"__pycache__", "tests"})
SKIPPED_SUFFIXES = (".pyc", ".pyo")

#: The installation's root: the directory that holds the packages.
ROOT = Path(__file__).resolve().parent.parent


def _file_sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _files(root: Path) -> list[str]:
    """The relative paths (with `/`) of the files the manifest covers under `root`."""
    found = [name for name in ROOT_FILES if (root / name).is_file()]
    seen: set[str] = set()  # directories walked, by real path: a linked loop is walked once
    for package in PACKAGES:
        # Symbolic links are followed: what they point to is what runs.
        for directory, subdirectories, files in os.walk(root / package, followlinks=True):
            seen.add(os.path.realpath(directory))
            subdirectories[:] = [
                name
                for name in subdirectories
                if name not in SKIPPED_DIRECTORIES
                and os.path.realpath(os.path.join(directory, name)) not in seen
            ]
            relative = Path(directory).relative_to(root).as_posix()
            found += [f"{relative}/{name}" for name in files if not name.endswith(SKIPPED_SUFFIXES)]
    return sorted(found)


def manifest(root: Path = ROOT) -> str:
    """The manifest of the code under `root`: `sha256  path` a line, sorted by path.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as scratch:
    ...     _ = (Path(scratch) / "manage.py").write_bytes(b"")
    ...     manifest(Path(scratch))
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  manage.py\\n'
    """
    return "".join(f"{_file_sha256(root / path)}  {path}\n" for path in _files(root))


def digest(root: Path = ROOT) -> str:
    """The SHA-256 (64 hex digits) of `manifest(root)`."""
    return hashlib.sha256(manifest(root).encode("utf-8", "surrogateescape")).hexdigest()


@cache
def installed() -> str:
    """This installation's digest, computed once per process. The files do not change under a
    running process: a deployment replaces the tree and restarts the processes, and every start
    runs the gate, which computes it again in a process of its own."""
    return digest(ROOT)
