"""A staff token expires (issue 37): `StaffToken.expires_at`, set at issue STAFF_TOKEN_DAYS on.

A token issued before gets its issue plus STAFF_TOKEN_DAYS: one older than that stops working at
the upgrade (its holder issues a new one on their account page). The column stays nullable, as a
release's migrations add before they remove: a token an instance of the previous release issues
during the upgrade has none, and is refused like an expired one.
"""

from datetime import timedelta

from django.conf import settings
from django.db import migrations, models


def expire_issued(apps, schema_editor):
    tokens = apps.get_model("jackpot", "StaffToken")
    lifetime = timedelta(days=settings.STAFF_TOKEN_DAYS)
    for token in tokens.objects.filter(expires_at__isnull=True).only("pk", "created_at"):
        tokens.objects.filter(pk=token.pk).update(expires_at=token.created_at + lifetime)


class Migration(migrations.Migration):
    dependencies = [("jackpot", "0024_award_follows")]

    operations = [
        migrations.AddField(
            model_name="stafftoken",
            name="expires_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(expire_issued, migrations.RunPython.noop),
    ]
