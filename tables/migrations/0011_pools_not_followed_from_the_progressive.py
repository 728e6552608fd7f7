"""A table's and a round's keys to their pool leave the pool no reverse accessor (issue 23).

The progressive sits below the tables and does not read their rows: what a pool change needs of
them (its tables locked, its open rounds) and which tables a pool's configuration lists come from
`tables.pools`. No change to the database: `related_name` lives in Django alone.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jackpot", "0021_award_record"),
        ("tables", "0010_idempotency_status_not_written"),
    ]

    operations = [
        migrations.AlterField(
            model_name="round",
            name="pool",
            field=models.ForeignKey(
                blank=True,
                help_text="The pool of record: the one the table fed when the round opened.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="jackpot.pool",
            ),
        ),
        migrations.AlterField(
            model_name="table",
            name="pool",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="jackpot.pool",
            ),
        ),
    ]
