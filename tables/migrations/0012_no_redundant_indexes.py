"""Drop the foreign keys' own indexes that another index already leads with.

Each was one more entry to write for every round (its row, written twice, its seven seats, a
keyed request's record) and one more index to keep for as long as the journal lives; each lookup
it served is served by the index named beside it in tables.models:

- `tables_round.table_id`: round_unique_per_table, round_table_state_opened, round_one_open_per_table;
- `tables_roundseat.round_id`: round_seat_unique;
- `tables_idempotencyrecord.table_id`: idempotency_key_per_table.

By name, not by `AlterField` alone: Django's schema editor, dropping a column's index, drops every
index on that column alone that is not in Meta.indexes, and `round_one_open_per_table` (a partial
unique constraint) is one; it also drops and re-adds the foreign key, which re-reads the whole
table. On PostgreSQL the drops are CONCURRENTLY (the migration is not atomic): play goes on.
"""

from django.db import migrations, models
from django.db.models.deletion import PROTECT

DROPPED = (
    "tables_idempotencyrecord_table_id_203434de",
    "tables_round_table_id_c8dfaa1d",
    "tables_roundseat_round_id_902859a9",
)
RESTORED = {  # the reverse: each index as Django had made it
    "tables_idempotencyrecord_table_id_203434de": ("tables_idempotencyrecord", "table_id"),
    "tables_round_table_id_c8dfaa1d": ("tables_round", "table_id"),
    "tables_roundseat_round_id_902859a9": ("tables_roundseat", "round_id"),
}


def _concurrently(schema_editor):
    return " CONCURRENTLY" if schema_editor.connection.vendor == "postgresql" else ""


def drop(apps, schema_editor):
    for name in DROPPED:
        schema_editor.execute(f"DROP INDEX{_concurrently(schema_editor)} IF EXISTS {name}")


def restore(apps, schema_editor):
    for name, (table, column) in RESTORED.items():
        schema_editor.execute(
            f"CREATE INDEX{_concurrently(schema_editor)} IF NOT EXISTS {name} ON {table} ({column})"
        )


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("tables", "0011_pools_not_followed_from_the_progressive")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="idempotencyrecord",
                    name="table",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=PROTECT,
                        related_name="idempotency_keys",
                        to="tables.table",
                    ),
                ),
                migrations.AlterField(
                    model_name="round",
                    name="table",
                    field=models.ForeignKey(
                        db_index=False, on_delete=PROTECT, related_name="rounds", to="tables.table"
                    ),
                ),
                migrations.AlterField(
                    model_name="roundseat",
                    name="round",
                    field=models.ForeignKey(
                        db_index=False, on_delete=PROTECT, related_name="seats", to="tables.round"
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(drop, restore)],
        )
    ]
