"""The floors the round API is measured against: the same stack, none of the work.

- `TrivialView`: a DRF endpoint that inserts one row and updates one counter row, in a
  transaction (gunicorn, Django, DRF, the strict JSON parser, PostgreSQL); bench/ingest.py
  reports the round API's request rate as a share of this one's. Its two tables are created by
  bench/ingest.py.
- `RoundShapeView`: a round step's shape (below): bench/round_cpu.py and bench/ingest.py post a
  round's two bodies to it.
- `BareShapeView` and `django_shape`: the two rungs under it, for bench/round_cpu.py's ladder:
  the same step as a DRF view with no authentication, permission or throttle, and as a plain
  Django view (the project's middleware, `json.loads`, a `JsonResponse`): what DRF and the
  terminal's checks cost, and what a step outside DRF could cost at the least.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from django.db import connection, transaction
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bench.shape import LOOKUPS
from tables.api.authentication import IsTableTerminal, TerminalAuthentication
from tables.api.views import TerminalThrottle


class TrivialView(APIView):
    authentication_classes: list[type] = []
    permission_classes: list[type] = []
    throttle_classes: list[type] = []

    def post(self, request: Request) -> Response:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("INSERT INTO bench_row (body) VALUES (%s)", [json.dumps(request.data)])
            cursor.execute("UPDATE bench_counter SET hits = hits + 1 WHERE id = 1 RETURNING hits")
            (hits,) = cursor.fetchone()
        return Response({"hits": hits}, status=201)


class RoundShapeView(APIView):
    """The round API's floor: a round step as this stack serves it, with none of its work.

    The round steps' own authentication (a terminal's token, read with its table and pool),
    permission, throttle and strict JSON parser; `statements` statements in all, as a step
    counts them (`bench.shape`): the authentication's look-up, then one transaction of
    one-line statements for the rest; and an answer rendered by DRF: the step's real one where
    the bench set it (`answers`, in process), else the body posted (in a server: a smaller
    answer, so a lower floor). What a real step costs above this is its own code's: the rules,
    its SQL built and its parameters sent, the journal's hash, the sign's cache.
    """

    authentication_classes = [TerminalAuthentication]
    permission_classes = [IsTableTerminal]
    throttle_classes = [TerminalThrottle]
    answers: ClassVar[dict[str, tuple[int, Any]]] = {}  # step -> (status, answer)

    def post(self, request: Request, table: int, step: str, statements: int) -> Response:
        body = request.data  # read by the strict parser, as a step's body is
        with transaction.atomic(), connection.cursor() as cursor:
            # `statements` counts the step's all (bench.shape): the look-up was sent already.
            for _ in range(max(0, statements - LOOKUPS)):
                cursor.execute("SELECT %s", [table])
                cursor.fetchone()
        status, answer = self.answers.get(step, (201 if step == "open" else 200, body))
        return Response(answer, status=status)


class BareShapeView(RoundShapeView):
    """`RoundShapeView` without the terminal's authentication, permission and throttle: DRF's
    view, the strict parser and the renderer alone (and, with no statement, a transaction that
    sends nothing)."""

    authentication_classes = []
    permission_classes = []
    throttle_classes = []


@csrf_exempt
def django_shape(request: HttpRequest, step: str) -> JsonResponse:
    """A round step as plain Django serves it: the body read, the step's answer written (as
    `RoundShapeView`'s), no DRF, no check, no statement."""
    body = json.loads(request.body)
    status, answer = RoundShapeView.answers.get(step, (201 if step == "open" else 200, body))
    return JsonResponse(answer, status=status, safe=False)
