# Two people for who may do what, and for what a pool is (issue 20 items 1 and 4; compliance 17,
# 36, 47): ParameterChange becomes every two-person change (a `kind` and, for staff, a `subject`;
# its pool is None for a staff change or a pool not yet created), its CHECK `change_four_eyes`
# also refuses an approval by the change's subject; StaffSecurity records a password an admin
# reset, to be changed at the next sign-in.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('jackpot', '0013_checkpoints'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='StaffSecurity',
            fields=[
                ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='security', serialize=False, to=settings.AUTH_USER_MODEL)),
                ('must_change_password', models.BooleanField(default=False)),
                ('password_reset_at', models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.RemoveConstraint(
            model_name='parameterchange',
            name='change_four_eyes',
        ),
        migrations.AddField(
            model_name='parameterchange',
            name='kind',
            field=models.CharField(choices=[('pool.parameters', "A pool's parameters"), ('pool.create', 'A new pool'), ('table.move', 'A table linked to a pool, moved or unlinked'), ('staff.create', 'A new staff account'), ('staff.access', "A staff account's roles, flags or reactivation"), ('staff.second_factor_reset', "A staff member's second factor reset")], default='pool.parameters', max_length=32),
        ),
        migrations.AddField(
            model_name='parameterchange',
            name='subject',
            field=models.ForeignKey(blank=True, help_text='The staff account a staff change is about.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AlterField(
            model_name='parameterchange',
            name='pool',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='changes', to='jackpot.pool'),
        ),
        migrations.AddIndex(
            model_name='parameterchange',
            index=models.Index(fields=['kind', 'status'], name='jackpot_par_kind_8bb204_idx'),
        ),
        migrations.AddConstraint(
            model_name='parameterchange',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('status', 'applied'), _negated=True), models.Q(('decided_by__isnull', False), models.Q(('decided_by', models.F('proposed_by')), _negated=True), models.Q(('subject__isnull', True), models.Q(('decided_by', models.F('subject')), _negated=True), _connector='OR')), _connector='OR'), name='change_four_eyes'),
        ),
        migrations.AddConstraint(
            model_name='parameterchange',
            constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['pool.parameters', 'pool.create', 'table.move', 'staff.create', 'staff.access', 'staff.second_factor_reset'])), name='change_kind_known'),
        ),
        migrations.AddConstraint(
            model_name='parameterchange',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('kind', 'pool.parameters'), _negated=True), ('pool__isnull', False), _connector='OR'), name='change_parameters_pool'),
        ),
        migrations.AddConstraint(
            model_name='parameterchange',
            constraint=models.CheckConstraint(condition=models.Q(('subject__isnull', False), models.Q(models.Q(('kind__in', ['staff.access', 'staff.second_factor_reset']), _negated=True), models.Q(('kind', 'staff.create'), ('status', 'applied'), _negated=True)), _connector='OR'), name='change_staff_subject'),
        ),
        migrations.AddField(
            model_name='staffsecurity',
            name='password_reset_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
    ]
