"""Drop the foreign keys' own indexes that another index already leads with, and index a
transfer's award only where it has one.

Each was one more entry to write for every transfer or award (an award's, under the pool's row)
and one more index to keep for as long as the journal lives; each lookup it served is served by
the index named beside it in jackpot.models:

- `jackpot_transfer.pool_id`: the (pool, code) index, transfer_once_per_round_code_award;
- `jackpot_award.pool_id`: award_sequence_unique, award_pool_created, award_pool_kind_created;
- `jackpot_award.round_id`: award_once_per_seat;
- `jackpot_transfer.award_id`: `transfer_award`, partial (most transfers are a round's stakes,
  with no award; `award_id = x` implies it is not null, so every look-up by award uses it).

By name, not by `AlterField` alone (tables.0012 says why). On PostgreSQL the index is built and
the others dropped CONCURRENTLY (the migration is not atomic): play goes on while it builds.
"""

from django.db import migrations, models
from django.db.models.deletion import PROTECT

DROPPED = {  # each index as Django had made it, for the reverse
    "jackpot_award_pool_id_f98f9fbc": ("jackpot_award", "pool_id"),
    "jackpot_award_round_id_eee2c3f8": ("jackpot_award", "round_id"),
    "jackpot_transfer_award_id_a8098839": ("jackpot_transfer", "award_id"),
    "jackpot_transfer_pool_id_2f808807": ("jackpot_transfer", "pool_id"),
}
PARTIAL = "transfer_award ON jackpot_transfer (award_id) WHERE award_id IS NOT NULL"


def _concurrently(schema_editor):
    return " CONCURRENTLY" if schema_editor.connection.vendor == "postgresql" else ""


def forwards(apps, schema_editor):
    # The partial index first: no moment without an index on the award.
    schema_editor.execute(f"CREATE INDEX{_concurrently(schema_editor)} IF NOT EXISTS {PARTIAL}")
    for name in DROPPED:
        schema_editor.execute(f"DROP INDEX{_concurrently(schema_editor)} IF EXISTS {name}")


def backwards(apps, schema_editor):
    for name, (table, column) in DROPPED.items():
        schema_editor.execute(
            f"CREATE INDEX{_concurrently(schema_editor)} IF NOT EXISTS {name} ON {table} ({column})"
        )
    schema_editor.execute(f"DROP INDEX{_concurrently(schema_editor)} IF EXISTS transfer_award")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("jackpot", "0021_award_record"),
        ("tables", "0012_no_redundant_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="award",
                    name="pool",
                    field=models.ForeignKey(
                        db_index=False, on_delete=PROTECT, related_name="awards", to="jackpot.pool"
                    ),
                ),
                migrations.AlterField(
                    model_name="award",
                    name="round",
                    field=models.ForeignKey(
                        db_index=False, on_delete=PROTECT, related_name="awards", to="tables.round"
                    ),
                ),
                migrations.AlterField(
                    model_name="transfer",
                    name="award",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=PROTECT,
                        related_name="transfers",
                        to="jackpot.award",
                    ),
                ),
                migrations.AlterField(
                    model_name="transfer",
                    name="pool",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=PROTECT,
                        related_name="transfers",
                        to="jackpot.pool",
                    ),
                ),
                migrations.AddIndex(
                    model_name="transfer",
                    index=models.Index(
                        condition=models.Q(("award__isnull", False)),
                        fields=["award"],
                        name="transfer_award",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        )
    ]
