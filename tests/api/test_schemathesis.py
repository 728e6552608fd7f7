"""Schemathesis over the whole OpenAPI schema, in process: no 5xx, and no documented response
that breaks its schema.

The schema is loaded from the app itself (`/api/schema/`) and every operation gets its own test:
schemathesis's coverage phase (boundary values, missing and mistyped fields, unexpected methods,
wrong content types) and then `MAX_EXAMPLES` generated requests, valid and invalid, the same on
every run. Requests go through Django's WSGI handler in this process and commit (a transactional
test), so what they change is there for the next request, as in production.

The test fills in what a generator cannot know: the path's table and pool are the floor's, the
token is the one the operation's `security` names (the table's terminal, or an admin), and about
three in four round and award ids point at a real row in the state the step needs (a fresh open
round to void or settle, a fresh award to verify, approve, pay or void); the rest stay generated.
A row made for one case serves the next ones while the journal has not grown since it was made:
every change of a round, an award, a proposal or a terminal writes an event, so it is still in
the state it was made in (most cases are refused before they touch it, and making a jackpot to
approve or pay is most of the test's time).
A table has one open round at a time: the round left open at the table is voided (through the
API, found by the round list) before a fresh round or a generated open, so that the open's 201
is what gets checked.
Bodies and query strings are all generated, with two dictionaries: card strings come from the deck
most of the time (so the rules API and the round result get past the card parser), and free text
often gets a hostile string (NUL and the like).

It fails on any 5xx, on a status the schema does not document, on a documented status whose content
type or body breaks the schema, and (issue 10) on a request VALID by the schema that the service
refuses: a case schemathesis generated in positive mode, still valid after the test pointed its
path at the floor (schemathesis revalidates edited cases), answered with a 4xx whose error is not
in `SEMANTIC_REFUSALS`. That list, in this one place, holds the refusals no JSON Schema can
express, each with its reason; any other refusal of valid input (`invalid_request`, `unknown_field`,
`malformed_json`, `invalid_parameter`, `invalid_card`, `wrong_card_count`, `invalid_round_id`,
`invalid_seat`, a bet out of bounds...) means the schema accepts what the service refuses: a
constraint enforced but not declared.

The table of a round operation follows the body's game (a body without `blind_cents` in its bets,
or a result without a board, goes to the floor's Stud table), so "the other game's shape at this
table" is never sent and needs no entry. No shrinking: a failure is reported as generated, and the
run stays short (`no-shrink`).
"""

from __future__ import annotations

import itertools
import json
import re
import warnings
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import hypothesis
import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core.wsgi import get_wsgi_application
from django.db import DEFAULT_DB_ALIAS, connections
from django.test import Client
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from jackpot.bodies.exports import ExportRequest
from jackpot.models import AuditEvent
from jackpot.reporting.export_jobs import Built, export_job_build, export_job_create
from jackpot.staff.roles import role_group
from tables.audit.reconciliation import reconcile
from tables.models import ClubSession, SessionStatus, Table
from tables.services import operator_terminal_issue
from tests.conftest import Terminal, make_floor, uth_play, uth_seat
from tests.staff import grant_roles, person, referred, staff_token, surveilled

MAX_EXAMPLES = 30
UNDOCUMENTED_STATUS_FAILS = True

CARDS = [rank + suit for rank in "23456789TJQKA" for suit in "cdhs"]
# Strings that break what expects text: NUL (PostgreSQL text and jsonb refuse it), a line
# separator, an astral character, an encoded NUL, a float out of range, very long text. (A lone
# surrogate would belong here too, but schemathesis's own validator cannot encode one.)
HOSTILE = ["\x00", "a\x00b", "\u2028", "\U0001f0a1", "%00", "1e309", "x" * 5000]
CONFIG = schemathesis.Config.from_dict(
    {
        "seed": 2026,  # each operation's seed derives from it: the same requests on every run
        "generation": {
            "max-examples": MAX_EXAMPLES,
            "deterministic": True,  # no randomness beyond the seed
            "database": "none",  # no example database written to the work tree
            "unique-inputs": True,
            "no-shrink": True,  # a failure as generated: shrinking 20 failing operations is slow
            # The test sends the right token itself; generated ones are only ever a 401.
            "with-security-parameters": False,
            "dictionaries": {"string": {"dictionary": "hostile", "probability": 0.25}},
        },
        "dictionaries": {"hostile": {"values": HOSTILE}, "cards": {"values": CARDS}},
        "parameters": {
            # Cards are free strings in the schema: drawn from the deck most of the time, the
            # rules API and the round result get past the card parser and answer 200, whose
            # body is then checked against the schema.
            **{
                f"body.{path}": {"dictionary": "cards", "probability": 0.95}
                for path in ("cards[*]", "player[*]", "dealer[*]", "board[*]", "seats[*].cards[*]")
            },
            # Free text the service stores or looks up gets hostile strings more often.
            # (Schemathesis strips control characters from path parameters: no NUL there.)
            **{
                key: {"dictionary": "hostile", "probability": 0.5}
                for key in ("path.round_id", "body.reason", "body.note")
            },
        },
        "phases": {"stateful": {"enabled": False}},  # the schema has no links to follow
    }
)
schema = schemathesis.openapi.from_wsgi(
    "/api/schema/?format=json", get_wsgi_application(), config=CONFIG
)

