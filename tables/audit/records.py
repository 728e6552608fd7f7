"""The rows the register prints, compared with the events that wrote them: rounds, tables and
terminals (one part of a verification's walk, `tables.audit.verification.RoundsCheck`).

Invariants:
- each row says what its events say: a round its opening, terms, bets, result or void; a table
  its name, game, pool, seats and state; the live terminals exactly those issued and not revoked;
  anything else is a problem naming the row;
- a full run compares every row; a routine run the rounds its new events name, those carried
  open, every table and live terminal, and terminals made since: its cost does not grow with the
  journal's age; an older edit is the next full run's (a settled round is also final in the
  database).

What each row is compared with: docs/operations.md, "The modules, in detail".
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

from django.db.models import Count

from core.replicas import reading
from jackpot.audit.projections import Event
from jackpot.money.canonical import loads
from jackpot.money.movements import TERMS_FIELDS
from tables.models import Round, RoundState, Table, Terminal

#: Rounds compared per query.
CHUNK = 5000
#: A seat's bets as a round's row holds them, in the opened event's names.
BETS = ("ante_cents", "blind_cents", "trips_cents", "bonus_cents", "progressive_cents")
TABLE_FIELDS = ("name", "game", "pool", "seats", "enabled")
#: A round's columns the events say something of, by the name the comparison gives them.
_ROUND_COLUMNS = {
    "table": "table_id",
    "round_id": "round_id",
    "pool": "pool_id",
    "state": "state",
    "closed_at": "closed_at",
    "closed_by": "closed_by",
    "result": "CAST(result AS TEXT)",
    "void_reason": "void_reason",
    # What a round of a pool settles with, as its opening event's `terms` name them too.
    **{name: name for name in TERMS_FIELDS},
}
TERMINAL_FIELDS = ("table", "name", "prefix", "token_hash")


def _iso(value: datetime | str | None) -> str | None:
    """A time as the chain hashes it (UTC ISO 8601): from a datetime, or SQLite's naive UTC text."""
    if value is None:
        return None
    found = datetime.fromisoformat(value) if isinstance(value, str) else value
    return (found if found.tzinfo else found.replace(tzinfo=UTC)).astimezone(UTC).isoformat()


def _among(count: int) -> str:
    """`= ANY(%s)`, one array parameter, on PostgreSQL (a list of thousands of placeholders
    costs the planner more than the read); `IN (%s, ...)` on SQLite."""
    return "= ANY(%s)" if reading().vendor == "postgresql" else f"IN ({', '.join(['%s'] * count)})"


def _ids(pks: list[int]) -> list[Any]:
    return [pks] if reading().vendor == "postgresql" else pks


def _result(payload: dict[str, Any]) -> dict[str, Any]:
    """The record a settled event gives for `Round.result` (`tables.rounds.answers`): a seat's
    `best_five` only where its event has one (rounds settled since issue 23 item 3)."""
    return {
        "board": payload["board"],
        "dealer": payload["dealer"],
        "seats": [
            {
                "seat": s["seat"],
                "cards": s["cards"],
                "decision": s["decision"],
                **({"best_five": s["best_five"]} if "best_five" in s else {}),
            }
            for s in payload["seats"]
        ],
    }


