"""The terminal round API: thin views that parse, call a service and render its result.

Each round step's view hashes the body once (`jackpot.money.canonical.fingerprint`) and derives the
Idempotency-Key's fingerprint from it (`tables.rounds.key_fingerprint`); the service runs the
whole step, key record included, in its one durable transaction; the view chooses the status
from the result's type (201 for an open, 200 otherwise) and says whether it is a replay.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import ApiError, NotFound
from core.openapi import query_parameters
from core.throttling import WindowThrottle
from core.wire import read_query
from jackpot.money.canonical import fingerprint
from tables.api.authentication import (
    IsTableTerminal,
    OpenForPlay,
    TerminalAuthentication,
    TerminalPrincipal,
)
from tables.bodies.round_answers import OpenAnswer, ResultAnswer, VoidAnswer
from tables.bodies.round_reads import RoundDetail, RoundListQuery, RoundPage
from tables.bodies.round_requests import (
    OpenBody,
    ResultBody,
    VoidBody,
    parse_open,
    parse_result,
    parse_void,
)
from tables.bodies.vocabulary import ROUND_ID_PATTERN, round_id_of
from tables.models import Game, Round, Table
from tables.rounds import (
    IdempotencyKey,
    RoundOpened,
    StepResult,
    key_fingerprint,
    round_open,
    round_settle,
    round_void,
)
from tables.selectors.rounds import round_page

IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,128}")
IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    pattern=r"^[!-~]{1,128}$",
    description="1 to 128 printable ASCII characters: a retry with the same key and body gets "
    "the first answer; the same key with another body gets 409.",
)


REPLAYED = "Idempotent-Replayed"


def replayed_header(status: int) -> OpenApiParameter:
    """The response header of a round step's replay, declared on its success status."""
    return OpenApiParameter(
        REPLAYED,
        str,
        OpenApiParameter.HEADER,
        enum=["true"],
        description="`true` when this is the stored first answer of an earlier request (a retry "
        "by round_id or by Idempotency-Key), not this request's own; absent on a first answer.",
        response=[status],
    )


ROUND_ID_PATH = OpenApiParameter(
    "round_id",
    str,
    OpenApiParameter.PATH,
    pattern=ROUND_ID_PATTERN,
    description="the terminal's id of the round: 1 to 64 letters, digits and . _ : -",
)


class TerminalThrottle(WindowThrottle):
    """Requests per terminal (a runaway terminal cannot starve the others)."""

    scope = "terminal"

    def client_key(self, request: Request, view: Any) -> str | None:
        principal = request.user
        return str(principal.terminal.pk) if isinstance(principal, TerminalPrincipal) else None


def rendered(result: StepResult) -> Response:
    """A round step's result as its HTTP answer: 201 for a round opened, 200 for the others; a
    replay says so (a terminal that restarted its round numbering learns it got an old answer)."""
    headers = {REPLAYED: "true"} if result.replayed else None
    status = 201 if isinstance(result, RoundOpened) else 200
    return Response(result.answer, status=status, headers=headers)


@dataclass(frozen=True, slots=True)
class StepCall:
    """What a round step's service needs from its request besides the parsed body."""

    table: Table
    actor: str
    fingerprint: str  # the body's (`jackpot.money.canonical.fingerprint`), computed once
    key: IdempotencyKey | None


class TerminalView(APIView):
    authentication_classes = [TerminalAuthentication]
    permission_classes = [IsTableTerminal]
    throttle_classes = [TerminalThrottle]

    def principal(self, request: Request) -> TerminalPrincipal:
        principal = request.user
        assert isinstance(principal, TerminalPrincipal)
        return principal

    def step_call(self, request: Request) -> StepCall:
        """The terminal's table and actor, the body's fingerprint, and the Idempotency-Key (if
        sent) with the fingerprint derived from that one."""
        principal = self.principal(request)
        body = fingerprint(request.data)
        raw = request.headers.get("Idempotency-Key")
        if raw is not None and not IDEMPOTENCY_KEY.fullmatch(raw):
            raise ApiError(
                "invalid_idempotency_key",
                "Idempotency-Key must be 1 to 128 printable ASCII characters",
                param="Idempotency-Key",
            )
        key = None if raw is None else IdempotencyKey(raw, key_fingerprint(request.path, body))
        return StepCall(principal.table, principal.actor, body, key)

    def run(self, request: Request, step: Callable[[StepCall], StepResult]) -> Response:
        """Run a round step with the request's `StepCall`, and render its result."""
        return rendered(step(self.step_call(request)))