CHECKS: list[Any] = [not_a_server_error, content_type_conformance, response_schema_conformance]
if UNDOCUMENTED_STATUS_FAILS:
    CHECKS.append(status_code_conformance)
# The run sends well over the default 600 requests a minute from one address.
LIMITLESS = {
    "anon": "1000000/min",
    "rules": "1000000/min",
    "terminal": "1000000/min",
    "heavy_read": "1000000/min",
}


def _message(pattern: str) -> Callable[[dict[str, Any]], bool]:
    return lambda error: re.search(pattern, str(error.get("message"))) is not None


def _across_groups(error: dict[str, Any]) -> bool:
    """A card seen twice in two different lists (or a Stud draw already dealt), not twice in one
    list: `uniqueItems` can say the latter."""
    message = str(error.get("message"))
    if "cannot be drawn" in message:
        return True
    found = re.search(r"appears twice: in (\S+)\[\d+\] and (\S+)\[\d+\]", message)
    return found is not None and found.group(1) != found.group(2)


@dataclass(frozen=True)
class Refusal:
    """A refusal of schema-valid input that is allowed: the schema cannot express its rule."""

    status: int
    code: str | None  # None: whatever code the field declares
    reason: str
    operations: frozenset[str] | None = None  # None: any operation
    when: Callable[[dict[str, Any]], bool] = lambda error: True

    def allows(self, operation_id: str, status: int, error: dict[str, Any]) -> bool:
        return (
            status == self.status
            and self.code in (None, error.get("code"))
            and (self.operations is None or operation_id in self.operations)
            and self.when(error)
        )


