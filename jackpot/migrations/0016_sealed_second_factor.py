"""The staff's TOTP devices as the service uses them: keys stored sealed (`SealedTOTPDevice`, a
proxy of django-otp's `TOTPDevice`; `core.tokens`). Devices made before hold their keys in
the clear and would give no code: there are none (the second factor arrives with this release)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("jackpot", "0015_journal_coverage"),
        ("otp_totp", "0003_add_timestamps"),
    ]

    operations = [
        migrations.CreateModel(
            name="SealedTOTPDevice",
            fields=[],
            options={"proxy": True, "indexes": [], "constraints": []},
            bases=("otp_totp.totpdevice",),
        ),
    ]
