"""Surveillance's reviews and referral decisions, compared with the events that recorded them
(one part of a verification's walk, `jackpot.audit.projections.ProgressiveProjection`).

A review row is written only with its audit event on the award's pool chain (`award.reviewed`,
or `award.referred` for a referral; `jackpot.awards.workflow.award_review`), a referral's decision
only with `award.referral_decided`; the chain's HMAC covers the events. So a review forged by SQL
(inserted without its event, say a `confirmed` verdict to let a jackpot through), edited (a
referral turned into a confirmation, another camera, another reviewer) or deleted, and the same
for a decision, is named here:
- every row has an event giving its award, person, time and every field the row holds;
- every event's row exists.
The rows are append-only (triggers), so this catches what only someone going around them does.
A checkpoint carries every review and decision the events gave (a few per jackpot); a walk from
it compares them all again, with the rows as they are now.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from jackpot.models import ReferralDecision, SurveillanceReview

#: The events that write a review, and the one that writes a referral's decision.
REVIEW_KINDS = frozenset({"award.reviewed", "award.referred"})
DECISION_KIND = "award.referral_decided"
KINDS = REVIEW_KINDS | {DECISION_KIND}

_REVIEW_FIELDS = ("camera", "verdict", "reason", "note")
_TIMES = ("at", "footage_from", "footage_to")
#: Whether an account (id, name now) held a name (the event's) at a time (`problems`).
Person = Callable[[str, Any, int | None, str | None], bool]


def _time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    return datetime.fromisoformat(value) if isinstance(value, str) and value else None


class SurveillanceProjection:
    """One walk's reviews and decisions, as the events say them."""

    def __init__(self, carried: dict[str, Any] | None = None) -> None:
        carried = carried or {}
        self.reviews: dict[int, dict[str, Any]] = {
            int(pk): review for pk, review in carried.get("reviews", {}).items()
        }
        self.decisions: dict[int, dict[str, Any]] = {
            int(pk): decision for pk, decision in carried.get("decisions", {}).items()
        }

    def observe(
        self, kind: str, chain: str, sequence: int, at: Any, actor: str, payload: Any
    ) -> None:
        """Take in one event of a chain whose links were verified."""
        if not isinstance(payload, dict) or "review" not in payload:
            return
        said = {
            "chain": chain,
            "sequence": sequence,
            "award": payload.get("award"),
            "by": actor.removeprefix("user:"),
            "at": at.isoformat() if isinstance(at, datetime) else at,
        }
        if kind in REVIEW_KINDS:
            said |= {name: payload.get(name) for name in (*_REVIEW_FIELDS, *_TIMES[1:])}
            self.reviews[int(payload["review"])] = said
        elif kind == DECISION_KIND:
            said |= {
                "review": payload.get("review"),
                "outcome": payload.get("outcome"),
                "reason": payload.get("reason"),
            }
            self.decisions[int(payload.get("decision", 0))] = said

    def problems(
        self, broken_chains: set[str], person: Person
    ) -> list[tuple[str, str | None, int | None]]:
        """Each row that differs from its event, each event without its row: (what, chain,
        sequence). `person(name, at, id, username)`: whether the account `id`, named `username`
        now, held `name` at the time `at` (`jackpot.staff.records.Names.same`)."""
        found: list[tuple[str, str | None, int | None]] = []
        reviews = {
            row["pk"]: {
                "award": row["award_id"],
                "by": (row["reviewer_id"], row["reviewer__username"]),
                "at": row["reviewed_at"],
                **{name: row[name] for name in _REVIEW_FIELDS},
                "footage_from": row["footage_from"],
                "footage_to": row["footage_to"],
            }
            for row in SurveillanceReview.objects.values(
                "pk",
                "award_id",
                "reviewer_id",
                "reviewer__username",
                "reviewed_at",
                "footage_from",
                "footage_to",
                *_REVIEW_FIELDS,
            )
        }
        decisions = {
            row["pk"]: {
                "award": row["review__award_id"],
                "by": (row["decided_by_id"], row["decided_by__username"]),
                "at": row["decided_at"],
                "review": row["review_id"],
                "outcome": row["outcome"],
                "reason": row["reason"],
            }
            for row in ReferralDecision.objects.values(
                "pk",
                "review_id",
                "review__award_id",
                "decided_by_id",
                "decided_by__username",
                "decided_at",
                "outcome",
                "reason",
            )
        }
        for what, rows, said_all in (
            ("review", reviews, self.reviews),
            ("referral decision", decisions, self.decisions),
        ):
            for pk in sorted(rows.keys() | said_all.keys()):
                row, said = rows.get(pk), said_all.get(pk)
                if said is None:
                    found.append((f"{what} {pk}: no event recorded it", None, None))
                    continue
                if said["chain"] in broken_chains:
                    continue
                where = (said["chain"], said["sequence"])
                if row is None:
                    found.append(
                        (
                            f"{what} {pk}: in the journal (chain {where[0]} sequence "
                            f"{where[1]}), no row holds it",
                            *where,
                        )
                    )
                    continue
                wrong = [name for name in row if not _same(name, row[name], said, person)]
                if wrong:
                    found.append(
                        (
                            f"{what} {pk}: the row's {', '.join(wrong)} differ from its event "
                            f"(chain {where[0]} sequence {where[1]})",
                            *where,
                        )
                    )
        return found

    def carried(self) -> dict[str, Any]:
        return {
            "reviews": {str(pk): review for pk, review in sorted(self.reviews.items())},
            "decisions": {str(pk): decision for pk, decision in sorted(self.decisions.items())},
        }


def _same(name: str, actual: Any, said: dict[str, Any], person: Person) -> bool:
    if name in _TIMES:
        return actual == _time(said.get(name))
    if name == "by":  # the account that held the event's name at the event's time
        return person(str(said.get("by")), said.get("at"), *actual)
    return bool(actual == said.get(name))