ROUNDS = frozenset(
    {"round_open", "round_result", "round_void", "round_detail", "round_supervisor_void"}
)
SEMANTIC_REFUSALS = [
    # Cross-field and cross-item rules.
    Refusal(
        400,
        "invalid_footage_range",
        "a video review's footage from at or after its to: JSON Schema cannot compare two fields",
        operations=frozenset({"award_review"}),
    ),
    Refusal(
        400,
        "invalid_text",
        "a video review that refers the award needs a reason: a field required by another's value",
        operations=frozenset({"award_review"}),
        when=lambda error: error.get("param") == "reason",
    ),
    Refusal(
        400,
        "range_too_large",
        "export.csv's from and to at most EXPORT_SYNC_MAX_DAYS apart, both required: a bound"
        " between two parameters (the 400 the operation declares says so)",
        frozenset({"award_export"}),
        lambda error: error.get("param") in ("from", "to"),
    ),
    Refusal(
        400,
        "duplicate_card",
        "a card seen twice across the board, the dealer, the seats (or a Stud draw already dealt):"
        " uniqueItems holds within one array only",
        when=_across_groups,
    ),
    Refusal(
        400,
        "duplicate_seat",
        "a seat number twice: uniqueItems compares whole seat objects, not their `seat`",
    ),
    Refusal(
        400,
        "invalid_bet",
        "Blind must equal the Ante: JSON Schema cannot compare two fields",
        when=_message("Blind must equal the Ante"),
    ),
    Refusal(
        400,
        "invalid_decision",
        "a Stud buy's discard must be one of the player's five cards: a cross-field rule",
        operations=frozenset({"round_result", "rules_stud_settle"}),
        when=_message("cannot discard"),
    ),
    Refusal(
        400,
        "invalid_request",
        "a payment by cheque or bank transfer names its reference: required by another field's "
        "value",
        frozenset({"award_pay"}),
        lambda error: error.get("param") == "reference",
    ),
    Refusal(
        400,
        "invalid_request",
        "a date of birth between 1900-01-01 and yesterday: a bound that moves with today",
        frozenset({"award_pay"}),
        lambda error: (
            error.get("param") == "winner.date_of_birth"
            and "date of birth between" in str(error.get("message"))
        ),
    ),
    Refusal(
        400,
        "invalid_parameter",
        "the register's to after its from: a bound between two parameters",
        frozenset({"award_register"}),
        lambda error: error.get("param") == "to" and "after from" in str(error.get("message")),
    ),
    Refusal(
        400,
        "winner_identity_required",
        "the winner's identity is required by the award's amount: the award's state",
        frozenset({"award_pay"}),
    ),
    Refusal(
        404,
        "winner_not_identified",
        "the award was paid without an identity, or is not paid: its state",
        frozenset({"award_winner"}),
    ),
    # The JSON text, which JSON Schema does not see.
    Refusal(
        400,
        None,
        "a whole number written with a fraction (`2.0`): JSON Schema 2020-12 (OpenAPI 3.1) counts"
        " it as the integer 2, the service takes an integer's JSON as written (docs/api.md 7)",
        when=_message(
            r"(valid integer|must be an integer)(, got float)?, got -?[0-9.]+(e[+-]?[0-9]+)?$"
        ),
    ),
    # The floor's configuration and state, which the schema does not know.
    Refusal(
        400,
        "invalid_bet",
        "the progressive bet must be the pool's stake: each pool sets its own (the rules API"
        " settles a seat at the current paytable's, on the same shared bets body)",
        operations=frozenset({"round_open", "rules_uth_settle"}),
        when=_message("the pool's stake"),
    ),
    Refusal(
        400,
        "seats_mismatch",
        "a result gives exactly the seats that opened the round: the stored round",
        operations=frozenset({"round_result"}),
    ),
    Refusal(404, "round_not_found", "a well-formed round id never opened at this table"),
    Refusal(404, "award_not_found", "an award id that does not exist"),
    Refusal(
        404,
        "terminal_not_found",
        "a terminal id that is not one of the table's",
        operations=frozenset({"terminal_revoke"}),
    ),
    Refusal(409, "round_id_reused", "the round id was used with another body", operations=ROUNDS),
    Refusal(409, "round_settled", "the round is already settled", operations=ROUNDS),
    Refusal(409, "round_void", "the round was voided", operations=ROUNDS),
    Refusal(409, "idempotency_key_reused", "the Idempotency-Key was used with another request"),
    Refusal(409, "idempotency_key_busy", "a request with the same Idempotency-Key is running"),
    Refusal(409, "award_wrong_status", "the award is not in the status this step needs"),
    Refusal(403, "four_eyes", "the approver verified this award himself"),
    # Surveillance's record of an award (jackpot.awards.surveillance). A generated award id that
    # names a real award other than the one made for the step meets it in whatever state it is in.
    Refusal(
        409,
        "referral_not_open",
        "the award has no referral awaiting a manager's decision: the award's state",
        operations=frozenset({"award_referral_decide"}),
    ),
    Refusal(
        409,
        "surveillance_referred",
        "a referral no manager cleared holds the award's review, approval and payment: its state",
        operations=frozenset({"award_review", "award_approve", "award_pay"}),
    ),
    Refusal(
        409,
        "award_follows_unapproved",
        "an envy is approved or paid only once its round's jackpot is approved: the award's state",
        operations=frozenset({"award_approve", "award_pay"}),
    ),
    Refusal(
        409,
        "surveillance_review_required",
        "the pool's jackpot is approved only after a confirmed video review: the award's state",
        operations=frozenset({"award_approve"}),
    ),
    Refusal(404, "export_not_found", "an export id that does not exist"),
    Refusal(409, "export_not_ready", "the export is not built yet: no worker runs in this test"),
    Refusal(404, "reconciliation_not_found", "a reconciliation id that does not exist"),
    Refusal(404, "verification_not_found", "a verification run id that does not exist"),
    Refusal(
        400,
        "invalid_parameter",
        "a history's last day before its first: JSON Schema cannot compare two parameters",
        operations=frozenset({"pool_history", "pool_history_csv"}),
        when=_message("must not be before from"),
    ),
    # The session registers (tables.api.registers).
    Refusal(
        400,
        "invalid_parameter",
        "a register's last club day before its first, or more than a year after it: JSON Schema"
        " cannot compare two parameters",
        operations=frozenset({"register_withheld", "register_displayed"}),
        when=_message("must not be before from|must be at most"),
    ),
    Refusal(
        400,
        "invalid_parameter",
        "a liability statement's `from` later than its `at` (or than now, `at`'s default), an"
        " `at` in the future, or either before 1970 (the schema's description says so): JSON"
        " Schema cannot compare two parameters, nor one with the clock, nor bound a date-time",
        operations=frozenset({"pool_liability"}),
        when=_message("is later than at|is in the future|is before 1970-01-01"),
    ),
    # A table's move: the pool and the table's game and state, not the body's shape.
    Refusal(
        404,
        "pool_not_found",
        "a pool id that does not exist",
        operations=frozenset({"table_move_propose"}),
    ),
    Refusal(
        400,
        "pool_not_for_stud",
        "only a UTH table feeds a pool: the table's game",
        operations=frozenset({"table_move_propose"}),
    ),
    Refusal(
        400,
        "no_change",
        "the table already feeds that pool: the table's state",
        operations=frozenset({"table_move_propose"}),
    ),
    Refusal(
        409,
        "table_open",
        "a table moves to another pool only while closed: its state, not its shape",
        operations=frozenset({"table_move_approve"}),
    ),
    Refusal(
        409,
        "table_has_open_rounds",
        "a table moves only without an open round: its state, not its shape",
        operations=frozenset({"table_move_approve"}),
    ),
    # A pool's parameter changes: the pool and its other proposals, not the body's shape.
    Refusal(
        400,
        "no_change",
        "a proposal whose values the pool already has (or none): the pool's state",
        operations=frozenset({"pool_change_propose", "pool_replace_propose"}),
    ),
    Refusal(
        400,
        "invalid_change",
        "values that do not fit together or with the pool (shares over 10,000, an unknown "
        "paytable, a name another pool has): cross-field and cross-row rules",
        operations=frozenset({"pool_change_propose", "pool_replace_propose"}),
    ),
    Refusal(404, "change_not_found", "a change id that does not exist"),
    Refusal(409, "pool_tables_open", "the pool's tables are open for play: the floor's state"),
    Refusal(409, "pool_round_open", "a round of the pool is open: the floor's state"),
    Refusal(409, "change_stale", "the pool changed since the proposal"),
    Refusal(409, "terms_fixed", "a running pool's increment terms never change: its state"),
    Refusal(409, "change_wrong_status", "the change was already decided"),
    Refusal(
        403,
        "not_the_proposer",
        "only its proposer withdraws a change: a generated change id may name another admin's",
        operations=frozenset(
            {"pool_change_withdraw", "table_move_withdraw", "terminal_issue_withdraw"}
        ),
    ),
    # A stop's notices and the register of orphans (jackpot.pools.notices, .orphans): their state.
    Refusal(404, "notice_not_found", "a notice id that does not exist"),
    Refusal(409, "notice_sent", "the notice is recorded sent already: its state"),
    Refusal(
        400,
        "invalid_effective_at",
        "a voluntary stop's date at least 15 days ahead, an involuntary one's none: a rule on two"
        " fields and the clock",
        operations=frozenset({"pool_stop_propose"}),
    ),
    Refusal(409, "notice_period_running", "a voluntary stop's 15 days still run: its state"),
    Refusal(409, "no_orphans", "the pool was not stopped to orphans: its state"),
    Refusal(409, "orphans_recovered", "the pool's orphans were recovered already: its state"),
    Refusal(409, "orphans_final", "the pool's orphans are final: the season's state"),
    Refusal(
        400,
        "invalid_heir",
        "the pool taking the orphans is another active pool: the pools' state",
        operations=frozenset({"orphan_recovery_propose"}),
    ),
    # The club's sessions and their drop boxes (tables.club): the club's state.
    Refusal(404, "session_not_found", "a session id that does not exist"),
    Refusal(
        409,
        "session_open",
        "a session is open already: the club's state",
        operations=frozenset({"session_open"}),
    ),
    Refusal(409, "session_closed", "the session is closed already: its state"),
    Refusal(409, "session_not_closed", "a box is counted once its session closed: its state"),
    Refusal(404, "table_not_in_session", "the session's snapshot has no line for the table"),
    Refusal(409, "drop_not_counted", "the box has no first count to confirm: its state"),
    Refusal(409, "drop_confirmed", "the box's count is confirmed already: its state"),
    Refusal(409, "count_disagrees", "a blind confirmation of another amount: the count's state"),
    Refusal(
        403,
        "drop_counted_by_another",
        "another person counted the box: the count's state",
        operations=frozenset({"drop_count"}),
    ),
    Refusal(
        403,
        "four_eyes",
        "the counter confirms their own count: the count's state",
        operations=frozenset({"drop_confirm"}),
    ),
    # A documented correction (jackpot.pools.corrections): the pool's and the award's state.
    Refusal(
        400,
        "invalid_correction",
        "an amount of 0, or an award named or not as the target asks: cross-field rules",
        operations=frozenset({"pool_correction_propose"}),
    ),
    Refusal(
        404,
        "award_not_found",
        "an award id the pool does not have: the pool's state",
        operations=frozenset({"pool_correction_propose"}),
    ),
    Refusal(409, "correction_below_zero", "the meter or reserve would go below zero: its state"),
    Refusal(409, "award_paid", "the award named is paid: its state"),
    Refusal(409, "award_void", "the award named is void: its state"),
    Refusal(409, "award_due_not_positive", "the award would owe nothing: its state"),
    Refusal(
        403,
        "not_the_proposer",
        "only its proposer withdraws a correction",
        operations=frozenset({"pool_correction_withdraw"}),
    ),
    Refusal(409, "void_requested", "the jackpot's void is requested: the award's state"),
    Refusal(409, "void_not_requested", "no void is requested: the award's state"),
    # A pool's life (jackpot.pools.lifecycle): its status, which a generated suspension sets.
    Refusal(409, "pool_suspended", "the pool is suspended: the pool's state, not the body's"),
    Refusal(409, "pool_stopped", "the pool was stopped for good: the pool's state"),
    Refusal(
        409,
        "pool_not_suspended",
        "only a suspended pool is resumed: the pool's state",
        operations=frozenset({"pool_resume"}),
    ),
    Refusal(
        409,
        "pool_awards_unpaid",
        "a stop waits for the pool's awards to be paid or void: their state",
        operations=frozenset({"pool_change_approve"}),
    ),
    Refusal(
        400,
        "invalid_disposition",
        "a stop names another active pool with `to` pool, none with `to` orphan: a cross-field "
        "rule, and other pools' state",
        operations=frozenset({"pool_stop_propose"}),
    ),
    # Notices and orphans (jackpot.pools.notices, jackpot.pools.orphans).
    Refusal(
        400,
        "invalid_effective_at",
        "a voluntary stop names a date 15 days on at least, an involuntary one none: the clock",
        operations=frozenset({"pool_stop_propose"}),
    ),
    Refusal(
        409,
        "notice_period_running",
        "a voluntary stop waits for its date and its notice's 15 days: the clock",
        operations=frozenset({"pool_change_approve"}),
    ),
    Refusal(
        400,
        "invalid_notice",
        "a notice's sent_at lies between its making and now: the clock",
        operations=frozenset({"notice_sent"}),
    ),
    Refusal(
        409,
        "notice_sent",
        "a notice is sent once: its state",
        operations=frozenset({"notice_sent"}),
    ),
    Refusal(
        409,
        "no_orphans",
        "only a pool stopped to orphans has orphans: its state",
        operations=frozenset({"orphan_recovery_propose"}),
    ),
    Refusal(
        400,
        "invalid_heir",
        "orphans go to an active pool of the currency: other pools' state",
        operations=frozenset({"orphan_recovery_propose"}),
    ),
]


