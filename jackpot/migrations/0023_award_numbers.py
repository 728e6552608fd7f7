"""An award's number is `Award.number` and a pool's last one `Pool.last_award_number` (issue 23:
one word per thing). They were `sequence` and `award_sequence`, the word the audit chains use
for an event's position; the wire and the journal's payloads still say `sequence` for the
award's number, as clients and the hashed history always have (docs/glossary.md).

Renamed in place, by name: a column's and a constraint's rename is a change to the catalogue
alone on PostgreSQL (no rewrite, no index rebuilt, a moment's lock). Django's own operations
would, on SQLite, remake the award table for its constraint and lose its triggers; there the
column is renamed by SQLite's own ALTER TABLE (3.25 or later), and the constraint, which SQLite
cannot rename, keeps its old name inside the table's definition.
"""

from django.db import migrations, models

FORWARDS = {
    "postgresql": [
        "ALTER TABLE jackpot_award RENAME COLUMN sequence TO number",
        "ALTER TABLE jackpot_award RENAME CONSTRAINT award_sequence_unique TO award_number_unique",
        "ALTER TABLE jackpot_pool RENAME COLUMN award_sequence TO last_award_number",
    ],
    "sqlite": [
        "ALTER TABLE jackpot_award RENAME COLUMN sequence TO number",
        "ALTER TABLE jackpot_pool RENAME COLUMN award_sequence TO last_award_number",
    ],
}
BACKWARDS = {
    "postgresql": [
        "ALTER TABLE jackpot_pool RENAME COLUMN last_award_number TO award_sequence",
        "ALTER TABLE jackpot_award RENAME CONSTRAINT award_number_unique TO award_sequence_unique",
        "ALTER TABLE jackpot_award RENAME COLUMN number TO sequence",
    ],
    "sqlite": [
        "ALTER TABLE jackpot_pool RENAME COLUMN last_award_number TO award_sequence",
        "ALTER TABLE jackpot_award RENAME COLUMN number TO sequence",
    ],
}


def _run(statements):
    def run(apps, schema_editor):
        for statement in statements[schema_editor.connection.vendor]:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("jackpot", "0022_no_redundant_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(model_name="award", name="award_sequence_unique"),
                migrations.RenameField(model_name="award", old_name="sequence", new_name="number"),
                migrations.AddConstraint(
                    model_name="award",
                    constraint=models.UniqueConstraint(
                        fields=("pool", "number"), name="award_number_unique"
                    ),
                ),
                migrations.RenameField(
                    model_name="pool", old_name="award_sequence", new_name="last_award_number"
                ),
                migrations.AlterField(
                    model_name="pool",
                    name="last_award_number",
                    field=models.BigIntegerField(default=0, help_text="The last award's number."),
                ),
            ],
            database_operations=[migrations.RunPython(_run(FORWARDS), _run(BACKWARDS))],
        ),
    ]
