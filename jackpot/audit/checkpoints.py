"""Checkpoints: what a passing verification of the journal carries forward, keyed and anchored.

A checkpoint's `state` holds, in one verified snapshot: each chain's position, the highest
transfer and award ids, each pool's balances and totals by code, the projections carried, the
rounds' part, and the counts.

Invariants:
- `store()` writes the row (append-only) with a `journal.checkpoint` event on the `checkpoints`
  chain naming the SHA-256 of its state: a row or event written without the journal's key does
  not verify, and the chain is anchored like every other;
- `latest()` takes the newest checkpoint that verifies, reporting those passed over: a forged
  checkpoint costs a longer walk, never a hidden fault; an older `FORMAT` is passed over once;
- `at_or_before(instant)` is the same for a figure of the past.

The state's parts and the attacks they answer: docs/accounting.md, "The modules, in detail".
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from jackpot.models import AuditChain, AuditEvent, Checkpoint
from jackpot.money import ledger, locks
from jackpot.money.canonical import canonical_json, chain_hash

#: 2: the layer above's `rounds` carry the register's rows (`tables.audit.records`); 3: the
#: staff's names carry from when each account held each (`jackpot.staff.records.Names`).
FORMAT = 3
CHAIN = ledger.CHECKPOINT_CHAIN
KIND = "journal.checkpoint"
ACTOR = "system:verification"
#: How many checkpoints `latest()` goes back over before it gives up and starts from genesis.
LOOK_BACK = 20


@dataclass
class State:
    positions: dict[str, tuple[int, str]] = field(default_factory=dict)
    transfer_id: int = 0
    award_id: int = 0
    balances: dict[int, dict[str, int]] = field(default_factory=dict)
    codes: dict[int, dict[str, int]] = field(default_factory=dict)
    projections: dict[str, Any] | None = None
    rounds: dict[str, Any] | None = None
    events: int = 0
    transfers: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "positions": {chain: [seq, digest] for chain, (seq, digest) in self.positions.items()},
            "transfer_id": self.transfer_id,
            "award_id": self.award_id,
            "balances": {str(pool): kinds for pool, kinds in self.balances.items()},
            "codes": {str(pool): codes for pool, codes in self.codes.items()},
            "projections": self.projections,
            "rounds": self.rounds,
            "events": self.events,
            "transfers": self.transfers,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> State:
        if isinstance(data.get("format"), int) and data["format"] < FORMAT:
            raise Outdated(data["format"])
        if data.get("format") != FORMAT:
            raise ValueError(f"checkpoint format {data.get('format')!r} is not {FORMAT}")
        return cls(
            positions={chain: (int(seq), str(h)) for chain, (seq, h) in data["positions"].items()},
            transfer_id=int(data["transfer_id"]),
            award_id=int(data["award_id"]),
            balances={int(pool): dict(kinds) for pool, kinds in data["balances"].items()},
            codes={int(pool): dict(codes) for pool, codes in data["codes"].items()},
            projections=data["projections"],
            rounds=data["rounds"],
            events=int(data["events"]),
            transfers=int(data["transfers"]),
        )


def digest(state: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(state)).hexdigest()


@dataclass(frozen=True)
class Loaded:
    """The checkpoint a walk starts from (None: from the first event), and every newer
    checkpoint that was refused, as (chain sequence, problem)."""

    checkpoint: Checkpoint | None
    state: State | None
    refused: tuple[tuple[int, str], ...] = ()


def _refusal(event: AuditEvent, key: bytes) -> str | None:
    """Why the checkpoint event `event` cannot be trusted, or None."""
    if event.kind != KIND:
        return f"is a {event.kind!r} event, not a checkpoint"
    if chain_hash(key, event.prev_hash, ledger.event_content(event, [])) != event.hash:
        return "content does not match its hash"
    payload = event.payload if isinstance(event.payload, dict) else {}
    pk = payload.get("checkpoint")
    row = Checkpoint.objects.filter(pk=pk).first() if isinstance(pk, int) else None
    if row is None:
        return f"checkpoint {payload.get('checkpoint')} is missing"
    if digest(row.state) != payload.get("sha256"):
        return f"checkpoint {row.pk}'s state does not match the SHA-256 its event recorded"
    return None


class Outdated(Exception):
    """A checkpoint of an older format: its state lacks what a walk now carries."""


def latest() -> Loaded:
    """The newest checkpoint whose event verifies under the journal's key and whose state
    matches it (see the module's docstring); read in the caller's snapshot."""
    head = AuditChain.objects.filter(key=CHAIN).first()
    if head is None:
        return Loaded(None, None)
    key, refused = ledger.journal_key(), list[tuple[int, str]]()
    events = AuditEvent.objects.filter(chain=CHAIN, sequence__lte=head.sequence).order_by(
        "-sequence"
    )
    found = {event.sequence: event for event in events[:LOOK_BACK]}
    for sequence in range(head.sequence, max(head.sequence - LOOK_BACK, 0), -1):
        event = found.get(sequence)
        problem = "is missing" if event is None else _refusal(event, key)
        if event is not None and problem is None:
            row = Checkpoint.objects.get(pk=event.payload["checkpoint"])
            try:
                return Loaded(row, State.from_json(row.state), tuple(refused))
            except Outdated:
                break  # no fault, and every older checkpoint is older still: from the first event
            except (KeyError, TypeError, ValueError) as error:
                problem = f"checkpoint {row.pk} cannot be read: {error}"
        refused.append((sequence, problem or "refused"))
    return Loaded(None, None, tuple(refused))


def at_or_before(instant: datetime) -> Loaded:
    """The newest checkpoint written at or before `instant` that verifies as `latest()` asks,
    going back over the ones that do not (reported in `refused`): what a figure of the journal
    at a past instant starts from (`jackpot.reporting.liability`). Every event such a checkpoint
    covers committed before it was written, so none is later than `instant`. One index range on the
    checkpoints' events (`kind`, `occurred_at`), LOOK_BACK of them at most."""
    key, refused = ledger.journal_key(), list[tuple[int, str]]()
    events = AuditEvent.objects.filter(chain=CHAIN, kind=KIND, occurred_at__lte=instant)
    for event in events.order_by("-sequence")[:LOOK_BACK]:
        problem = _refusal(event, key)
        if problem is None:
            row = Checkpoint.objects.get(pk=event.payload["checkpoint"])
            try:
                return Loaded(row, State.from_json(row.state), tuple(refused))
            except Outdated:
                break  # every older one is older still: from the first event
            except (KeyError, TypeError, ValueError) as error:
                problem = f"checkpoint {row.pk} cannot be read: {error}"
        refused.append((event.sequence, problem))
    return Loaded(None, None, tuple(refused))


def covers(state: State) -> bool:
    """Whether the newest checkpoint already reaches every position of `state` (the checkpoints'
    own chain aside): storing `state` would add nothing. Reads the newest one's row only."""
    head = AuditEvent.objects.filter(chain=CHAIN).order_by("-sequence").first()
    payload = head.payload if head is not None and isinstance(head.payload, dict) else {}
    row = Checkpoint.objects.filter(pk=payload.get("checkpoint") or 0).first()
    if row is None:
        return False
    newest = {chain: tuple(at) for chain, at in row.state.get("positions", {}).items()}
    wanted = {chain: tuple(at) for chain, at in state.positions.items()}
    newest.pop(CHAIN, None)
    wanted.pop(CHAIN, None)
    return newest == wanted


@transaction.atomic
def store(state: State, *, full: bool) -> Checkpoint:
    """Write a checkpoint and its `journal.checkpoint` event (`locks.Lock.CHECKPOINT_CHAIN`,
    taken alone)."""
    data = state.as_json()
    now = timezone.now()
    row = Checkpoint.objects.create(created_at=now, full=full, state=data, sha256=digest(data))
    ledger.record(
        chain=locks.chain_slot(CHAIN),
        kind=KIND,
        actor=ACTOR,
        occurred_at=now,
        payload={
            "checkpoint": row.pk,
            "sha256": row.sha256,
            "full": full,
            "events": state.events,
            "transfers": state.transfers,
        },
    )
    return row
