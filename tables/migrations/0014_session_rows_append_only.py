"""A session's snapshot rows are append-only, enforced by the database itself.

`tables_sessiontable` (register model 8) and `tables_sessionpool` (model 8 ter) are written with
their `session.closed` event and never change: PostgreSQL and SQLite triggers refuse any UPDATE
or DELETE of them, from the ORM, raw SQL or psql alike (the function of migration jackpot 0003;
the application's role is granted SELECT and INSERT only, `jackpot.audit.grants.APPEND_ONLY`).
"""

from django.db import migrations

APPEND_ONLY = ("tables_sessiontable", "tables_sessionpool")


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
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


class Migration(migrations.Migration):
    dependencies = [("tables", "0013_club_sessions"), ("jackpot", "0003_append_only")]

    operations = [migrations.RunPython(install, uninstall)]
