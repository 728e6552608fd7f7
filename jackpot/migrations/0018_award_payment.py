"""Paying a winner (issue 22, item 1): how an award was paid, and the winner's identity.

- `Award.payment_method`, `payment_reference`, `payment_note`, `approval_note`: blank for the
  awards paid before (the journal's events of their payment say none either).
- `WinnerIdentity`: one row per identified award, encrypted (`jackpot.models.winners`). On
  PostgreSQL a trigger refuses every UPDATE and every DELETE of a row whose `keep_until` has not
  passed: the purge of expired rows is the only deletion (requirement 37); on SQLite (`make run`'s
  demo) the same.
"""


import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


POSTGRES_FUNCTION = """
CREATE OR REPLACE FUNCTION jackpot_winner_identity_kept() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND OLD.keep_until <= statement_timestamp() THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'winner identity: %% of award %% is refused (kept until %%; only a purge '
        'after that deletes it)', TG_OP, OLD.award_id, OLD.keep_until
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""
TABLE = "jackpot_winneridentity"


def install(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(POSTGRES_FUNCTION)
        schema_editor.execute(
            f"CREATE TRIGGER {TABLE}_kept BEFORE UPDATE OR DELETE ON {TABLE} "
            "FOR EACH ROW EXECUTE FUNCTION jackpot_winner_identity_kept()"
        )
    elif vendor == "sqlite":
        schema_editor.execute(
            f"CREATE TRIGGER {TABLE}_no_update BEFORE UPDATE ON {TABLE} "
            "BEGIN SELECT RAISE(ABORT, 'winner identity: UPDATE is refused'); END"
        )
        schema_editor.execute(
            f"CREATE TRIGGER {TABLE}_kept BEFORE DELETE ON {TABLE} "
            "WHEN OLD.keep_until > datetime('now') "
            "BEGIN SELECT RAISE(ABORT, 'winner identity: DELETE before keep_until is refused'); "
            "END"
        )
    else:  # pragma: no cover - the service runs on PostgreSQL or, for a demo, SQLite
        raise RuntimeError(f"no triggers for database vendor {vendor!r}")


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_kept ON {TABLE}")
        schema_editor.execute("DROP FUNCTION IF EXISTS jackpot_winner_identity_kept()")
    else:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_no_update")
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_kept")


class Migration(migrations.Migration):

    dependencies = [
        ('jackpot', '0017_commit_probe'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='award',
            name='approval_note',
            field=models.CharField(blank=True, default='', db_default='', max_length=500),
        ),
        migrations.AddField(
            model_name='award',
            name='payment_method',
            field=models.CharField(blank=True, choices=[('cash', 'Cash'), ('cheque', 'Cheque'), ('bank_transfer', 'Bank transfer')], default='', db_default='', max_length=20),
        ),
        migrations.AddField(
            model_name='award',
            name='payment_note',
            field=models.CharField(blank=True, default='', db_default='', max_length=500),
        ),
        migrations.AddField(
            model_name='award',
            name='payment_reference',
            field=models.CharField(blank=True, default='', db_default='', max_length=100),
        ),
        migrations.CreateModel(
            name='WinnerIdentity',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('ciphertext', models.TextField(help_text='The identity as a Fernet token (jackpot.awards.winners).')),
                ('recorded_at', models.DateTimeField()),
                ('keep_until', models.DateTimeField(help_text="The retention's end: purged after it, not before.")),
                ('award', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='winner_identity', to='jackpot.award')),
                ('recorded_by', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'indexes': [models.Index(fields=['keep_until'], name='jackpot_win_keep_un_19a437_idx')],
            },
        ),
        migrations.RunPython(install, uninstall),
    ]
