"""Table administration for the club's systems (admins): read a table, open or close it for play,
move it to another pool or unlink it. Thin: the refusals (409 while it is open for play or has
open rounds) are `tables.services.table_update`'s."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.errors import NotFound
from config.wire import read
from jackpot.api.authentication import STAFF_AUTHENTICATION, require_roles
from jackpot.models import Pool
from tables import bodies
from tables.models import Game, Round, RoundState, Table
from tables.services import table_update


def _table_answer(table: Table) -> bodies.TableAnswer:
    return bodies.TableAnswer.model_construct(
        id=table.pk,
        name=table.name,
        game="uth" if table.game == Game.UTH else "stud",
        pool=table.pool_id,
        enabled=table.enabled,
        seats=table.seats,
        open_rounds=Round.objects.filter(table=table, state=RoundState.OPEN).count(),
    )


class TableView(APIView):
    authentication_classes = STAFF_AUTHENTICATION
    permission_classes = [require_roles("admin")]

    @extend_schema(
        operation_id="table_detail",
        responses={200: bodies.TableAnswer},
        summary="A table: its game, the pool it feeds, open for play or not, its open rounds",
    )
    def get(self, request: Request, table: int) -> Response:
        found = Table.objects.filter(pk=table).first()
        if found is None:
            raise NotFound("table_not_found", f"no table {table}", param="table")
        return Response(_table_answer(found).model_dump(mode="json"))

    @extend_schema(
        operation_id="table_change",
        request=bodies.TableChange,
        responses={200: bodies.TableAnswer},
        summary="Open or close a table for play, move it to another pool or unlink it (admins)",
        description="A table moves to another pool (or is unlinked) only while closed for play "
        "(409 `table_open`) and with no round open (409 `table_has_open_rounds`): a round "
        "settles against the pool it opened with.",
    )
    def patch(self, request: Request, table: int) -> Response:
        change = read(bodies.TableChange, request.data)
        changes: dict[str, object] = {}
        if "pool" in change.model_fields_set:
            changes["pool"] = None if change.pool is None else _pool(change.pool)
        if change.enabled is not None:
            changes["enabled"] = change.enabled
        updated = table_update(
            table_id=table, changes=changes, actor=f"user:{request.user.get_username()}"
        )
        return Response(_table_answer(updated).model_dump(mode="json"))


def _pool(pool: int) -> Pool:
    found = Pool.objects.filter(pk=pool).first()
    if found is None:
        raise NotFound("pool_not_found", f"no pool {pool}", param="pool")
    return found
