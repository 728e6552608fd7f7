"""OpenAPI descriptions of the round and rules API bodies.

These serializers document the shapes only; requests are read by `tables.payloads` and the
rules engine's strict parsers, which give field-precise errors and refuse floats, strings and
booleans for cents. The two authentication extensions below only name the bearer-token schemes
in the schema (drf-spectacular warns about, and leaves out, authenticators it cannot describe).
"""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers

from jackpot.api.schemas import MeterSerializer
from jackpot.models import AwardKind


class TerminalTokenScheme(OpenApiAuthenticationExtension):
    """Documents `TerminalAuthentication` (registered on import; no effect on behaviour)."""

    target_class = "tables.api.authentication.TerminalAuthentication"
    name = "terminalToken"

    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A table terminal's token: `Authorization: Bearer term_...`.",
        }


class StaffTokenScheme(OpenApiAuthenticationExtension):
    """Documents `StaffTokenAuthentication` (registered on import; no effect on behaviour)."""

    target_class = "jackpot.api.authentication.StaffTokenAuthentication"
    name = "staffToken"

    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A staff member's token: `Authorization: Bearer staff_...`.",
        }


class UthBetsSerializer(serializers.Serializer[Any]):
    ante_cents = serializers.IntegerField(min_value=1)
    blind_cents = serializers.IntegerField(min_value=1, help_text="Must equal ante_cents.")
    trips_cents = serializers.IntegerField(min_value=0, required=False)
    progressive_cents = serializers.IntegerField(
        min_value=0, required=False, help_text="0 or exactly the pool's stake (500)."
    )


class SeatBetsSerializer(serializers.Serializer[Any]):
    seat = serializers.IntegerField(min_value=1, max_value=7)
    bets = UthBetsSerializer(help_text="Stud tables: {ante_cents, bonus_cents?}.")


class OpenRequestSerializer(serializers.Serializer[Any]):
    round_id = serializers.RegexField(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")
    seats = SeatBetsSerializer(many=True)


class ContributionSerializer(serializers.Serializer[Any]):
    stakes = serializers.IntegerField()
    stake_cents = serializers.IntegerField()
    meter_cents = serializers.IntegerField()
    reserve_cents = serializers.IntegerField()
    house_cents = serializers.IntegerField()


class OpenResponseSerializer(serializers.Serializer[Any]):
    table = serializers.IntegerField()
    round_id = serializers.CharField()
    state = serializers.ChoiceField(choices=["open"])
    opened_at = serializers.DateTimeField()
    seats = SeatBetsSerializer(many=True)
    progressive = ContributionSerializer(allow_null=True)
    meter = MeterSerializer(allow_null=True)


class DecisionSerializer(serializers.Serializer[Any]):
    action = serializers.ChoiceField(choices=["play", "fold", "raise", "buy"])
    street = serializers.ChoiceField(choices=["preflop", "flop", "river"], required=False)
    multiple = serializers.ChoiceField(choices=[1, 2, 3, 4], required=False)
    discard = serializers.CharField(required=False, help_text="Stud buy: the card given back.")
    draw = serializers.CharField(required=False, help_text="Stud buy: the card received.")


class SeatPlaySerializer(serializers.Serializer[Any]):
    seat = serializers.IntegerField(min_value=1, max_value=7)
    cards = serializers.ListField(child=serializers.CharField(), min_length=2, max_length=5)
    decision = DecisionSerializer()


class ResultRequestSerializer(serializers.Serializer[Any]):
    board = serializers.ListField(
        child=serializers.CharField(),
        min_length=5,
        max_length=5,
        required=False,
        help_text="UTH only: the 5 community cards.",
    )
    dealer = serializers.ListField(child=serializers.CharField(), min_length=2, max_length=5)
    seats = SeatPlaySerializer(many=True)


class HandSerializer(serializers.Serializer[Any]):
    category = serializers.CharField()
    best_five = serializers.ListField(child=serializers.CharField())


class BoxSerializer(serializers.Serializer[Any]):
    stake_cents = serializers.IntegerField()
    net_cents = serializers.IntegerField()


class ProgressiveResultSerializer(serializers.Serializer[Any]):
    stake_cents = serializers.IntegerField()
    award = serializers.CharField()
    fixed_cents = serializers.IntegerField(allow_null=True)


class SettlementSerializer(serializers.Serializer[Any]):
    player_hand = HandSerializer()
    dealer_hand = HandSerializer()
    dealer_qualifies = serializers.BooleanField()
    outcome = serializers.ChoiceField(choices=["player", "dealer", "tie", "fold"])
    boxes = serializers.DictField(child=BoxSerializer())
    progressive = ProgressiveResultSerializer(required=False)
    net_cents = serializers.IntegerField()


class SeatSettlementSerializer(SettlementSerializer):
    seat = serializers.IntegerField()
    cards = serializers.ListField(child=serializers.CharField())
    decision = DecisionSerializer()


class AwardSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    seat = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=AwardKind.values)
    amount_cents = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["pending", "approved", "paid", "void"])
    sequence = serializers.IntegerField()


class ResultResponseSerializer(serializers.Serializer[Any]):
    table = serializers.IntegerField()
    round_id = serializers.CharField()
    state = serializers.ChoiceField(choices=["settled"])
    settled_at = serializers.DateTimeField()
    board = serializers.ListField(child=serializers.CharField())
    dealer = serializers.ListField(child=serializers.CharField())
    dealer_hand = HandSerializer()
    dealer_qualifies = serializers.BooleanField()
    seats = SeatSettlementSerializer(many=True)
    awards = AwardSerializer(many=True)
    meter = MeterSerializer(allow_null=True)


class VoidRequestSerializer(serializers.Serializer[Any]):
    reason = serializers.CharField(max_length=200)


class VoidResponseSerializer(serializers.Serializer[Any]):
    table = serializers.IntegerField()
    round_id = serializers.CharField()
    state = serializers.ChoiceField(choices=["void"])
    voided_at = serializers.DateTimeField()
    reason = serializers.CharField()
    progressive_refund_cents = serializers.IntegerField()
    meter = MeterSerializer(allow_null=True)


class RoundDetailSerializer(serializers.Serializer[Any]):
    table = serializers.IntegerField()
    round_id = serializers.CharField()
    state = serializers.ChoiceField(choices=["open", "settled", "void"])
    opened = OpenResponseSerializer()
    closed = serializers.DictField(allow_null=True)