@schemathesis.check
def valid_input_accepted(ctx: Any, response: Any, case: schemathesis.Case) -> bool | None:
    """A request valid by the schema is not refused, unless by a rule in SEMANTIC_REFUSALS."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    if not 400 <= response.status_code < 500:
        return None
    body = _json(response)
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    operation_id = case.operation.definition.raw["operationId"]
    if any(r.allows(operation_id, response.status_code, error) for r in SEMANTIC_REFUSALS):
        return None
    raise AssertionError(
        f"{operation_id}: input valid by the schema refused with {response.status_code} "
        f"{error.get('code')!r} ({error.get('message')!r}, param {error.get('param')!r}): "
        "a constraint the service enforces and the schema does not declare"
    )


CHECKS.append(valid_input_accepted)


class UndocumentedStatus(UserWarning):
    """An operation answered a status code its schema does not document."""


def _json(response: Any) -> Any:
    """The JSON body of a Django or schemathesis response, or None."""
    try:
        return json.loads(response.content)
    except ValueError:
        return None


T = TypeVar("T")


def _journal_end() -> int:
    """The journal's last event id (0 when empty)."""
    return AuditEvent.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


@dataclass
class World:
    """The floor the requests run against, and fresh rows for the steps that use one up."""

    terminal: Terminal  # a UTH table of the pool
    stud: Terminal  # the Stud table
    spare: Terminal  # a UTH table the table administration may close and move
    pool_id: int
    staff: dict[str, str]  # role -> bearer token
    rounds: list[str]  # one round in each state: settled, open, void
    numbers: Iterator[int] = field(default_factory=itertools.count)
    built_export: int | None = None
    reconciled: int | None = None
    made: dict[str, tuple[Any, int]] = field(default_factory=dict)  # row, journal's end then

    def kept(self, what: str, make: Callable[[], T]) -> T:
        """The row `make` made for an earlier case if the journal has not grown since (it is
        untouched: see the module's docstring), else a new one."""
        found = self.made.get(what)
        if found is not None and found[1] == _journal_end():
            return cast(T, found[0])
        row = make()
        self.made[what] = (row, _journal_end())
        return row

    def staff_client(self, role: str) -> Client:
        return Client(HTTP_AUTHORIZATION=f"Bearer {self.staff[role]}")

    def clear(self, terminal: Terminal) -> None:
        """Void the round left open at the terminal's table (one open round per table)."""
        listed = terminal.client().get(f"/api/v1/tables/{terminal.table_id}/rounds?state=open")
        assert listed.status_code == 200, _json(listed)
        for found in listed.json()["results"]:
            voided = terminal.post(f"/rounds/{found['round_id']}/void", {"reason": "next round"})
            assert voided.status_code == 200, _json(voided)

    def open_round(self, terminal: Terminal | None = None) -> str:
        terminal = terminal or self.terminal
        self.clear(terminal)
        round_id = f"fresh-{next(self.numbers)}"
        seat = (
            uth_seat(1) if terminal is self.terminal else {"seat": 1, "bets": {"ante_cents": 500}}
        )
        opened = terminal.post("/rounds", {"round_id": round_id, "seats": [seat]})
        assert opened.status_code == 201, _json(opened)
        return round_id

    def hit(self) -> tuple[str, int, int]:
        """A settled round with a jackpot royal (seat 1, pending) and an envy (seat 2,
        approved at once): the round id and the two award ids."""
        round_id = f"hit-{next(self.numbers)}"
        self.clear(self.terminal)
        self.terminal.post("/rounds", {"round_id": round_id, "seats": [uth_seat(1), uth_seat(2)]})
        settled = self.terminal.post(
            f"/rounds/{round_id}/result",
            {
                "board": ["Ah", "Kh", "Qh", "2c", "3d"],
                "dealer": ["9s", "9d"],
                "seats": [uth_play(1, "Jh Th"), uth_play(2, "4c 5c", "fold")],
            },
        )
        assert settled.status_code == 200, _json(settled)
        jackpot, envy = (award["id"] for award in settled.json()["awards"])
        return round_id, jackpot, envy

    def award_for(self, step: str) -> int:
        """A fresh award in the state `step` needs (approve: verified by another supervisor and
        confirmed by surveillance; a referral's decision: referred by surveillance; a jackpot's
        void confirmed or cancelled: requested by another supervisor)."""
        _, jackpot, envy = self.hit()
        if step == "award_pay":
            return envy
        if step == "award_approve":
            verified = self.staff_client("supervisor").post(
                f"/api/v1/awards/{jackpot}/verify", {"note": "ok"}, content_type="application/json"
            )
            assert verified.status_code == 200, _json(verified)
            surveilled(jackpot)  # the pool requires surveillance's review (by another officer)
        if step == "award_referral_decide":
            referred(jackpot)  # by another officer than the admin who decides
        if step in {"award_void_confirm", "award_void_cancel"}:
            requested = self.staff_client("supervisor").post(
                f"/api/v1/awards/{jackpot}/void", {"reason": "x"}, content_type="application/json"
            )
            assert requested.status_code == 202, _json(requested)
        return jackpot

    def reconciliation(self) -> int:
        """A reconciliation report stored here (no worker runs in this test)."""
        if self.reconciled is None:
            self.reconciled = reconcile().pk
        return self.reconciled

    def export(self) -> int:
        """A background export built here (no worker runs in this test): done, with its file."""
        if self.built_export is None:
            user = User.objects.get(username="auditor")
            job = export_job_create(user=user, filters=ExportRequest())
            assert export_job_build(job_id=job.pk) == Built.DONE
            self.built_export = job.pk
        return self.built_export

    def closed_session(self) -> int:
        """A session opened and closed by the supervisor (none is left open for the next)."""
        supervisor = self.staff_client("supervisor")
        opened = supervisor.post("/api/v1/sessions", {}, content_type="application/json")
        if opened.status_code == 409:  # a generated case opened one: close it first
            current = ClubSession.objects.get(status=SessionStatus.OPEN).pk
            closed = supervisor.post(
                f"/api/v1/sessions/{current}/close", content_type="application/json"
            )
            assert closed.status_code == 200, _json(closed)
            opened = supervisor.post("/api/v1/sessions", {}, content_type="application/json")
        assert opened.status_code == 201, _json(opened)
        session = int(opened.json()["id"])
        closed = supervisor.post(
            f"/api/v1/sessions/{session}/close", content_type="application/json"
        )
        assert closed.status_code == 200, _json(closed)
        return session

    def spare_terminal(self) -> int:
        """A terminal of the spare table, issued beside its own, for a revocation to find."""
        table = Table.objects.get(pk=self.spare.table_id)
        issued = operator_terminal_issue(
            table=table, name="fuzz", revoke_others=False, actor="test"
        )
        return issued.terminal.pk

    def change_for(self, step: str) -> int:
        """A fresh proposal (of the seed, which nothing else changes): by the world's admin for
        a withdrawal (the proposer's), else by the second admin, so that the world's admin may
        decide it. A correction's: a raise of the meter, by the world's manager for a withdrawal,
        else by the supervisor, so that the world's manager may decide it."""
        if step.startswith("pool_correction_"):
            proposer = "manager" if step == "pool_correction_withdraw" else "supervisor"
            corrected = self.staff_client(proposer).post(
                f"/api/v1/pools/{self.pool_id}/corrections",
                {
                    "target": "meter",
                    "amount_cents": 1,
                    "reason": "a test",
                    "reference": "ANJ-1",
                    "evidence": "a ticket",
                },
                content_type="application/json",
            )
            assert corrected.status_code == 201, _json(corrected)
            return int(corrected.json()["id"])
        threshold = 100_000 + next(self.numbers)  # a pool's terms never change (compliance 56)
        proposer = "admin" if step == "pool_change_withdraw" else "admin2"
        proposed = self.staff_client(proposer).post(
            f"/api/v1/pools/{self.pool_id}/changes",
            {"changes": {"verification_threshold_cents": threshold}, "reason": "a test"},
            content_type="application/json",
        )
        assert proposed.status_code == 201, _json(proposed)
        return int(proposed.json()["id"])

    def prepare(self, case: schemathesis.Case) -> dict[str, str]:
        """Point the case's path at the floor; the Authorization header its security names."""
        operation_id = case.operation.definition.raw["operationId"]
        # Schemathesis checks each dictionary card it substitutes against the card's pattern, not
        # against its list's uniqueItems: setting the body has it revalidate the body as sent,
        # so a list with a card twice counts as the negative case it is.
        case.body = case.body
        params = case.path_parameters
        terminal = self.stud if _is_stud(operation_id, case.body) else self.terminal
        if operation_id == "round_open":
            self.clear(terminal)
        if params is not None:
            if "table" in params:
                administered = operation_id in ADMINISTERED
                params["table"] = (self.spare if administered else terminal).table_id
            if "pool" in params:
                params["pool"] = self.pool_id
            real = _coin(case)
            if "round_id" in params and real is not None:
                if operation_id == "round_detail":
                    params["round_id"] = self.rounds[real % len(self.rounds)]
                else:
                    params["round_id"] = self.kept(
                        f"round at {terminal.table_id}", lambda: self.open_round(terminal)
                    )
            if "terminal" in params and real is not None:
                params["terminal"] = self.kept("terminal", self.spare_terminal)
            if "award" in params and real is not None:
                params["award"] = self.kept(operation_id, lambda: self.award_for(operation_id))
            if "change" in params and real is not None:
                params["change"] = self.kept(operation_id, lambda: self.change_for(operation_id))
            if "session" in params and real is not None:
                params["session"] = self.kept("session", self.closed_session)
            if "export" in params and real is not None:
                params["export"] = self.export()
            if "reconciliation" in params and real is not None:
                params["reconciliation"] = self.reconciliation()
        schemes = {
            name for item in case.operation.definition.raw.get("security", []) for name in item
        }
        if "terminalToken" in schemes:
            return {"Authorization": f"Bearer {terminal.token}"}
        if "staffToken" in schemes:
            # A money step is a manager's: an admin decides no money (compliance 52).
            who = "manager" if operation_id in MONEY else "admin"
            # The session registers are the money's people's: an auditor reads them, and the
            # sessions too.
            who = "auditor" if operation_id in REGISTERS | SESSION_READS else who
            return {"Authorization": f"Bearer {self.staff[who]}"}
        return {}


