"""The public rules API: evaluate a hand, settle a seat, paytables, the progressive's return.

Pure computations over the rules engine; nothing is stored. Throttled per client address.
"""

from __future__ import annotations

from fractions import Fraction

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.openapi import query_parameters
from core.throttling import RulesThrottle
from core.wire import read, read_query
from rules.cards import parse_cards
from rules.hands import evaluate
from rules.par import par_sheets
from rules.paytables import CURRENT
from rules.progressive import progressive_return
from rules.stud import StudBets, settle_stud
from rules.uth import UthBets, settle_uth
from tables.api import rules_bodies as bodies
from tables.bodies.render import hand_body, settlement_body
from tables.bodies.round_requests import stud_decision_of, uth_decision_of
from tables.bodies.seats import Settlement


class RulesView(APIView):
    authentication_classes: list[type] = []
    permission_classes: list[type] = []
    throttle_classes = [RulesThrottle]


class EvaluateView(RulesView):
    @extend_schema(
        operation_id="rules_evaluate",
        request=bodies.EvaluateBody,
        responses={200: bodies.EvaluateAnswer},
        summary="Evaluate a 5, 6 or 7-card hand: category, best five cards and an ordering rank",
    )
    def post(self, request: Request) -> Response:
        body = read(bodies.EvaluateBody, request.data)
        hand = evaluate(parse_cards(body.cards, param="cards", count=(5, 7)))
        answer = hand_body(hand, bodies.EvaluateAnswer, rank=hand.rank)
        return Response(answer.model_dump(mode="json"))


class UthSettleView(RulesView):
    @extend_schema(
        operation_id="rules_uth_settle",
        request=bodies.UthSettleBody,
        responses={200: Settlement},
        summary="Settle one Ultimate Texas Hold'em seat",
    )
    def post(self, request: Request) -> Response:
        body = read(bodies.UthSettleBody, request.data)
        bets = body.bets
        settlement = settle_uth(
            player=parse_cards(body.player, param="player", count=2),
            dealer=parse_cards(body.dealer, param="dealer", count=2),
            board=parse_cards(body.board, param="board", count=5),
            bets=UthBets(
                bets.ante_cents, bets.blind_cents, bets.trips_cents, bets.progressive_cents
            ),
            decision=uth_decision_of(body.decision),
        )
        return Response(settlement_body(settlement, Settlement).model_dump(mode="json"))


class StudSettleView(RulesView):
    @extend_schema(
        operation_id="rules_stud_settle",
        request=bodies.StudSettleBody,
        responses={200: Settlement},
        summary="Settle one Stud Poker seat (card purchase included)",
    )
    def post(self, request: Request) -> Response:
        body = read(bodies.StudSettleBody, request.data)
        settlement = settle_stud(
            player=parse_cards(body.player, param="player", count=5),
            dealer=parse_cards(body.dealer, param="dealer", count=5),
            bets=StudBets(body.bets.ante_cents, body.bets.bonus_cents),
            decision=stud_decision_of(body.decision),
        )
        return Response(settlement_body(settlement, Settlement).model_dump(mode="json"))


class PaytablesView(RulesView):
    @extend_schema(
        operation_id="rules_paytables",
        responses={200: bodies.Paytables},
        summary="Every paytable in force, with its version",
    )
    def get(self, request: Request) -> Response:
        return Response(bodies.paytables_of(CURRENT).model_dump(mode="json"))


def _ratio(value: Fraction) -> bodies.Ratio:
    return bodies.Ratio.model_construct(numerator=value.numerator, denominator=value.denominator)


class ProgressiveReturnView(RulesView):
    @extend_schema(
        operation_id="rules_progressive_return",
        parameters=query_parameters(bodies.ProgressiveReturnQuery),
        responses={200: bodies.ProgressiveReturnAnswer},
        summary="The exact theoretical return of the progressive bet at a meter, and break-even",
    )
    def get(self, request: Request) -> Response:
        query = read_query(bodies.ProgressiveReturnQuery, request.query_params)
        result = progressive_return(
            jackpot_cents=query.jackpot_cents,
            other_bettors=query.other_bettors,
            paytable=CURRENT.progressive,
        )
        expected = result.expected_return_cents
        answer = bodies.ProgressiveReturnAnswer.model_construct(
            paytable_version=result.paytable_version,
            jackpot_cents=result.jackpot_cents,
            other_bettors=result.other_bettors,
            stake_cents=result.stake_cents,
            probabilities={str(k): _ratio(v) for k, v in result.probabilities.items()},
            envy_probability=_ratio(result.envy_probability),
            expected_return=_ratio(expected),
            expected_return_cents=expected.numerator // expected.denominator,  # >= 0: floor
            rtp=_ratio(result.rtp),
            rtp_bp=result.rtp_bp,
            rtp_percent=result.rtp_percent,
            break_even_jackpot_cents=result.break_even_jackpot_cents,
        )
        return Response(answer.model_dump(mode="json"))


class ParView(RulesView):
    @extend_schema(
        operation_id="rules_par",
        parameters=query_parameters(bodies.ParQuery),
        responses={200: bodies.ParAnswer},
        summary="PAR sheets from the exact odds: the progressive at a meter, Trips, Stud Bonus",
    )
    def get(self, request: Request) -> Response:
        query = read_query(bodies.ParQuery, request.query_params)
        sheets = par_sheets(
            version=query.version,
            jackpot_cents=query.jackpot_cents,
            other_bettors=query.other_bettors,
        )
        return Response(bodies.par_answer(sheets).model_dump(mode="json"))
