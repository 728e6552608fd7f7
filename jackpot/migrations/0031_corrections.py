"""Documented corrections (compliance 55, `jackpot.pools.corrections`): the two-person change kind
`pool.correction` (on its pool), and an award's `corrected_cents`, the signed sum of its
corrections, with a CHECK that the amount due (`amount_cents + corrected_cents`) stays positive.
"""

import django.db.models.expressions
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jackpot", "0030_outbox_refused"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="parameterchange",
            name="change_parameters_pool",
        ),
        migrations.RemoveConstraint(
            model_name="parameterchange",
            name="change_kind_known",
        ),
        migrations.AddField(
            model_name="award",
            name="corrected_cents",
            field=models.BigIntegerField(db_default=0, default=0),
        ),
        migrations.AlterField(
            model_name="parameterchange",
            name="kind",
            field=models.CharField(
                choices=[
                    ("pool.parameters", "A pool's parameters"),
                    ("pool.create", "A new pool"),
                    ("pool.stop", "A pool stopped for good, its liability moved (its disposition)"),
                    ("table.move", "A table linked to a pool, moved or unlinked"),
                    ("staff.create", "A new staff account"),
                    ("staff.access", "A staff account's roles, flags or reactivation"),
                    ("staff.second_factor_reset", "A staff member's second factor reset"),
                    ("terminal.issue", "A terminal token issued for a table"),
                    (
                        "pool.correction",
                        "A documented correction of a pool's meter, reserve or an award's amount",
                    ),
                ],
                default="pool.parameters",
                max_length=32,
            ),
        ),
        migrations.AddConstraint(
            model_name="award",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "amount_cents__gt",
                        django.db.models.expressions.CombinedExpression(
                            models.F("corrected_cents"), "*", models.Value(-1)
                        ),
                    )
                ),
                name="award_due_positive",
            ),
        ),
        migrations.AddConstraint(
            model_name="parameterchange",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "kind__in",
                        [
                            "pool.parameters",
                            "pool.create",
                            "pool.stop",
                            "table.move",
                            "staff.create",
                            "staff.access",
                            "staff.second_factor_reset",
                            "terminal.issue",
                            "pool.correction",
                        ],
                    )
                ),
                name="change_kind_known",
            ),
        ),
        migrations.AddConstraint(
            model_name="parameterchange",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("kind__in", ["pool.parameters", "pool.stop", "pool.correction"]),
                        _negated=True,
                    ),
                    ("pool__isnull", False),
                    _connector="OR",
                ),
                name="change_parameters_pool",
            ),
        ),
    ]
