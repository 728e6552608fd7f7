"""The floor: a DRF endpoint that inserts one row and updates one counter row, in a transaction.

Same stack as the round API (gunicorn, Django, DRF, the strict JSON parser, PostgreSQL), none of
the work; bench/ingest.py reports the round API's request rate as a share of this one's.
Its two tables are created by bench/ingest.py.
"""

from __future__ import annotations

import json

from django.db import connection, transaction
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


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
