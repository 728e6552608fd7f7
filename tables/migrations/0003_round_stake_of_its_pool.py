# The CHECK in a migration of its own: on PostgreSQL the rows the previous one filled hold
# deferred foreign-key checks until its transaction commits, and ALTER TABLE refuses to run then.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("tables", "0002_round_pool_of_record"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='round',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('pool__isnull', True), ('stake_cents', 0)), models.Q(('pool__isnull', False), ('stake_cents__gt', 0)), _connector='OR'), name='round_stake_of_its_pool'),
        ),
    ]