#: The money steps: called with the manager's token (an admin's is 403).
MONEY = frozenset(
    {
        "award_verify",
        "award_approve",
        "award_pay",
        "award_void",
        "award_void_confirm",
        "award_void_cancel",
        "award_referral_decide",
        "round_supervisor_void",
        "pool_correction_propose",
        "pool_correction_approve",
        "pool_correction_reject",
        "pool_correction_withdraw",
        # A stopped pool's orphans recovered (jackpot.pools.orphans).
        "orphan_recovery_propose",
        "orphan_recovery_approve",
        "orphan_recovery_reject",
        # The club's sessions and their drop counts (tables.club).
        "session_open",
        "session_close",
        "drop_count",
        "drop_confirm",
    }
)


#: The session registers: called with the auditor's token (an admin's is 403).
REGISTERS = frozenset({"register_withheld", "register_displayed"})
#: The sessions' reads: called with the auditor's token (an admin's is 403).
SESSION_READS = frozenset({"session_list", "session_get"})


#: The operations on a table that the table administration calls: they get the spare table.
ADMINISTERED = frozenset(
    {
        "table_detail",
        "table_change",
        "table_move_propose",
        "table_move_approve",
        "table_move_reject",
        "table_move_withdraw",
        "terminal_list",
        "terminal_issue_propose",
        "terminal_issue_approve",
        "terminal_issue_reject",
        "terminal_issue_withdraw",
        "terminal_revoke",
    }
)


