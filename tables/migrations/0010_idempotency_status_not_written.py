"""An Idempotency-Key's record no longer stores an HTTP status (issue 23).

Round steps return typed results and the view chooses the status from the step; the key's
fingerprint covers the request's path, so a replay's step, hence its status, is the replaying
request's own. The column stays for the records written before, nullable for those written now.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("tables", "0009_journal_coverage")]

    operations = [
        migrations.AlterField(
            model_name="idempotencyrecord",
            name="status_code",
            field=models.PositiveSmallIntegerField(blank=True, null=True),
        ),
    ]
