"""A round's record is final once it is closed (issue 20, item 6).

The payout log and the payment slip print a round's cards and result from its row
(`Round.result`), which the application's role may UPDATE (a round is opened, then settled or
voided). From the moment a round leaves `open` its row never changes again: a trigger refuses
any UPDATE of a settled or voided round, from the ORM, raw SQL or psql alike (DELETE is not
granted at all: `jackpot.audit.grants`). Someone who goes around the trigger (the schema's owner) is
found by the journal's verification, which compares each round's row with the events that opened
and closed it (`tables.audit.records`).
"""

from django.db import migrations

POSTGRES = """
CREATE OR REPLACE FUNCTION tables_round_final() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'round %% is %%: a closed round''s record is final', OLD.id, OLD.state
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER tables_round_final BEFORE UPDATE ON tables_round
    FOR EACH ROW WHEN (OLD.state <> 'open') EXECUTE FUNCTION tables_round_final();
"""
SQLITE = """
CREATE TRIGGER tables_round_final BEFORE UPDATE ON tables_round WHEN OLD.state <> 'open'
BEGIN SELECT RAISE(ABORT, 'a closed round''s record is final'); END
"""


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor not in ("postgresql", "sqlite"):  # pragma: no cover
        raise RuntimeError(f"no trigger for database vendor {vendor!r}")
    schema_editor.execute(POSTGRES if vendor == "postgresql" else SQLITE)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP TRIGGER IF EXISTS tables_round_final ON tables_round")
        schema_editor.execute("DROP FUNCTION IF EXISTS tables_round_final()")
    else:
        schema_editor.execute("DROP TRIGGER IF EXISTS tables_round_final")


class Migration(migrations.Migration):
    dependencies = [("jackpot", "0015_journal_coverage"), ("tables", "0008_round_terms")]

    operations = [migrations.RunPython(install, uninstall)]
