# A round records the terms it settles with (issue 20 item 2): its pool's progressive paytable
# version and verification threshold when it opened, beside the stake it recorded already
# (0002). Rounds written before this migration get the terms the code before it read: a settled
# round its pool's when it settled, any other (open, void) its pool's when it opened; an open
# round so settles as it would have. A pool's terms at a moment are its values now with every
# later `pool.changed` event of its chain undone (the event's `before`).

from django.db import migrations, models
from django.db.models import Q

TERMS = ("paytable_version", "verification_threshold_cents")


def _read_between(since, until):
    """The rounds whose terms were read at or after `since` and before `until` (None: no bound):
    a settled round's when it settled, any other's when it opened."""
    settled, other = Q(state="settled"), ~Q(state="settled")
    if since is not None:
        settled &= Q(closed_at__gte=since)
        other &= Q(opened_at__gte=since)
    if until is not None:
        settled &= Q(closed_at__lt=until)
        other &= Q(opened_at__lt=until)
    return settled | other


def terms_of_record(apps, schema_editor):
    Pool = apps.get_model("jackpot", "Pool")
    AuditEvent = apps.get_model("jackpot", "AuditEvent")
    Round = apps.get_model("tables", "Round")
    for pool in Pool.objects.order_by("pk"):
        terms = {field: getattr(pool, field) for field in TERMS}
        changes = AuditEvent.objects.filter(chain=f"pool-{pool.pk}", kind="pool.changed")
        until = None
        for occurred_at, payload in changes.order_by("-sequence").values_list(
            "occurred_at", "payload"
        ):
            Round.objects.filter(_read_between(occurred_at, until), pool_id=pool.pk).update(**terms)
            before = payload.get("before") or {}
            terms = {field: before.get(field, value) for field, value in terms.items()}
            until = occurred_at
        Round.objects.filter(_read_between(None, until), pool_id=pool.pk).update(**terms)


class Migration(migrations.Migration):
    dependencies = [("jackpot", "0013_checkpoints"), ("tables", "0007_history")]

    operations = [
        migrations.AddField(
            model_name="round",
            name="paytable_version",
            field=models.CharField(
                blank=True,
                default="",
                help_text="The pool's progressive paytable when the round opened ('': no pool).",
                max_length=40,
            ),
        ),
        migrations.AddField(
            model_name="round",
            name="verification_threshold_cents",
            field=models.BigIntegerField(
                blank=True,
                help_text="The pool's verification threshold when the round opened (null: no pool).",
                null=True,
            ),
        ),
        migrations.RunPython(terms_of_record, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="round",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("paytable_version", ""),
                        ("pool__isnull", True),
                        ("verification_threshold_cents__isnull", True),
                    ),
                    models.Q(
                        ("pool__isnull", False),
                        ("verification_threshold_cents__gte", 0),
                        ("verification_threshold_cents__isnull", False),
                        models.Q(("paytable_version", ""), _negated=True),
                    ),
                    _connector="OR",
                ),
                name="round_terms_of_its_pool",
            ),
        ),
        migrations.AddIndex(
            model_name="round",
            index=models.Index(
                condition=models.Q(("state", "open")), fields=["pool"], name="round_open_per_pool"
            ),
        ),
    ]
