"""OpenAPI descriptions of the meter as signs and terminals read it.

These serializers document shapes only: the bodies are built by `jackpot.selectors.meter_json`
and `jackpot.display`. The round answers (tables.api.schemas) embed `MeterSerializer`.
"""

from typing import Any

from rest_framework import serializers


class MeterSerializer(serializers.Serializer[Any]):
    pool = serializers.IntegerField()
    amount_cents = serializers.IntegerField()
    currency = serializers.CharField()
    sequence = serializers.IntegerField()
    as_of = serializers.DateTimeField(allow_null=True)


class LastHitSerializer(serializers.Serializer[Any]):
    table = serializers.CharField()
    kind = serializers.CharField()
    amount_cents = serializers.IntegerField()
    at = serializers.DateTimeField()


class DisplayMeterSerializer(MeterSerializer):
    last_hit = LastHitSerializer(allow_null=True)
    recent_hits = LastHitSerializer(many=True, help_text="the last five hits, newest first")
    jackpot_pending = serializers.BooleanField()
    pending_jackpot = LastHitSerializer(
        allow_null=True, help_text="the newest jackpot waiting for its checks, if any"
    )
