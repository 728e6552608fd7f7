"""The chain heads anchored outside the database (compliance requirement 33).

`write_anchor(directory)` writes, in one snapshot, every chain's head (chain, last sequence, its
hash), the UTC time and the database's identity (`DatabaseIdentity`) to a new file
`journal-anchor-<UTC time>.json` (never overwriting one), and beside it `<file>.sha256`, the
file's SHA-256 in `sha256sum` format. `manage.py anchor_journal --out DIR` runs it (daily: the
systemd timer `jackpot-anchor.timer`); the operator copies the files to storage the database's
administrators cannot write (docs/operations.md).

`check(anchors)` compares the live chains with every anchor: the event at each anchored sequence
must still exist and have the anchored hash. Someone who holds the journal's key can rewrite a
chain so that every link verifies, or cut events off its end and move its head row back; the
hashes anchored earlier then differ, or are missing, and the problem names the chain and the
anchored sequence (the lowest one that fails, per chain). An anchor whose checksum does not
match, or that was written for another database, is itself a problem.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.replicas import reading
from jackpot.audit.problems import Problem
from jackpot.models import AuditEvent, DatabaseIdentity
from jackpot.money import rows

FORMAT = 1
PREFIX = "journal-anchor-"


@dataclass(frozen=True)
class Head:
    chain: str
    sequence: int
    hash: str


@dataclass(frozen=True)
class Anchor:
    name: str
    database: str
    anchored_at: str
    heads: tuple[Head, ...]


def database_identity() -> str:
    """This database's token (made with the database; kept by a restore of it)."""
    identity, _ = DatabaseIdentity.objects.get_or_create(pk=1, defaults={"token": uuid.uuid4()})
    return str(identity.token)


def chain_keys() -> list[str]:
    """Every chain that has an event, by a skip scan of the (chain, sequence) index: one probe
    per chain, whatever the number of events."""
    with reading().cursor() as cursor:
        cursor.execute(
            "WITH RECURSIVE c(chain) AS ("
            " SELECT MIN(chain) FROM jackpot_auditevent"
            " UNION ALL SELECT (SELECT MIN(e.chain) FROM jackpot_auditevent e"
            " WHERE e.chain > c.chain) FROM c WHERE c.chain IS NOT NULL)"
            " SELECT chain FROM c WHERE chain IS NOT NULL"
        )
        return [row[0] for row in cursor.fetchall()]


def heads() -> list[Head]:
    """Every chain's last event, from the events themselves (not the head rows): one probe of
    the (chain, sequence) index per chain."""
    found = []
    for chain in sorted(chain_keys()):
        sequence, digest = (
            AuditEvent.objects.filter(chain=chain)
            .order_by("-sequence")
            .values_list("sequence", "hash")[:1]
            .get()
        )
        found.append(Head(chain, int(sequence), str(digest)))
    return found


def write_anchor(directory: Path, *, now: datetime | None = None) -> Path:
    """Write a new anchor file (and its checksum) in `directory`; return its path."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    with rows.snapshot():  # heads and identity in one snapshot
        database = database_identity()
        found = heads()
    body = {
        "format": FORMAT,
        "anchored_at": now.isoformat(),
        "database": database,
        "chains": [{"chain": h.chain, "sequence": h.sequence, "hash": h.hash} for h in found],
    }
    data = (json.dumps(body, indent=2, sort_keys=True) + "\n").encode()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{PREFIX}{now:%Y%m%dT%H%M%S%fZ}.json"
    _write_new(path, data)
    _write_new(
        path.with_name(path.name + ".sha256"),
        f"{hashlib.sha256(data).hexdigest()}  {path.name}\n".encode(),
    )
    return path


def _write_new(path: Path, data: bytes) -> None:
    """Write a file that must not exist yet, and make it durable."""
    with open(path, "xb") as out:  # "x": an existing anchor is never overwritten
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def read_anchors(directory: Path) -> tuple[list[Anchor], list[Problem]]:
    """Every anchor of `directory`, and what is wrong with the files themselves."""
    anchors: list[Anchor] = []
    problems: list[Problem] = []
    if not directory.is_dir():
        return [], [Problem(f"anchors: {directory} is not a directory")]
    for path in sorted(directory.glob(f"{PREFIX}*.json")):
        data = path.read_bytes()
        checksum = path.with_name(path.name + ".sha256")
        if not checksum.exists():
            problems.append(Problem(f"anchor {path.name}: its checksum file is missing"))
        elif checksum.read_text().split()[:1] != [hashlib.sha256(data).hexdigest()]:
            problems.append(Problem(f"anchor {path.name}: does not match its checksum"))
            continue
        try:
            body = json.loads(data)
            anchors.append(
                Anchor(
                    name=path.name,
                    database=str(body["database"]),
                    anchored_at=str(body["anchored_at"]),
                    heads=tuple(
                        Head(str(h["chain"]), int(h["sequence"]), str(h["hash"]))
                        for h in body["chains"]
                    ),
                )
            )
        except (ValueError, KeyError, TypeError):
            problems.append(Problem(f"anchor {path.name}: not an anchor file"))
    if not anchors and not problems:
        problems.append(Problem(f"anchors: no anchor in {directory}"))
    return anchors, problems


def check(anchors: list[Anchor]) -> list[Problem]:
    """The live chains against every anchor; call inside the verification's snapshot."""
    problems: list[Problem] = []
    database = database_identity()
    wanted: dict[str, dict[int, tuple[str, str]]] = defaultdict(dict)
    for anchor in anchors:
        if anchor.database != database:
            problems.append(
                Problem(
                    f"anchor {anchor.name}: of database {anchor.database}, "
                    f"this database is {database}"
                )
            )
            continue
        for head in anchor.heads:
            wanted[head.chain][head.sequence] = (head.hash, anchor.name)
    for chain in sorted(wanted):
        anchored = wanted[chain]
        live = dict(
            AuditEvent.objects.filter(chain=chain, sequence__in=list(anchored)).values_list(
                "sequence", "hash"
            )
        )
        for sequence in sorted(anchored):
            digest, name = anchored[sequence]
            if sequence not in live:
                problems.append(
                    Problem(
                        f"chain {chain} sequence {sequence}: anchored by {name}, missing: "
                        "the chain is shorter than anchored",
                        chain,
                        sequence,
                    )
                )
                break
            if live[sequence] != digest:
                problems.append(
                    Problem(
                        f"chain {chain} sequence {sequence}: its hash is not the one {name} "
                        "anchored: the chain was rewritten",
                        chain,
                        sequence,
                    )
                )
                break
    return problems
