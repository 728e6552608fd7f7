"""The club's sessions over the API (docs/api.md 4.8): supervisors and managers open and close
them and count the drop boxes; auditors read them too.

Thin views: the checks and the writes are `tables.club`'s; the reads `tables.selectors.sessions`.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.openapi import query_parameters
from core.wire import read, read_query
from jackpot.api.authentication import STAFF_AUTHENTICATION, require_roles
from jackpot.bodies.common import NoBody
from jackpot.staff import duties, second_factor
from tables.bodies.sessions import (
    DropCountConfirmation,
    DropCountEntry,
    SessionBody,
    SessionPage,
    SessionQuery,
)
from tables.club import drops, sessions
from tables.selectors.sessions import session_detail, session_page

READERS = (*duties.MONEY_ROLES, "auditor")


def _staff(request: Request) -> User:
    user = request.user
    assert isinstance(user, User)
    return user


def _detail(session_id: int) -> Response:
    return Response(session_detail(session_id).model_dump(mode="json"))


class SessionsView(APIView):
    authentication_classes = STAFF_AUTHENTICATION

    def get_permissions(self) -> list:
        roles = READERS if self.request.method == "GET" else duties.MONEY_ROLES
        return [require_roles(*roles)()]

    @extend_schema(
        operation_id="session_list",
        parameters=query_parameters(SessionQuery),
        responses={200: SessionPage},
        summary="The club's sessions, newest first (supervisors, managers, auditors)",
    )
    def get(self, request: Request) -> Response:
        page = session_page(read_query(SessionQuery, request.query_params))
        return Response(page.model_dump(mode="json"))

    @extend_schema(
        operation_id="session_open",
        request=NoBody,
        responses={201: SessionBody},
        summary="Open the club's next session (supervisors, managers)",
    )
    def post(self, request: Request) -> Response:
        read(NoBody, request.data if request.data else {})
        session = sessions.open_session(user=_staff(request))
        return Response(session_detail(session.pk).model_dump(mode="json"), status=201)


class SessionView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles(*READERS)]

    @extend_schema(
        operation_id="session_get",
        responses={200: SessionBody},
        summary="A session, its snapshot from the journal and its drop boxes",
    )
    def get(self, request: Request, session: int) -> Response:
        return _detail(session)


class SessionCloseView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles(*duties.MONEY_ROLES)]

    @extend_schema(
        operation_id="session_close",
        request=NoBody,
        responses={200: SessionBody},
        summary="Close a session: its snapshot is taken from the journal (supervisors, managers)",
    )
    def post(self, request: Request, session: int) -> Response:
        read(NoBody, request.data if request.data else {})
        sessions.close_session(session_id=session, user=_staff(request))
        return _detail(session)


class DropCountView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles(*duties.MONEY_ROLES)]

    @extend_schema(
        operation_id="drop_count",
        request=DropCountEntry,
        responses={200: SessionBody},
        summary="Count a table's drop box for a closed session, or count it again before it is"
        " confirmed (supervisors, managers)",
    )
    def post(self, request: Request, session: int, table: int) -> Response:
        entry = read(DropCountEntry, request.data)
        drops.count_drop(
            session_id=session,
            table_id=table,
            counted_cents=entry.counted_cents,
            user=_staff(request),
        )
        return _detail(session)


class DropConfirmView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles(*duties.MONEY_ROLES)]

    @extend_schema(
        operation_id="drop_confirm",
        request=DropCountConfirmation,
        responses={200: SessionBody},
        summary="Confirm a drop box's count blind, as another person with a fresh second-factor"
        " code: a difference is recorded as SE19 (supervisors, managers)",
    )
    def post(self, request: Request, session: int, table: int) -> Response:
        entry = read(DropCountConfirmation, request.data)
        user = _staff(request)
        presence = second_factor.present(user, entry.second_factor_code)  # before the step
        drops.confirm_drop(
            session_id=session,
            table_id=table,
            counted_cents=entry.counted_cents,
            user=user,
            presence=presence,
        )
        return _detail(session)
