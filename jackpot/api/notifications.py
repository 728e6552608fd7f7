"""The big-win notifications as auditors see them: each webhook delivery, its attempts and its
outcome (`jackpot.notifications.webhooks`). Read only; the reads are in `jackpot.selectors`."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from core.openapi import query_parameters
from core.wire import read_query
from jackpot.api.authentication import require_roles
from jackpot.api.awards import StaffView
from jackpot.bodies.notifications import NotificationPage, NotificationQuery
from jackpot.selectors import notification_list


class NotificationListView(StaffView):
    permission_classes = [require_roles("auditor", "admin")]

    @extend_schema(
        operation_id="notification_list",
        parameters=query_parameters(NotificationQuery),
        responses={200: NotificationPage},
        summary="Big-win webhook deliveries, newest first: attempts and outcome (auditors)",
    )
    def get(self, request: Request) -> Response:
        page = notification_list(read_query(NotificationQuery, request.query_params))
        return Response(page.model_dump(mode="json"))
