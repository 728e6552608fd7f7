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
Bodies and query strings are all generated, with two dictionaries: card strings come from the deck
most of the time (so the rules API and the round result get past the card parser), and free text
often gets a hostile string (NUL and the like).

It fails on any 5xx and on a documented status whose content type or body breaks the schema. A
status the schema does not document (most error responses are not) is reported as an
`UndocumentedStatus` warning with the error codes seen; once the schema documents them, set
`UNDOCUMENTED_STATUS_FAILS` and it fails on those too.
"""

from __future__ import annotations

import itertools
import json
import warnings
import zlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import hypothesis
import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from django.test import Client
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from jackpot.services import role_group, staff_token_issue
from tests.conftest import Terminal, make_floor, uth_play, uth_seat

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

CHECKS = [not_a_server_error, content_type_conformance, response_schema_conformance]
if UNDOCUMENTED_STATUS_FAILS:
    CHECKS.append(status_code_conformance)
# The run sends well over the default 600 requests a minute from one address.
LIMITLESS = {"anon": "1000000/min", "rules": "1000000/min", "terminal": "1000000/min"}


class UndocumentedStatus(UserWarning):
    """An operation answered a status code its schema does not document."""


def _json(response: Any) -> Any:
    """The JSON body of a Django or schemathesis response, or None."""
    try:
        return json.loads(response.content)
    except ValueError:
        return None


@dataclass
class World:
    """The floor the requests run against, and fresh rows for the steps that use one up."""

    terminal: Terminal
    pool_id: int
    staff: dict[str, str]  # role -> bearer token
    rounds: list[str]  # one round in each state: settled, open, void
    numbers: Iterator[int] = field(default_factory=itertools.count)

    def staff_client(self, role: str) -> Client:
        return Client(HTTP_AUTHORIZATION=f"Bearer {self.staff[role]}")

    def open_round(self) -> str:
        round_id = f"fresh-{next(self.numbers)}"
        opened = self.terminal.post("/rounds", {"round_id": round_id, "seats": [uth_seat(1)]})
        assert opened.status_code == 201, _json(opened)
        return round_id

    def hit(self) -> tuple[str, int, int]:
        """A settled round with a jackpot royal (seat 1, pending) and an envy (seat 2,
        approved at once): the round id and the two award ids."""
        round_id = f"hit-{next(self.numbers)}"
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
        """A fresh award in the state `step` needs (approve: verified by another supervisor)."""
        _, jackpot, envy = self.hit()
        if step == "award_pay":
            return envy
        if step == "award_approve":
            verified = self.staff_client("supervisor").post(
                f"/api/v1/awards/{jackpot}/verify", {"note": "ok"}, content_type="application/json"
            )
            assert verified.status_code == 200, _json(verified)
        return jackpot

    def prepare(self, case: schemathesis.Case) -> dict[str, str]:
        """Point the case's path at the floor; the Authorization header its security names."""
        operation_id = case.operation.definition.raw["operationId"]
        params = case.path_parameters
        if params is not None:
            if "table" in params:
                params["table"] = self.terminal.table_id
            if "pool" in params:
                params["pool"] = self.pool_id
            real = _coin(case)
            if "round_id" in params and real is not None:
                if operation_id == "round_detail":
                    params["round_id"] = self.rounds[real % len(self.rounds)]
                else:
                    params["round_id"] = self.open_round()
            if "award" in params and real is not None:
                params["award"] = self.award_for(operation_id)
        schemes = {
            name for item in case.operation.definition.raw.get("security", []) for name in item
        }
        if "terminalToken" in schemes:
            return {"Authorization": f"Bearer {self.terminal.token}"}
        if "staffToken" in schemes:
            return {"Authorization": f"Bearer {self.staff['admin']}"}
        return {}


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
def world(transactional_db, django_user_model, settings) -> World:
    """One floor for all of an operation's examples (each request commits, as in production)."""
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": LIMITLESS}
    floor = make_floor()
    staff = {}
    for role in ("supervisor", "auditor", "admin"):
        user = django_user_model.objects.create(username=role)
        user.groups.add(role_group(role))
        staff[role] = staff_token_issue(user=user, revoke_others=False, actor="test")
    world = World(terminal=floor.uth[0], pool_id=floor.pool_id, staff=staff, rounds=[])
    settled, _, _ = world.hit()
    world.rounds = [settled, world.open_round(), world.open_round()]
    voided = world.terminal.post(f"/rounds/{world.rounds[2]}/void", {"reason": "misdeal"})
    assert voided.status_code == 200, _json(voided)
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
@hypothesis.settings(suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture])
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