def _is_stud(operation_id: str, body: Any) -> bool:
    """Whether a round's body is of Stud Poker's shape: an open whose bets carry none of UTH's
    fields, a result with no board. The table is chosen to match, since the path's table decides
    the game and the schema cannot tie the two."""
    if not isinstance(body, dict):
        return False
    if operation_id == "round_result":
        return "board" not in body
    if operation_id == "round_open":
        seats = body.get("seats")
        bets = (
            [seat.get("bets") for seat in seats if isinstance(seat, dict)]
            if isinstance(seats, list)
            else []
        )
        uth = {"blind_cents", "trips_cents", "progressive_cents"}
        return bool(bets) and all(isinstance(b, dict) and not uth & set(b) for b in bets)
    return False


def _coin(case: schemathesis.Case) -> int | None:
    """None for one case in four (keep the generated id), else a number to pick a real row.

    Derived from the generated data, so a run makes the same requests every time.
    """
    generated = json.dumps(
        [case.path_parameters, case.query, case.body],
        sort_keys=True,
        default=lambda value: type(value).__name__,
    )
    number = zlib.crc32(generated.encode())
    return None if number % 4 == 0 else number // 4


@pytest.fixture
def kept_connection(transactional_db) -> Iterator[None]:
    """The requests keep the database connection from one to the next, as production's do
    (CONN_MAX_AGE and CONN_HEALTH_CHECKS, config.settings.production).

    They go through Django's own WSGI handler, which closes a connection past its age after each
    request, and the suite's age is 0: each of the ~90 requests an operation sends would start a
    PostgreSQL backend and warm its catalog caches again (the module: 130 to 133 s that way,
    94 to 101 s this way, `pytest -n 4`, 2026-12-05). The age is read from the connection's own
    settings when it connects; an unusable connection is still closed after its request.
    """
    database = connections[DEFAULT_DB_ALIAS]
    saved = {key: database.settings_dict[key] for key in ("CONN_MAX_AGE", "CONN_HEALTH_CHECKS")}
    database.settings_dict.update(CONN_MAX_AGE=600, CONN_HEALTH_CHECKS=True)
    database.close()  # the next one connects with these
    yield
    database.settings_dict.update(saved)
    database.close()


