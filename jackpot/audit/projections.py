"""Awards and pools as the audit chains say they must be, compared with their rows.

An award's and a pool's rows move (status, counters), so the chain, not the row, is the record:
`verify_journal` feeds every event of a verified chain to `ProgressiveProjection.observe`, then
`ProgressiveProjection.problems` compares each award, each pool's parameters, the staff's powers and
tokens, surveillance's records and the winners' identities with what the events say.

Invariants:
- each problem names the award or pool and the chain and sequence of its last event;
- who acted is the account that held the event's name at the event's time;
- a walk from a checkpoint (`ProgressiveProjection.resume`) carries what later events may
  change; a row edited in place that no later event touched is the next full walk's to find;
- what a broken chain said is not trusted: its awards and pools are not compared.

What is compared, field by field: docs/accounting.md, "The modules, in detail".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import F, Q

from jackpot.audit.problems import Problem
from jackpot.audit.surveillance_records import KINDS as REVIEW_KINDS
from jackpot.audit.surveillance_records import SurveillanceProjection
from jackpot.awards import winners
from jackpot.models import AWARD_GRANTED_BY, Award, AwardStatus, Pool, Transfer
from jackpot.money.ledger import ADMIN_CHAIN, pool_chain
from jackpot.pools.parameters import FIELD_DEFAULTS, POOL_FIELDS
from jackpot.staff.records import ACCOUNT_KINDS, RECORDED, Names, StaffProjection

#: The events that set a pool's status (`jackpot.pools.lifecycle`), each saying the new one.
LIFE_KINDS = frozenset({"pool.suspended", "pool.resumed", "pool.stopped"})

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
    "approval_note",
    "payment_method",
    "payment_reference",
    "payment_note",
    "corrected_cents",
)
#: What an award shows of its round, recorded at its grant (`jackpot.money.movements.Dealt`): the
#: `round.settled` event's award entry carries them for the rounds settled since issue 23; an
#: older entry carries none, and its award's are compared with what the rest of its event says
#: of the round (`_recorded`), but for the table's name and game, which no older event recorded.
RECORD_FIELDS = (
    "table_pk",
    "table_name",
    "game",
    "round_name",
    "hole_cards",
    "board",
    "winning_five",
)
_TIMES = frozenset(name for name in AWARD_FIELDS if name.endswith("_at"))
#: Who took a step, each with its time in `<step>_at` (`verified_by`, `verified_at`, ...).
_BY = tuple(name for name in AWARD_FIELDS if name.endswith("_by"))
#: Statuses after which an award takes no more step.
FINAL = frozenset({AwardStatus.PAID.value, AwardStatus.VOID.value})
#: The steps that change who asked for a jackpot's void, not the award's status.
VOID_REQUEST_KINDS = frozenset({"award.void_requested", "award.void_cancelled"})
#: A documented correction (`jackpot.pools.corrections`): of an award, it moves what is due.
CORRECTED = "pool.corrected"
_STATUSES = frozenset(status.value for status in AwardStatus)


class Event:
    """An event as the verification reads it (its columns, not a model instance). Its time is
    kept as read (`at`: the UTC time in ISO 8601, as the chain hashes it, or a datetime) and made
    a datetime only for the few events whose time a projection records."""

    __slots__ = ("actor", "at", "chain", "kind", "payload", "sequence")

    def __init__(
        self, chain: str, sequence: int, kind: str, actor: str, at: datetime | str, payload: Any
    ) -> None:
        self.chain, self.sequence, self.kind, self.actor = chain, sequence, kind, actor
        self.at, self.payload = at, payload

    @property
    def occurred_at(self) -> datetime:
        return self.at if isinstance(self.at, datetime) else datetime.fromisoformat(self.at)


@dataclass
class Seen:
    """What the journal says of one row, and where it said it last."""

    fields: dict[str, Any]
    chain: str
    sequence: int
    chains: set[str] = field(default_factory=set)

    def said(self, event: Event) -> None:
        self.chain, self.sequence = event.chain, event.sequence
        self.chains.add(event.chain)

    def carried(self) -> dict[str, Any]:
        fields = {
            name: value.isoformat() if isinstance(value, datetime) else value
            for name, value in self.fields.items()
        }
        return {
            "fields": fields,
            "chain": self.chain,
            "sequence": self.sequence,
            "chains": sorted(self.chains),
        }

    @classmethod
    def resumed(cls, carried: dict[str, Any]) -> Seen:
        fields = {
            name: datetime.fromisoformat(value) if name in _TIMES and value else value
            for name, value in carried["fields"].items()
        }
        return cls(fields, carried["chain"], carried["sequence"], set(carried["chains"]))


def _user(actor: str) -> str | None:
    return actor.removeprefix("user:") if actor.startswith("user:") else actor


def _recorded(payload: dict[str, Any], award: dict[str, Any]) -> dict[str, Any]:
    """What a `round.settled` event says its award shows of the round: the award's entry's own
    fields (`RECORD_FIELDS`), or, in an event older than them, the round's table key, round id
    and board, the seat's cards and its best five (when recorded; none for an envy), which the
    migration that added the columns copied from the round's row, itself derived from this
    event (`tables.audit.records`)."""
    if all(name in award for name in RECORD_FIELDS):
        return {name: award[name] for name in RECORD_FIELDS}
    said = {
        column: payload[key]
        for column, key in (("table_pk", "table"), ("round_name", "round_id"), ("board", "board"))
        if key in payload
    }
    seats = [seat for seat in payload.get("seats") or () if seat.get("seat") == award.get("seat")]
    if seats:
        said["hole_cards"] = seats[0].get("cards")
        if award.get("kind") == "envy":
            said["winning_five"] = []
        elif "best_five" in seats[0]:  # else worked out by the migration, from the cards above
            said["winning_five"] = seats[0]["best_five"]
    return said


def _follows(payload: dict[str, Any], award: dict[str, Any]) -> int | None:
    """The award an award of a `round.settled` event follows: an envy, the event's jackpot
    (one a round at most); any other, none."""
    if award.get("kind") != "envy":
        return None
    royals = [a.get("id") for a in payload.get("awards") or () if a.get("kind") == "royal_flush"]
    return int(royals[0]) if len(royals) == 1 else None


def _created(event: Event, payload: dict[str, Any], award: dict[str, Any]) -> Seen:
    """An award as the `round.settled` event that created it says it was."""
    seen = Seen(
        {
            **_recorded(payload, award),
            "follows": _follows(payload, award),
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
            "approval_note": "",
            "payment_method": "",
            "payment_reference": "",
            "payment_note": "",
            "corrected_cents": 0,
            **{name: None for pair in STEP_FIELDS.values() for name in pair},
        },
        event.chain,
        event.sequence,
    )
    # Its steps are on its pool's chain: that chain broken, they are unknown.
    seen.chains.update({event.chain, pool_chain(int(payload.get("pool") or 0))})
    return seen


def _as_created(seen: Seen) -> bool:
    """An award approved at once (below its pool's threshold) that no step has touched: the
    event that created it says all there is to say of it, so a checkpoint need not carry it."""
    fields = seen.fields
    return (
        fields["status"] == AwardStatus.APPROVED.value
        and fields["approved_by"] is None
        and not fields.get("corrected_cents")
    )


def _due(fields: dict[str, Any]) -> int:
    """What an award is due as the journal says: its amount and its corrections."""
    return int(fields["amount_cents"] or 0) + int(fields.get("corrected_cents") or 0)


class Totals:
    """Per pool, the awards' amounts by status and the live (not void) awards by kind."""

    def __init__(self, carried: dict[str, Any] | None = None) -> None:
        self.status: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.live: dict[int, dict[str, list[int]]] = defaultdict(
            lambda: defaultdict(lambda: [0, 0])
        )
        for pool, figures in (carried or {}).items():
            self.status[int(pool)].update(figures["status"])
            for kind, (count, cents) in figures["live"].items():
                self.live[int(pool)][kind] = [count, cents]

    def created(self, fields: dict[str, Any]) -> None:
        pool, amount = int(fields["pool"] or 0), _due(fields)
        self.status[pool][str(fields["status"])] += amount
        if fields["status"] != AwardStatus.VOID.value:
            live = self.live[pool][str(fields["kind"])]
            live[0], live[1] = live[0] + 1, live[1] + amount

    def moved(self, fields: dict[str, Any], before: str) -> None:
        pool, amount, after = int(fields["pool"] or 0), _due(fields), fields["status"]
        self.status[pool][before] -= amount
        self.status[pool][str(after)] += amount
        if after == AwardStatus.VOID.value and before != after:
            live = self.live[pool][str(fields["kind"])]
            live[0], live[1] = live[0] - 1, live[1] - amount

    def corrected(self, fields: dict[str, Any], amount: int) -> None:
        """An award's amount due corrected by `amount` in its status (its live cents too)."""
        pool = int(fields["pool"] or 0)
        self.status[pool][str(fields["status"])] += amount
        self.live[pool][str(fields["kind"])][1] += amount

    def of(self, pool: int, status: AwardStatus) -> int:
        return self.status[pool][status.value]

    def carried(self) -> dict[str, Any]:
        pools = set(self.status) | set(self.live)
        return {
            str(pool): {
                "status": {k: v for k, v in self.status[pool].items() if v},
                "live": {k: v for k, v in self.live[pool].items() if v != [0, 0]},
            }
            for pool in sorted(pools)
        }


class ProgressiveProjection:
    def __init__(self) -> None:
        self.awards: dict[int, Seen] = {}
        self.steps: list[Event] = []  # in each pool chain's order; applied after creation
        self.pools: dict[int, Seen] = {}
        self.names = Names()
        self.totals = Totals()
        self.touched: set[int] = set()  # awards created or stepped by the events observed
        self.staff = StaffProjection(names=self.names)
        # Payments that identified a winner, and identities purged, among the events walked.
        self.identified: set[int] = set()
        self.purged: set[int] = set()
        self.surveillance = SurveillanceProjection()

    @classmethod
    def resume(cls, carried: dict[str, Any]) -> ProgressiveProjection:
        """Start from what a checkpoint carried (`carried()`)."""
        projections = cls()
        projections.awards = {int(pk): Seen.resumed(a) for pk, a in carried["awards"].items()}
        projections.pools = {int(pk): Seen.resumed(p) for pk, p in carried["pools"].items()}
        projections.names = Names(carried["names"])
        projections.totals = Totals(carried["totals"])
        projections.staff = StaffProjection(carried["staff"], projections.names)
        # A checkpoint stored before the journal covered surveillance carries none (none existed).
        projections.surveillance = SurveillanceProjection(carried.get("surveillance"))
        return projections

    def carried(self) -> dict[str, Any]:
        """What a checkpoint carries forward: the awards still open, pools, names, totals.
        Call after `problems()` (the steps are applied there)."""
        return {
            "awards": {
                str(pk): seen.carried()
                for pk, seen in sorted(self.awards.items())
                if seen.fields["status"] not in FINAL and not _as_created(seen)
            },
            "pools": {str(pk): seen.carried() for pk, seen in sorted(self.pools.items())},
            "names": self.names.carried(),
            "totals": self.totals.carried(),
            "staff": self.staff.carried(),
            "surveillance": self.surveillance.carried(),
        }

    def observe(self, event: Event) -> None:
        """Take in one event of a chain whose links were verified."""
        payload = event.payload if isinstance(event.payload, dict) else {}
        if event.kind in REVIEW_KINDS:  # the award keeps its status: no step of its own
            self.surveillance.observe(
                event.kind, event.chain, event.sequence, event.at, event.actor, payload
            )
        elif event.kind == "round.settled":
            for award in payload.get("awards") or ():
                seen = _created(event, payload, award)
                pk = int(award.get("id"))
                self.awards[pk] = seen
                self.touched.add(pk)
                self.totals.created(seen.fields)
        elif event.kind.startswith("award.") and (
            payload.get("to") in _STATUSES or event.kind in VOID_REQUEST_KINDS
        ):
            self.steps.append(event)
        elif event.kind == CORRECTED and payload.get("target") == "award":
            self.steps.append(event)  # in its pool chain's order with the award's steps
        elif event.kind == "pool.created":
            seen = Seen(
                {name: payload.get(name, FIELD_DEFAULTS.get(name)) for name in POOL_FIELDS},
                event.chain,
                event.sequence,
            )
            seen.chains.add(event.chain)
            self.pools[int(payload["pool"])] = seen
        elif event.kind in LIFE_KINDS:
            pool = self.pools.get(int(payload.get("pool", 0)))
            if pool is not None:
                pool.fields["status"] = payload.get("status")
                pool.said(event)
        elif event.kind == "pool.changed":
            pool = self.pools.get(int(payload.get("pool", 0)))
            if pool is not None:
                after = payload.get("after") or {}
                pool.fields.update({k: v for k, v in after.items() if k in POOL_FIELDS})
                pool.said(event)
        if event.kind == "award.paid" and "winner_digest" in payload:
            self.identified.add(int(payload.get("award", 0)))
        elif event.kind == winners.PURGED:
            self.purged.update(int(pk) for pk in payload.get("awards") or ())
        if event.kind in ACCOUNT_KINDS:  # the names first: a token issued later is by them
            self.names.observe(payload, event.occurred_at)
        if event.kind in ACCOUNT_KINDS or event.kind in (RECORDED, "staff_token.issued"):
            self.staff.observe(event.kind, payload)

    def _recall(self, pks: set[int]) -> None:
        """The awards approved at once among `pks`, as the events that created them say: a
        checkpoint does not carry them (`_as_created`), and a later step (their payment) needs
        them. Read by the transfer that granted each (one query), from events a walk verified
        before the checkpoint."""
        granted = (
            Transfer.objects.filter(award_id__in=pks, code__in=AWARD_GRANTED_BY)
            .order_by("pk")
            .values_list(
                "award_id",
                "event__chain",
                "event__sequence",
                "event__kind",
                "event__actor",
                "event__occurred_at",
                "event__payload",
            )
        )
        for pk, chain, sequence, kind, actor, occurred_at, payload in granted:
            event = Event(chain, sequence, kind, actor, occurred_at, payload)
            for award in (payload.get("awards") or ()) if kind == "round.settled" else ():
                if int(award.get("id", 0)) == pk:
                    seen = _created(event, payload, award)
                    if _as_created(seen):
                        self.awards[pk] = seen

    def _apply_steps(self) -> list[Problem]:
        problems = []
        self._recall({int(e.payload.get("award", 0)) for e in self.steps} - set(self.awards))
        for event in self.steps:
            payload = event.payload
            pk = int(payload.get("award", 0))
            award = self.awards.get(pk)
            if award is None:
                problems.append(
                    Problem(
                        f"award {payload.get('award')}: a step of an award no round created"
                        " (or one already paid or void)",
                        event.chain,
                        event.sequence,
                    )
                )
                continue
            self.touched.add(pk)
            if event.kind == CORRECTED:
                amount = int(payload.get("amount_cents") or 0)
                award.fields["corrected_cents"] = int(award.fields.get("corrected_cents") or 0)
                award.fields["corrected_cents"] += amount
                self.totals.corrected(award.fields, amount)
                award.said(event)
                continue
            if event.kind in VOID_REQUEST_KINDS:
                requested = event.kind == "award.void_requested"
                award.fields["void_requested_by"] = _user(event.actor) if requested else None
                award.fields["void_requested_at"] = event.occurred_at if requested else None
                award.fields["void_request_reason"] = payload.get("reason", "") if requested else ""
                award.said(event)
                continue
            to = AwardStatus(payload["to"])
            before = str(award.fields["status"])
            award.fields["status"] = to.value
            self.totals.moved(award.fields, before)
            if to in STEP_FIELDS:
                by, at = STEP_FIELDS[to]
                award.fields[by] = _user(event.actor)
                award.fields[at] = event.occurred_at
            if to == AwardStatus.VERIFIED:
                award.fields["verification_note"] = payload.get("note", "")
            if to == AwardStatus.APPROVED:
                award.fields["approval_note"] = payload.get("note", "")
            if to == AwardStatus.PAID:  # how it was paid (events before issue 22 say nothing)
                award.fields["payment_method"] = payload.get("method", "")
                award.fields["payment_reference"] = payload.get("reference", "")
                award.fields["payment_note"] = payload.get("note", "")
            if to == AwardStatus.VOID:  # a jackpot's void, confirmed: the reason it was asked for
                award.fields["void_reason"] = payload.get(
                    "reason", award.fields["void_request_reason"]
                )
            award.said(event)
        return problems

    def problems(self, broken_chains: set[str], *, since: int | None = None) -> list[Problem]:
        """Every award and pool row that differs from what the journal says, in id order.

        `since`: a walk from a checkpoint whose highest award id it is: compare only the awards
        this projection holds (carried, recalled or created since) and any row above that id;
        None: every award."""
        found = self._apply_steps()
        only = None if since is None else set(self.awards)
        found += self._award_problems(broken_chains, only, since or 0)
        found += self._pool_problems(broken_chains)
        if ADMIN_CHAIN not in broken_chains:  # else the accounts' last events may be unread
            found += [Problem(message, None, None) for message in self.staff.problems()]
        # Winners' identities against their payments' digests: what the club holds now.
        found += [
            Problem(message, None, None)
            for message in winners.problems(identified=self.identified, purged=self.purged)
        ]
        found += [
            Problem(message, chain, sequence)
            for message, chain, sequence in self.surveillance.problems(
                broken_chains, self.names.same
            )
        ]
        return found

    def _award_problems(
        self, broken_chains: set[str], only: Iterable[int] | None, after: int
    ) -> list[Problem]:
        found = []
        awards = Award.objects.all()
        if only is not None:
            chosen = set(only)
            awards = awards.filter(Q(pk__in=chosen) | Q(pk__gt=after))
        rows = awards.order_by("pk").values(
            "pk",
            "pool_id",
            "round_id",
            "seat",
            "kind",
            "amount_cents",
            "status",
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
            "approval_note",
            "payment_method",
            "payment_reference",
            "payment_note",
            "corrected_cents",
            *RECORD_FIELDS,
            "follows",
            sequence=F("number"),  # the award's number, in the journal's word
            **{f"{name}_pk": F(name) for name in _BY},  # whose account, compared by `Names`
        )
        listed = set()
        for row in rows.iterator(chunk_size=2000):
            pk = row["pk"]
            listed.add(pk)
            seen = self.awards.get(pk)
            if seen is None:
                found.append(Problem(f"award {pk}: no round.settled event created it", None, None))
                continue
            if seen.chains & broken_chains:
                continue
            # A checkpoint carried before `follows` was covered says nothing of it.
            recorded = [name for name in (*RECORD_FIELDS, "follows") if name in seen.fields]
            for name in (*AWARD_FIELDS, *recorded):
                actual = row.get(f"{name}_id", row.get(f"{name}__username", row.get(name)))
                # A checkpoint carried before the payment's fields (or corrections) were covered
                # says none.
                wanted = seen.fields.get(name, 0 if name == "corrected_cents" else "")
                named = name in _BY and actual is not None and wanted is not None
                if named:  # the account that held the name when it acted, by its name now
                    at = seen.fields.get(f"{name[:-3]}_at")
                    same = self.names.same(str(wanted), at, row[f"{name}_pk"], actual)
                else:
                    same = actual == wanted
                if not same:
                    found.append(
                        Problem(
                            f"award {pk}: {name} is {_show(actual)}, the journal says "
                            f"{_show(wanted)}{' as named then' if named else ''} "
                            f"(chain {seen.chain} sequence {seen.sequence})",
                            seen.chain,
                            seen.sequence,
                        )
                    )
        expected = (
            set(self.awards) if only is None else chosen | {a for a in self.awards if a > after}
        )
        for pk in sorted((expected & set(self.awards)) - listed):
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
        for row in Pool.objects.order_by("pk").values("pk", "status", *POOL_FIELDS):
            seen = self.pools.get(row["pk"])
            if seen is None:
                found.append(
                    Problem(f"pool {row['pk']}: no pool.created event created it", None, None)
                )
                continue
            if seen.chains & broken_chains:
                continue
            # A pool's status as its life's events say (jackpot.pools.lifecycle); active from its
            # creation, and in a checkpoint made before the status existed.
            expected = {"status": "active", **seen.fields}
            for name in (*POOL_FIELDS, "status"):
                if row[name] != expected[name]:
                    found.append(
                        Problem(
                            f"pool {row['pk']}: {name} is {_show(row[name])}, the journal says "
                            f"{_show(expected[name])} "
                            f"(chain {seen.chain} sequence {seen.sequence})",
                            seen.chain,
                            seen.sequence,
                        )
                    )
        return found


def _show(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else repr(value)
