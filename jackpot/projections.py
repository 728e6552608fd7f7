"""Awards and pools as the audit chains say they must be, compared with their rows.

An award row and a pool's parameters are projections of events: the rows are not append-only
(an award's status moves, a pool's counters move), so the chain, not the row, is the record.
`verify_journal` feeds every event of a verified chain to `Projections.observe`, then
`Projections.problems` compares:
- each award with what its round's `round.settled` event created (pool, round, seat, kind,
  amount, status, sequence, time) and what the later `award.<status>` events of its pool's chain
  did (status; who verified, approved, paid or voided it, from the event's actor `user:<name>`,
  and when, from the event's time; the verification note and the void's reason), and who asked
  for a jackpot's void, when and why (`award.void_requested`, undone by `award.void_cancelled`);
- each pool's parameters with its `pool.created` event and every later `pool.changed` event's
  `after` (however a change was approved, its application is a `pool.changed` event).
A user renamed in the admin (`staff.changed`, on the admin chain) keeps their earlier names.

Each problem names the award or pool and the chain and sequence of its last event, so a row
edited by direct SQL is reported at the point of the chain it contradicts. What a broken chain
said is not trusted: awards and pools whose events are on a chain that failed are not compared
(the chain's own failure is the report).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jackpot.changes import (
    POOL_FIELDS,  # as `pool.created` records them, `pool.changed` changes them
)
from jackpot.ledger import pool_chain
from jackpot.models import AuditEvent, Award, AwardStatus, Pool

#: What an award step records of its user, by the status it moves the award to.
STEP_FIELDS = {
    AwardStatus.VERIFIED: ("verified_by", "verified_at"),
    AwardStatus.APPROVED: ("approved_by", "approved_at"),
    AwardStatus.PAID: ("paid_by", "paid_at"),
    AwardStatus.VOID: ("voided_by", "voided_at"),
}
AWARD_FIELDS = (
    "pool",
    "round",
    "seat",
    "kind",
    "amount_cents",
    "status",
    "sequence",
    "created_at",
    "verified_by",
    "verified_at",
    "verification_note",
    "approved_by",
    "approved_at",
    "paid_by",
    "paid_at",
    "voided_by",
    "voided_at",
    "void_reason",
    "void_requested_by",
    "void_requested_at",
    "void_request_reason",
)
#: The steps that change who asked for a jackpot's void, not the award's status.
VOID_REQUEST_KINDS = frozenset({"award.void_requested", "award.void_cancelled"})
_STATUSES = frozenset(status.value for status in AwardStatus)


@dataclass
class Seen:
    """What the journal says of one row, and where it said it last."""

    fields: dict[str, Any]
    chain: str
    sequence: int
    chains: set[str] = field(default_factory=set)

    def said(self, event: AuditEvent) -> None:
        self.chain, self.sequence = event.chain, event.sequence
        self.chains.add(event.chain)


@dataclass(frozen=True)
class Problem:
    message: str
    chain: str | None
    sequence: int | None


def _user(actor: str) -> str | None:
    return actor.removeprefix("user:") if actor.startswith("user:") else actor


class Projections:
    def __init__(self) -> None:
        self.awards: dict[int, Seen] = {}
        self.steps: list[AuditEvent] = []  # in each pool chain's order; applied after creation
        self.pools: dict[int, Seen] = {}
        self.renames: list[tuple[str, str]] = []

    def observe(self, event: AuditEvent) -> None:
        """Take in one event of a chain whose links were verified."""
        payload = event.payload if isinstance(event.payload, dict) else {}
        if event.kind == "round.settled":
            for award in payload.get("awards") or ():
                seen = Seen(
                    {
                        "pool": payload.get("pool"),
                        "round": payload.get("round"),
                        "seat": award.get("seat"),
                        "kind": award.get("kind"),
                        "amount_cents": award.get("amount_cents"),
                        "status": award.get("status"),
                        "sequence": award.get("sequence"),
                        "created_at": event.occurred_at,
                        "verification_note": "",
                        "void_reason": "",
                        "void_requested_by": None,
                        "void_requested_at": None,
                        "void_request_reason": "",
                        **{name: None for pair in STEP_FIELDS.values() for name in pair},
                    },
                    event.chain,
                    event.sequence,
                )
                # Its steps are on its pool's chain: that chain broken, they are unknown.
                seen.chains.update({event.chain, pool_chain(int(payload.get("pool") or 0))})
                self.awards[int(award.get("id"))] = seen
        elif event.kind.startswith("award.") and (
            payload.get("to") in _STATUSES or event.kind in VOID_REQUEST_KINDS
        ):
            self.steps.append(event)
        elif event.kind == "pool.created":
            seen = Seen(
                {name: payload.get(name) for name in POOL_FIELDS}, event.chain, event.sequence
            )
            seen.chains.add(event.chain)
            self.pools[int(payload["pool"])] = seen
        elif event.kind == "pool.changed":
            pool = self.pools.get(int(payload.get("pool", 0)))
            if pool is not None:
                after = payload.get("after") or {}
                pool.fields.update({k: v for k, v in after.items() if k in POOL_FIELDS})
                pool.said(event)
        elif event.kind == "staff.changed":
            before = (payload.get("before") or {}).get("username")
            after = (payload.get("after") or {}).get("username")
            if before and after and before != after:
                self.renames.append((str(before), str(after)))

    def _apply_steps(self) -> list[Problem]:
        problems = []
        for event in self.steps:
            payload = event.payload
            award = self.awards.get(int(payload.get("award", 0)))
            if award is None:
                problems.append(
                    Problem(
                        f"award {payload.get('award')}: a step of an award no round created",
                        event.chain,
                        event.sequence,
                    )
                )
                continue
            if event.kind in VOID_REQUEST_KINDS:
                requested = event.kind == "award.void_requested"
                award.fields["void_requested_by"] = _user(event.actor) if requested else None
                award.fields["void_requested_at"] = event.occurred_at if requested else None
                award.fields["void_request_reason"] = payload.get("reason", "") if requested else ""
                award.said(event)
                continue
            to = AwardStatus(payload["to"])
            award.fields["status"] = to.value
            if to in STEP_FIELDS:
                by, at = STEP_FIELDS[to]
                award.fields[by] = _user(event.actor)
                award.fields[at] = event.occurred_at
            if to == AwardStatus.VERIFIED:
                award.fields["verification_note"] = payload.get("note", "")
            if to == AwardStatus.VOID:  # a jackpot's void, confirmed: the reason it was asked for
                award.fields["void_reason"] = payload.get(
                    "reason", award.fields["void_request_reason"]
                )
            award.said(event)
        return problems

    def _names(self, username: str) -> set[str]:
        """A user's current name and every name they had before a rename."""
        names = {username}
        grew = True
        while grew:
            grew = False
            for before, after in self.renames:
                if after in names and before not in names:
                    names.add(before)
                    grew = True
        return names

    def problems(self, broken_chains: set[str]) -> list[Problem]:
        """Every award and pool row that differs from what the journal says, in id order."""
        found = self._apply_steps()
        found += self._award_problems(broken_chains)
        found += self._pool_problems(broken_chains)
        return found

    def _award_problems(self, broken_chains: set[str]) -> list[Problem]:
        found = []
        rows = Award.objects.order_by("pk").values(
            "pk",
            "pool_id",
            "round_id",
            "seat",
            "kind",
            "amount_cents",
            "status",
            "sequence",
            "created_at",
            "verified_by__username",
            "verified_at",
            "verification_note",
            "approved_by__username",
            "approved_at",
            "paid_by__username",
            "paid_at",
            "voided_by__username",
            "voided_at",
            "void_reason",
            "void_requested_by__username",
            "void_requested_at",
            "void_request_reason",
        )
        listed = set()
        for row in rows:
            pk = row["pk"]
            listed.add(pk)
            seen = self.awards.get(pk)
            if seen is None:
                found.append(Problem(f"award {pk}: no round.settled event created it", None, None))
                continue
            if seen.chains & broken_chains:
                continue
            for name in AWARD_FIELDS:
                actual = row.get(f"{name}_id", row.get(f"{name}__username", row.get(name)))
                wanted = seen.fields[name]
                if name.endswith("_by") and actual is not None and wanted is not None:
                    same = wanted in self._names(str(actual))  # renamed since: an old name
                else:
                    same = actual == wanted
                if not same:
                    found.append(
                        Problem(
                            f"award {pk}: {name} is {_show(actual)}, the journal says "
                            f"{_show(wanted)} (chain {seen.chain} sequence {seen.sequence})",
                            seen.chain,
                            seen.sequence,
                        )
                    )
        for pk in sorted(set(self.awards) - listed):
            seen = self.awards[pk]
            found.append(
                Problem(
                    f"award {pk}: in the journal (chain {seen.chain} sequence {seen.sequence}), "
                    "not in the awards",
                    seen.chain,
                    seen.sequence,
                )
            )
        return found

    def _pool_problems(self, broken_chains: set[str]) -> list[Problem]:
        found = []
        for row in Pool.objects.order_by("pk").values("pk", *POOL_FIELDS):
            seen = self.pools.get(row["pk"])
            if seen is None:
                found.append(
                    Problem(f"pool {row['pk']}: no pool.created event created it", None, None)
                )
                continue
            if seen.chains & broken_chains:
                continue
            for name in POOL_FIELDS:
                if row[name] != seen.fields[name]:
                    found.append(
                        Problem(
                            f"pool {row['pk']}: {name} is {_show(row[name])}, the journal says "
                            f"{_show(seen.fields[name])} "
                            f"(chain {seen.chain} sequence {seen.sequence})",
                            seen.chain,
                            seen.sequence,
                        )
                    )
        return found


def _show(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else repr(value)