@pytest.fixture
def world(transactional_db, kept_connection, django_user_model, settings, tmp_path) -> World:
    """One floor for all of an operation's examples (each request commits, as in production)."""
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": LIMITLESS}
    settings.EXPORT_DIR = tmp_path / "exports"
    floor = make_floor()
    staff = {}
    for role in ("supervisor", "auditor", "admin", "manager"):
        staff[role] = staff_token(person(role, role))
    # Every staff operation but a money step is called with the admin's token (`MONEY`: the
    # manager's): the admin is also a surveillance
    # officer, so that a video review (the surveillance role's) is an operation it may call.
    grant_roles(django_user_model.objects.get(username="admin"), role_group("surveillance"))
    # A second admin proposes the changes the world's admin decides (four eyes).
    staff["admin2"] = staff_token(person("admin2", "admin"))
    world = World(
        terminal=floor.uth[0],
        stud=floor.stud,
        spare=floor.uth[1],
        pool_id=floor.pool_id,
        staff=staff,
        rounds=[],
    )
    settled, _, _ = world.hit()
    voided = world.open_round()
    answer = world.terminal.post(f"/rounds/{voided}/void", {"reason": "misdeal"})
    assert answer.status_code == 200, _json(answer)
    world.rounds = [settled, world.open_round(), voided]  # settled, open, void
    return world


@pytest.fixture
def undocumented(request) -> Iterator[dict[int, set[str]]]:
    """Undocumented status codes the operation answered, with the error codes seen."""
    seen: dict[int, set[str]] = defaultdict(set)
    yield seen
    if seen:
        found = "; ".join(
            f"{status} ({', '.join(sorted(codes))})" for status, codes in sorted(seen.items())
        )
        warnings.warn(UndocumentedStatus(f"undocumented status {found}"), stacklevel=1)


# `world` is meant to be shared by the examples: it is the floor they all play on.
@hypothesis.settings(
    suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture], deadline=None
)
@schema.parametrize()
def test_api_conforms_to_schema(case, world, undocumented):
    response = case.call(headers=world.prepare(case))
    case.validate_response(response, checks=CHECKS)
    if UNDOCUMENTED_STATUS_FAILS:
        return
    try:
        case.validate_response(response, checks=[status_code_conformance])
    except FailureGroup:
        body = _json(response)
        error = body.get("error") if isinstance(body, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        undocumented[response.status_code].add(str(code or "no error code"))
