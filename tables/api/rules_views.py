"""The public rules API: evaluate a hand, settle a seat, paytables, the progressive's return.

Pure computations over the rules engine; nothing is stored. Throttled per client address.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.throttling import RulesThrottle
from tables.api import schemas
from tables.render import hand_json, settlement_json
from tables.rules.cards import parse_cards
from tables.rules.errors import RulesError, read_object
from tables.rules.hands import evaluate
from tables.rules.paytables import CURRENT, render_paytables
from tables.rules.progressive import progressive_return
from tables.rules.stud import StudBets, parse_stud_decision, settle_stud
from tables.rules.uth import UthBets, parse_uth_decision, settle_uth


class RulesView(APIView):
    authentication_classes: list[type] = []
    permission_classes: list[type] = []
    throttle_classes = [RulesThrottle]


def _body(value: object, fields: tuple[str, ...]) -> Mapping[str, Any]:
    return read_object(
        value,
        param=None,
        fields=fields,
        example="{" + ", ".join(f'"{field}": ...' for field in fields) + "}",
        code="invalid_request",
        unknown_code="unknown_field",
    )


class EvaluateView(RulesView):
    @extend_schema(
        operation_id="rules_evaluate",
        request=inline_serializer(
            "EvaluateRequest",
            {
                "cards": serializers.ListField(
                    child=serializers.CharField(), min_length=5, max_length=7
                )
            },
        ),
        responses={
            200: inline_serializer(
                "EvaluateResponse",
                {
                    "category": serializers.CharField(),
                    "best_five": serializers.ListField(child=serializers.CharField()),
                    "rank": serializers.IntegerField(),
                },
            )
        },
        summary="Evaluate a 5, 6 or 7-card hand: category, best five cards and an ordering rank",
    )
    def post(self, request: Request) -> Response:
        body = _body(request.data, ("cards",))
        hand = evaluate(parse_cards(body.get("cards"), param="cards", count=(5, 7)))
        return Response({**hand_json(hand), "rank": hand.rank})


class UthSettleView(RulesView):
    @extend_schema(
        operation_id="rules_uth_settle",
        request=inline_serializer(
            "UthSettleRequest",
            {
                "player": serializers.ListField(child=serializers.CharField()),
                "dealer": serializers.ListField(child=serializers.CharField()),
                "board": serializers.ListField(child=serializers.CharField()),
                "bets": schemas.UthBetsSerializer(),
                "decision": schemas.DecisionSerializer(),
            },
        ),
        responses={200: schemas.SettlementSerializer},
        summary="Settle one Ultimate Texas Hold'em seat",
    )
    def post(self, request: Request) -> Response:
        body = _body(request.data, ("player", "dealer", "board", "bets", "decision"))
        settlement = settle_uth(
            player=parse_cards(body.get("player"), param="player", count=2),
            dealer=parse_cards(body.get("dealer"), param="dealer", count=2),
            board=parse_cards(body.get("board"), param="board", count=5),
            bets=UthBets.from_mapping(body.get("bets"), param="bets"),
            decision=parse_uth_decision(body.get("decision"), param="decision"),
        )
        return Response(settlement_json(settlement))


class StudSettleView(RulesView):
    @extend_schema(
        operation_id="rules_stud_settle",
        request=inline_serializer(
            "StudSettleRequest",
            {
                "player": serializers.ListField(child=serializers.CharField()),
                "dealer": serializers.ListField(child=serializers.CharField()),
                "bets": inline_serializer(
                    "StudBets",
                    {
                        "ante_cents": serializers.IntegerField(),
                        "bonus_cents": serializers.IntegerField(required=False),
                    },
                ),
                "decision": schemas.DecisionSerializer(),
            },
        ),
        responses={200: schemas.SettlementSerializer},
        summary="Settle one Stud Poker seat (card purchase included)",
    )
    def post(self, request: Request) -> Response:
        body = _body(request.data, ("player", "dealer", "bets", "decision"))
        settlement = settle_stud(
            player=parse_cards(body.get("player"), param="player", count=5),
            dealer=parse_cards(body.get("dealer"), param="dealer", count=5),
            bets=StudBets.from_mapping(body.get("bets"), param="bets"),
            decision=parse_stud_decision(body.get("decision"), param="decision"),
        )
        return Response(settlement_json(settlement))


class PaytablesView(RulesView):
    @extend_schema(
        operation_id="rules_paytables",
        responses={200: OpenApiTypes.OBJECT},
        summary="Every paytable in force, with its version",
    )
    def get(self, request: Request) -> Response:
        return Response(render_paytables())


def _fraction(value: Fraction) -> dict[str, int]:
    return {"numerator": value.numerator, "denominator": value.denominator}


# ASCII digits only: str.isdigit() also accepts superscripts and other scripts' digits.
_DIGITS = re.compile(r"[0-9]{1,15}")


def _query_int(request: Request, name: str, default: int | None = None) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        if default is not None:
            return default
        raise RulesError("invalid_parameter", f"{name} is required", param=name)
    if not _DIGITS.fullmatch(raw):
        raise RulesError(
            "invalid_parameter", f"{name} must be a whole number, got {raw!r}", param=name
        )
    return int(raw)


class ProgressiveReturnView(RulesView):
    @extend_schema(
        operation_id="rules_progressive_return",
        parameters=[
            OpenApiParameter("jackpot_cents", int, required=True, description="The meter, cents."),
            OpenApiParameter(
                "other_bettors", int, required=False, description="0 to 6 (default 0)."
            ),
        ],
        responses={200: OpenApiTypes.OBJECT},
        summary="The exact theoretical return of the progressive bet at a meter, and break-even",
    )
    def get(self, request: Request) -> Response:
        result = progressive_return(
            jackpot_cents=_query_int(request, "jackpot_cents"),
            other_bettors=_query_int(request, "other_bettors", 0),
            paytable=CURRENT.progressive,
        )
        return Response(
            {
                "paytable_version": result.paytable_version,
                "jackpot_cents": result.jackpot_cents,
                "other_bettors": result.other_bettors,
                "stake_cents": result.stake_cents,
                "probabilities": {str(k): _fraction(v) for k, v in result.probabilities.items()},
                "envy_probability": _fraction(result.envy_probability),
                "expected_return_cents": _fraction(result.expected_return_cents),
                "rtp": _fraction(result.rtp),
                "rtp_bp": result.rtp_bp,
                "rtp_percent": result.rtp_percent,
                "break_even_jackpot_cents": result.break_even_jackpot_cents,
            }
        )
