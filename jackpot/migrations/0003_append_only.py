"""The journal is append-only, enforced by the database itself.

PostgreSQL and SQLite triggers refuse any UPDATE or DELETE of a transfer or an audit event, from
the ORM, raw SQL or psql alike. Corrections are new entries. (TRUNCATE is not a row operation and
fires no row trigger: in production the application's role is granted no TRUNCATE; see
docs/operations.md.)
"""

from django.db import migrations

APPEND_ONLY = ("jackpot_transfer", "jackpot_auditevent")

# "%%" because the schema editor passes the SQL through the driver's parameter formatting.
POSTGRES_FUNCTION = """
CREATE OR REPLACE FUNCTION jackpot_refuse_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'append-only: %% on %% is refused; write a correcting entry instead',
        TG_OP, TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(POSTGRES_FUNCTION)
        for table in APPEND_ONLY:
            schema_editor.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION jackpot_refuse_change()"
            )
    elif vendor == "sqlite":
        for table in APPEND_ONLY:
            for operation in ("UPDATE", "DELETE"):
                schema_editor.execute(
                    f"CREATE TRIGGER {table}_no_{operation.lower()} BEFORE {operation} ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, 'append-only: {operation} on {table} is refused'); "
                    "END"
                )
    else:  # pragma: no cover - the service runs on PostgreSQL or, for a demo, SQLite
        raise RuntimeError(f"no append-only triggers for database vendor {vendor!r}")


def uninstall(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for table in APPEND_ONLY:
        if vendor == "postgresql":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}")
        else:
            for operation in ("update", "delete"):
                schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_no_{operation}")
    if vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS jackpot_refuse_change()")


class Migration(migrations.Migration):
    dependencies = [("jackpot", "0002_initial")]

    operations = [migrations.RunPython(install, uninstall)]
