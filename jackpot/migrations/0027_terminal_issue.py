from django.db import migrations, models


class Migration(migrations.Migration):
    """A terminal token is a two-person change (`terminal.issue`): its kind is known to the CHECK."""

    dependencies = [
        ("jackpot", "0026_separation_of_duties"),
    ]

    operations = [
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
                ],
                default="pool.parameters",
                max_length=32,
            ),
        ),
        migrations.RemoveConstraint(model_name="parameterchange", name="change_kind_known"),
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
                        ],
                    )
                ),
                name="change_kind_known",
            ),
        ),
    ]