class FloorProjection:
    """One walk's comparison of the rounds', tables' and terminals' rows with their events."""

    def __init__(self, carried: dict[str, Any] | None) -> None:
        self.full = carried is None
        carried = carried or {}
        self.tables: dict[int, dict[str, Any]] = {
            int(pk): dict(fields) for pk, fields in carried.get("tables", {}).items()
        }
        #: Live terminals (a full run: every terminal issued, `revoked` in its fields).
        self.terminals: dict[int, dict[str, Any]] = {
            int(pk): dict(fields) for pk, fields in carried.get("terminals", {}).items()
        }
        self.terminal_id = int(carried.get("terminal_id", 0))
        #: Rounds the journal leaves open, so far.
        self.open_rounds: set[int] = set(carried.get("open_rounds", ()))
        #: What the events walked say of each round not compared yet, and where they said it.
        self.pending: dict[int, dict[str, Any]] = {}
        self.where: dict[int, str] = {}
        self.counts: Counter[str] = Counter()
        self.found: list[str] = []

    # --- the events ----------------------------------------------------------------------------

    def observe(self, event: Event) -> None:
        kind, payload = event.kind, event.payload
        if kind.startswith("round."):
            self._round(event)
        elif kind == "table.created":
            self.tables[int(payload["table"])] = {
                "name": payload["name"],
                "game": payload["game"],
                "pool": payload["pool"],
                "seats": payload["seats"],
                "enabled": True,
            }
        elif kind == "table.changed":
            said = self.tables.setdefault(int(payload["table"]), {})
            said.update(payload["after"])
        elif kind in ("terminal.issued", "terminal.bootstrapped"):
            for pk in payload.get("revoked", ()):
                self._revoke(int(pk))
            pk = int(payload["terminal"])
            self.terminals[pk] = {
                "table": payload["table"],
                "name": payload["name"],
                "prefix": payload["prefix"],
                "token_hash": payload.get("token_hash"),
                "revoked": False,
            }
            self.terminal_id = max(self.terminal_id, pk)
        elif kind == "terminal.revoked":
            self._revoke(int(payload["terminal"]))

    def _revoke(self, pk: int) -> None:
        if self.full and pk in self.terminals:
            self.terminals[pk]["revoked"] = True
        else:
            self.terminals.pop(pk, None)

    def _round(self, event: Event) -> None:
        kind, payload = event.kind, event.payload
        if kind not in ("round.opened", "round.settled", "round.voided"):
            return
        pk = int(payload["round"])
        said = self.pending.setdefault(pk, {})
        self.where[pk] = f"chain {event.chain} sequence {event.sequence}"
        said["table"], said["round_id"] = payload["table"], payload["round_id"]
        self.counts[kind] += 1
        if kind == "round.opened":
            said["pool"] = payload["pool"]
            if payload.get("terms") is not None:
                said.update(payload["terms"])
            said["bets"] = {
                int(seat["seat"]): {name: int(seat["bets"].get(name, 0)) for name in BETS}
                for seat in payload["seats"]
            }
            self.open_rounds.add(pk)
            return
        self.open_rounds.discard(pk)
        # The walk's times are the chain's text already (`jackpot.audit.verification`).
        said["closed_at"] = event.at if isinstance(event.at, str) else _iso(event.at)
        said["closed_by"] = event.actor
        if kind == "round.settled":
            said["state"], said["result"] = RoundState.SETTLED.value, _result(payload)
            said["pool"] = payload["pool"]
        else:
            said["state"], said["void_reason"] = RoundState.VOID.value, payload["reason"]
        if len(self.pending) >= CHUNK:
            self._compare_rounds()

    # --- the rows ------------------------------------------------------------------------------

    def _compare_rounds(self) -> None:
        """The pending rounds' rows, read by two queries per `CHUNK` as plain tuples (their
        records as JSON text, read by orjson): the full run reads every round this way."""
        pending, where, self.pending, self.where = self.pending, self.where, {}, {}
        if not pending:
            return
        found: dict[int, dict[str, Any]] = {}
        with reading().cursor() as cursor:
            cursor.execute(
                f"SELECT id, {', '.join(_ROUND_COLUMNS.values())} FROM tables_round"
                f" WHERE id {_among(len(pending))}",
                _ids(list(pending)),
            )
            for pk, *values in cursor.fetchall():
                row = dict(zip(_ROUND_COLUMNS, values, strict=True))
                row["closed_at"] = _iso(row["closed_at"])
                row["result"] = None if row["result"] is None else loads(row["result"])
                found[pk] = row
            opened = [pk for pk, said in pending.items() if "bets" in said]
            if opened:
                cursor.execute(
                    f"SELECT round_id, seat, {', '.join(BETS)} FROM tables_roundseat"
                    f" WHERE round_id {_among(len(opened))}",
                    _ids(opened),
                )
                for round_pk, seat, *bets in cursor.fetchall():
                    bets_of = found[round_pk].setdefault("bets", {})
                    bets_of[seat] = dict(zip(BETS, bets, strict=True))
        for pk, said in sorted(pending.items()):
            if pk not in found:
                self.found.append(f"round {pk} ({where[pk]}): no row for a round of the journal")
                continue
            wrong = [name for name, wanted in said.items() if found[pk].get(name) != wanted]
            if wrong:
                self.found.append(
                    f"round {pk} ({where[pk]}): the row's {', '.join(wrong)} differ from its events"
                )

    def problems(self, broken: bool) -> list[str]:
        """Every difference between the rows and the events walked. `broken`: a chain was not
        read to its end, so the journal's open rounds and counts are not the whole story."""
        self._compare_rounds()
        if not broken:
            self._round_states()
        self._tables()
        self._terminals()
        return self.found

    def _round_states(self) -> None:
        """The rounds the journal leaves open are open; a full run also finds as many rows in
        each state as events put there (a row closed, or made, behind the journal)."""
        closed = Round.objects.filter(pk__in=self.open_rounds).exclude(state=RoundState.OPEN)
        for pk, state in closed.order_by("pk").values_list("pk", "state")[:20]:
            self.found.append(f"round {pk}: {state} in its row, open in the journal")
        if not self.full:
            return
        states = dict(Round.objects.order_by().values_list("state").annotate(n=Count("pk")))
        for label, rows, events in (
            ("rows", sum(states.values()), self.counts["round.opened"]),
            ("settled rows", states.get(RoundState.SETTLED, 0), self.counts["round.settled"]),
            ("void rows", states.get(RoundState.VOID, 0), self.counts["round.voided"]),
        ):
            if rows != events:
                self.found.append(f"rounds: {rows} {label}, {events} events put them there")

    def _tables(self) -> None:
        rows = {
            pk: {"name": name, "game": game, "pool": pool, "seats": seats, "enabled": enabled}
            for pk, name, game, pool, seats, enabled in Table.objects.values_list(
                "pk", "name", "game", "pool_id", "seats", "enabled"
            )
        }
        for pk in sorted(rows.keys() | self.tables.keys()):
            row, said = rows.get(pk), self.tables.get(pk)
            if said is None:
                self.found.append(f"table {pk}: no table.created event")
            elif row is None:
                self.found.append(f"table {pk}: the journal created it, no row holds it")
            else:
                wrong = [name for name in TABLE_FIELDS if row[name] != said.get(name)]
                if wrong:
                    self.found.append(
                        f"table {pk}: the row's {', '.join(wrong)} differ from its events"
                    )

    def _terminals(self) -> None:
        query = Terminal.objects.all()
        if not self.full:  # the live ones, and any made since the checkpoint
            query = query.filter(revoked_at__isnull=True) | query.filter(pk__gt=self.terminal_id)
        rows = {
            pk: {
                "table": table,
                "name": name,
                "prefix": prefix,
                "token_hash": token_hash,
                "revoked": revoked is not None,
            }
            for pk, table, name, prefix, token_hash, revoked in query.values_list(
                "pk", "table_id", "name", "prefix", "token_hash", "revoked_at"
            )
        }
        live = {pk for pk, said in self.terminals.items() if not said.get("revoked")}
        for pk in sorted(rows.keys() | live):
            row, said = rows.get(pk), self.terminals.get(pk)
            if said is None:
                self.found.append(f"terminal {pk}: no terminal.issued event (or it was revoked)")
                continue
            if row is None:
                self.found.append(f"terminal {pk}: issued and live in the journal, no row holds it")
                continue
            wrong = [
                name
                for name in (*TERMINAL_FIELDS, "revoked")
                if said.get(name, False) is not None and row[name] != said.get(name, False)
            ]
            if wrong:
                self.found.append(
                    f"terminal {pk}: the row's {', '.join(wrong)} differ from its events"
                )
        self.terminal_id = max([self.terminal_id, *rows])

    def carried(self) -> dict[str, Any]:
        return {
            "tables": {str(pk): fields for pk, fields in sorted(self.tables.items())},
            "terminals": {
                str(pk): {name: fields[name] for name in TERMINAL_FIELDS}
                for pk, fields in sorted(self.terminals.items())
                if not fields.get("revoked")
            },
            "terminal_id": self.terminal_id,
            "open_rounds": sorted(self.open_rounds),
        }
