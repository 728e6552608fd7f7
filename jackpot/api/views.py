"""Pool reads for displays and regulators (public) and the journal check for auditors."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import NotFound
from config.throttling import AddressThrottle
from jackpot.api.authentication import StaffTokenAuthentication, require_roles
from jackpot.models import Pool
from jackpot.selectors import pool_configuration, pool_meter
from jackpot.verification import verify_journal
from tables.api.schemas import MeterSerializer


class PublicView(APIView):
    authentication_classes: list[type] = []
    permission_classes: list[type] = []
    throttle_classes = [AddressThrottle]


def _pool(pool: int) -> Pool:
    found = Pool.objects.filter(pk=pool).first()
    if found is None:
        raise NotFound("pool_not_found", f"no pool {pool}", param="pool")
    return found


class PoolDetailView(PublicView):
    @extend_schema(
        operation_id="pool_detail",
        responses={200: OpenApiTypes.OBJECT},
        summary="A pool's configuration and paytable, as regulators want it posted",
    )
    def get(self, request: Request, pool: int) -> Response:
        return Response(pool_configuration(pool=_pool(pool)))


class PoolMeterView(PublicView):
    @extend_schema(
        operation_id="pool_meter",
        responses={200: MeterSerializer},
        summary="The committed meter, in whole cents",
    )
    def get(self, request: Request, pool: int) -> Response:
        try:
            return Response(pool_meter(pool_id=pool))
        except Pool.DoesNotExist:
            raise NotFound("pool_not_found", f"no pool {pool}", param="pool") from None


class JournalVerifyView(APIView):
    authentication_classes = [StaffTokenAuthentication]
    permission_classes = [require_roles("auditor", "admin")]

    @extend_schema(
        operation_id="journal_verify",
        responses={200: OpenApiTypes.OBJECT},
        summary="Recompute the audit chains and every balance (auditors)",
    )
    def get(self, request: Request) -> Response:
        return Response(verify_journal().as_json())
