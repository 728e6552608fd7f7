"""The club's session rows compared with their events (one part of a verification's walk,
`tables.audit.verification.RoundsCheck`).

Invariants:
- every `ClubSession`, `SessionTable`, `SessionPool` and `DropCount` row says what the `club`
  chain's events say of it (`session.opened`, `session.closed` and its lists,
  `session.drop_counted`, `session.drop_confirmed`); a row no event explains is a problem naming
  it;
- a full run compares every row; a routine run the sessions its new events name and the sessions
  made since the checkpoint (`carried`): an older edit is the next full run's.
"""

from __future__ import annotations

from typing import Any

from jackpot.audit.projections import Event
from tables.models import ClubSession, DropCount, SessionPool, SessionTable

TABLE_FIELDS = (
    "rounds",
    "stakes",
    "stakes_cents",
    "meter_cents",
    "reserve_cents",
    "house_cents",
    "voided",
    "voided_cents",
    "withheld_cents",
)
POOL_FIELDS = ("status", "displayed_cents", "meter_version", "corrections", "corrections_cents")


class SessionProjection:
    """What the walked events say of each session, then the rows compared with it."""

    def __init__(self, carried: dict[str, Any] | None) -> None:
        self.full = carried is None
        self.session_id = int((carried or {}).get("session_id", 0))
        self.said: dict[int, dict[str, Any]] = {}
        self.found: list[str] = []

    def observe(self, event: Event) -> None:
        if event.chain != "club" or not event.kind.startswith("session."):
            return
        payload = event.payload
        said = self.said.setdefault(int(payload["session"]), {"drops": {}})
        if event.kind == "session.opened":
            said["row"] = {
                "number": payload["number"],
                "club_day": payload["club_day"],
                "opened_by": event.actor,
                "opened_heads": payload["heads"],
                "status": "open",
                "closed_by": "",
                "closed_how": "",
                "closed_heads": None,
            }
        elif event.kind == "session.closed":
            said.setdefault("row", {}).update(
                status="closed",
                closed_by=event.actor,
                closed_how=payload["closed_how"],
                closed_heads=payload["heads"],
            )
            said["tables"] = {
                (line["table"], line["pool"]): [line[name] for name in TABLE_FIELDS]
                for line in payload["tables"]
            }
            said["pools"] = {
                line["pool"]: [line[name] for name in POOL_FIELDS] for line in payload["pools"]
            }
        elif event.kind == "session.drop_counted":
            said["drops"][payload["table"]] = {
                "counted_cents": payload["counted_cents"],
                "expected_cents": payload["expected_cents"],
                "counted_by": event.actor,
                "confirmed_by": "",
                "difference_cents": None,
            }
        elif event.kind == "session.drop_confirmed":
            said["drops"].setdefault(payload["table"], {}).update(
                confirmed_by=event.actor, difference_cents=payload["difference_cents"]
            )

    def problems(self) -> list[str]:
        rows = ClubSession.objects.all()
        if not self.full:
            rows = rows.filter(pk__in=set(self.said)) | rows.filter(pk__gt=self.session_id)
        known = self.session_id
        for session in rows.order_by("pk"):
            self.session_id = max(self.session_id, session.pk)
            said = self.said.get(session.pk)
            if said is None or "row" not in said:
                if self.full or session.pk > known or said is not None:
                    self.found.append(f"session {session.pk}: no session.opened event")
                continue
            self._compare(session, said)
        return self.found

    def _compare(self, session: ClubSession, said: dict[str, Any]) -> None:
        row = {
            "number": session.number,
            "club_day": session.club_day.isoformat(),
            "opened_by": session.opened_by,
            "opened_heads": session.opened_heads,
            "status": session.status,
            "closed_by": session.closed_by,
            "closed_how": session.closed_how,
            "closed_heads": session.closed_heads,
        }
        wrong = [name for name, value in said["row"].items() if row.get(name) != value]
        if wrong:
            self.found.append(
                f"session {session.pk}: the row's {', '.join(wrong)} differ from its events"
            )
        tables = {
            (line.table_id, line.pool_id): [getattr(line, name) for name in TABLE_FIELDS]
            for line in SessionTable.objects.filter(session=session)
        }
        if tables != said.get("tables", {}):
            self.found.append(f"session {session.pk}: its table lines differ from session.closed")
        pools = {
            line.pool_id: [getattr(line, name) for name in POOL_FIELDS]
            for line in SessionPool.objects.filter(session=session)
        }
        if pools != said.get("pools", {}):
            self.found.append(f"session {session.pk}: its pool lines differ from session.closed")
        drops = {
            count.table_id: {
                "counted_cents": count.counted_cents,
                "expected_cents": count.expected_cents,
                "counted_by": count.counted_by,
                "confirmed_by": count.confirmed_by,
                "difference_cents": count.difference_cents,
            }
            for count in DropCount.objects.filter(session=session)
        }
        for table in sorted(drops.keys() | said["drops"].keys()):
            if drops.get(table) != said["drops"].get(table):
                self.found.append(
                    f"session {session.pk}: table {table}'s drop count differs from its events"
                )

    def carried(self) -> dict[str, Any]:
        return {"session_id": self.session_id}
