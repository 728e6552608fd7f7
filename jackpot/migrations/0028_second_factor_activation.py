"""Issue 37 item 3: the activation codes a second admin issues for a first enrollment
(`ActivationCode`, a keyed hash only), and two partial expression indexes that find a person's
second-factor events in the journal (`jackpot.staff.second_factor.journal_enrolled`) without reading
the rest of it."""

import django.db.models.deletion
import django.db.models.fields.json
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('jackpot', '0027_terminal_issue'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ActivationCode',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code_hash', models.CharField(max_length=64)),
                ('issued_at', models.DateTimeField()),
                ('expires_at', models.DateTimeField()),
            ],
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(django.db.models.fields.json.KeyTransform('user', 'payload'), condition=models.Q(('chain', 'admin'), ('kind__in', ('staff.second_factor_enrolled', 'staff.second_factor_reset'))), name='audit_second_factor_user'),
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(django.db.models.fields.json.KeyTransform('user_id', 'payload'), condition=models.Q(('chain', 'admin'), ('kind__in', ('staff.second_factor_enrolled', 'staff.second_factor_reset'))), name='audit_second_factor_user_id'),
        ),
        migrations.AddField(
            model_name='activationcode',
            name='issued_by',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='activationcode',
            name='user',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
    ]
