"""Pool reads for displays and regulators (public), the journal and the significant events for
auditors."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import NotFound
from core.openapi import IF_NONE_MATCH, query_parameters
from core.throttling import AddressThrottle
from core.wire import read_query
from jackpot.api.authentication import STAFF_AUTHENTICATION, require_roles
from jackpot.bodies.journal import JournalPage, JournalQuery
from jackpot.bodies.meter import DisplayMeter
from jackpot.bodies.notifications import SignificantEventPage, SignificantEventQuery
from jackpot.bodies.pools import PoolConfiguration
from jackpot.pools import at_rest
from jackpot.selectors import event_page, journal_page, pool_configuration, pool_get
from jackpot.sign.display import display_meter


class PublicView(APIView):
    authentication_classes: list[type] = []
    permission_classes: list[type] = []
    throttle_classes = [AddressThrottle]


class PoolDetailView(PublicView):
    @extend_schema(
        operation_id="pool_detail",
        responses={200: PoolConfiguration},
        summary="A pool's configuration and paytable, as regulators want it posted",
    )
    def get(self, request: Request, pool: int) -> Response:
        found = pool_get(pool)
        configuration = pool_configuration(
            pool=found, tables=at_rest.registered().in_play(found.pk)
        )
        return Response(configuration.model_dump(mode="json"))


class PoolMeterView(PublicView):
    @extend_schema(
        operation_id="pool_meter",
        parameters=[IF_NONE_MATCH],
        responses={200: DisplayMeter, 304: None},
        summary="The committed meter in whole cents, the last hit, and whether a jackpot waits",
        description="Send the last ETag in If-None-Match: an unchanged sign gets 304.",
    )
    def get(self, request: Request, pool: int) -> Response:
        found = display_meter(pool)
        if found is None:
            raise NotFound("pool_not_found", f"no pool {pool}", param="pool")
        body, etag = found
        if etag in request.headers.get("If-None-Match", ""):
            return Response(status=304, headers={"ETag": etag})
        return Response(body, headers={"ETag": etag, "Cache-Control": "no-cache"})


class JournalView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles("auditor", "admin")]

    @extend_schema(
        operation_id="journal_list",
        parameters=query_parameters(JournalQuery),
        responses={200: JournalPage},
        summary="The journal's transfers, newest first, with their audit events (auditors)",
    )
    def get(self, request: Request) -> Response:
        page = journal_page(read_query(JournalQuery, request.query_params))
        return Response(page.model_dump(mode="json"))


class SignificantEventListView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles("auditor", "supervisor", "admin")]

    @extend_schema(
        operation_id="event_list",
        parameters=query_parameters(SignificantEventQuery),
        responses={200: SignificantEventPage},
        summary="Significant events, newest first, by code, table, pool and time (auditors, "
        "supervisors)",
        description='Each event of the catalogue (docs/operations.md "Significant events"): '
        "its stable code, the server's UTC time, its table and pool where it has them, and its "
        "journal entry. The same object is sent by the signed webhook `significant_event`.",
    )
    def get(self, request: Request) -> Response:
        page = event_page(read_query(SignificantEventQuery, request.query_params))
        return Response(page.model_dump(mode="json"))
