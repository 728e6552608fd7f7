"""The journal covers what the register prints (issue 20, item 6).

- `AuditEvent.content_format`: the events already written keep format 1 (their hash covers no
  transfer's pool); every event written from now on is format 2, whose hash covers its
  transfers' pools and the format itself (`jackpot.money.ledger.content`).
- The journal covers who may act (`jackpot.staff.records`): on a database that has accounts, one
  `staff.recorded` event on the admin chain shows each as it stands now, the comparison's start.
"""

from django.db import migrations, models

from jackpot.staff.roles import ROLES
from jackpot.staff.records import record_accounts


def record(apps, schema_editor):
    users = apps.get_model("auth", "User")
    record_accounts(
        users, lambda user: user.groups.filter(name__in=ROLES).values_list("name", flat=True)
    )


class Migration(migrations.Migration):
    dependencies = [("jackpot", "0014_two_person_staff")]

    operations = [
        # Two steps: the rows already there are format 1, the column's default then becomes 2.
        migrations.AddField(
            model_name="auditevent",
            name="content_format",
            field=models.PositiveSmallIntegerField(default=1),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="content_format",
            field=models.PositiveSmallIntegerField(
                default=2,
                db_default=2,
                help_text="What the hash covers: 1, before transfers' pools were covered; 2.",
            ),
        ),
        migrations.RunPython(record, migrations.RunPython.noop),
    ]