class TableRoundsView(TerminalView):
    permission_classes = [IsTableTerminal, OpenForPlay]

    @extend_schema(
        operation_id="round_list",
        parameters=query_parameters(RoundListQuery),
        responses={200: RoundPage},
        summary="The table's rounds, newest first: state=open finds a round left open",
        description="For a terminal recovering after a crash: its open round's `round_id` (then "
        "GET it, post its result or void it). `stale` marks a round open for "
        "ROUND_STALE_AFTER_SECONDS or longer. Ages are by the service's clock.",
    )
    def get(self, request: Request, table: int) -> Response:
        query = read_query(RoundListQuery, request.query_params)
        page = round_page(table=self.principal(request).table, query=query, now=timezone.now())
        return Response(page.model_dump(mode="json"))

    @extend_schema(
        operation_id="round_open",
        parameters=[IDEMPOTENCY_HEADER, replayed_header(201)],
        request=OpenBody,
        responses={201: OpenAnswer},
        summary="Open a round: lock each seat's bets (progressive stakes raise the meter)",
        description="One round at a time per table: while another round is open at the table, "
        "an open is refused with 409 `round_in_progress` naming it. A table closed for play "
        "opens no round (403 `permission_denied`); its round in progress is still settled or "
        "voided.",
    )
    def post(self, request: Request, table: int) -> Response:
        table_obj = self.principal(request).table
        parsed = parse_open(
            request.data,
            game=Game(table_obj.game),
            seats=table_obj.seats,
            progressive_stake_cents=table_obj.pool.stake_cents if table_obj.pool else None,
        )
        return self.run(
            request,
            lambda call: round_open(
                table=call.table,
                request=parsed,
                fingerprint=call.fingerprint,
                actor=call.actor,
                key=call.key,
            ),
        )


class RoundResultView(TerminalView):
    @extend_schema(
        operation_id="round_result",
        parameters=[ROUND_ID_PATH, IDEMPOTENCY_HEADER, replayed_header(200)],
        request=ResultBody,
        responses={200: ResultAnswer},
        summary="Post a round's cards and decisions: every box and progressive award is settled",
        description="Settled with the terms the round opened with (its pool's stake, paytable "
        "and verification threshold then), also at a table closed for play since.",
    )
    def post(self, request: Request, table: int, round_id: str) -> Response:
        table_obj = self.principal(request).table
        round_id_of(round_id)
        parsed = parse_result(request.data, game=Game(table_obj.game), seats=table_obj.seats)
        return self.run(
            request,
            lambda call: round_settle(
                table=call.table,
                round_id=round_id,
                request=parsed,
                fingerprint=call.fingerprint,
                actor=call.actor,
                key=call.key,
            ),
        )


class RoundVoidView(TerminalView):
    @extend_schema(
        operation_id="round_void",
        parameters=[ROUND_ID_PATH, IDEMPOTENCY_HEADER, replayed_header(200)],
        request=VoidBody,
        responses={200: VoidAnswer},
        summary="Void an open round (misdeal): progressive stakes are refunded by the house",
        description="Also at a table closed for play since the round opened.",
    )
    def post(self, request: Request, table: int, round_id: str) -> Response:
        round_id_of(round_id)
        reason = parse_void(request.data)
        return self.run(
            request,
            lambda call: round_void(
                table=call.table,
                round_id=round_id,
                reason=reason,
                fingerprint=call.fingerprint,
                actor=call.actor,
                key=call.key,
            ),
        )


class RoundDetailView(TerminalView):
    @extend_schema(
        operation_id="round_detail",
        parameters=[ROUND_ID_PATH],
        responses={200: RoundDetail},
        summary="A round as the service holds it (for a terminal recovering after a crash)",
    )
    def get(self, request: Request, table: int, round_id: str) -> Response:
        table_obj = self.principal(request).table
        round_id_of(round_id)
        found = Round.objects.filter(table=table_obj, round_id=round_id).first()
        if found is None:
            raise NotFound(
                "round_not_found",
                f"no round {round_id!r} at table {table_obj.pk}",
                param="round_id",
            )
        return Response(
            {
                "table": table_obj.pk,
                "round_id": found.round_id,
                "state": found.state,
                "opened": found.open_response,
                "closed": found.close_response,
            }
        )
