"""The tamper-evident audit chain.

Every money movement and every decision writes one `AuditEvent` in the same transaction. Events
form hash chains (one per table for its rounds, one per pool for the pool's own events, one for
administration): each event has the next `sequence` of its chain and `hash = HMAC-SHA256(prev_hash
+ canonical content)`, where the canonical content covers the event's fields and the transfers it
wrote, as its `content_format` says (`jackpot.money.ledger.content`): format 1 (events written
before it existed) a transfer as its code, accounts, amount, round and award; format 2 (every event
written now) its pool too, and the format itself, so that neither a transfer's pool nor the event's
format can be edited without breaking the link. Changing any event or transfer after the fact breaks
the chain at that event (`verify_journal` finds it). The chain head row serializes the chain's
writers; when it is locked is `jackpot.money.locks`'s to say (a table's chain before the pool row, a
pool's after it). A table's chain is written only by its own rounds, so it adds no lock shared
between tables.
"""

from django.db import models
from django.db.models import F, Q
from django.db.models.fields.json import KT, KeyTransform

GENESIS_HASH = "0" * 64

#: The events that say whether a person has a second factor (`jackpot.staff.second_factor`): read
# per : person by the indexes below, never the whole journal.
SECOND_FACTOR_KINDS = ("staff.second_factor_enrolled", "staff.second_factor_reset")


class AuditChain(models.Model):
    key = models.CharField(max_length=40, primary_key=True)
    sequence = models.BigIntegerField(default=0)
    head_hash = models.CharField(max_length=64, default=GENESIS_HASH)

    def __str__(self) -> str:
        return f"{self.key} @ {self.sequence}"


class AuditEvent(models.Model):
    chain = models.CharField(max_length=40)
    sequence = models.BigIntegerField()
    kind = models.CharField(max_length=40)
    actor = models.CharField(max_length=120)
    occurred_at = models.DateTimeField()
    payload = models.JSONField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)
    content_format = models.PositiveSmallIntegerField(
        default=2,
        db_default=2,  # a row written by SQL alone is format 2 too: it claims the most cover
        help_text="What the hash covers: 1, before transfers' pools were covered; 2.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["chain", "sequence"], name="audit_chain_sequence"),
        ]
        indexes = [
            models.Index(fields=["kind", "occurred_at"]),
            # A person's second-factor events, by name and, since they carry it, by account id:
            # the expressions of the lookups `payload__user` and `payload__user_id`.
            models.Index(
                KeyTransform("user", "payload"),
                name="audit_second_factor_user",
                condition=models.Q(chain="admin", kind__in=SECOND_FACTOR_KINDS),
            ),
            models.Index(
                KeyTransform("user_id", "payload"),
                name="audit_second_factor_user_id",
                condition=models.Q(chain="admin", kind__in=SECOND_FACTOR_KINDS),
            ),
            # The request-time look-ups of `jackpot.staff.authority`: one account's, one token's,
            # one proposal's events. Partial, so a round's events (the hot path) add no entry.
            *(
                models.Index(
                    KT(f"payload__{side}__username"),
                    F("sequence"),
                    name=f"audit_account_{side}",
                    condition=Q(chain="admin", kind__in=["staff.bootstrapped", "staff.changed"]),
                )
                for side in ("after", "before")
            ),
            *(
                models.Index(
                    KT(f"payload__{key}"),
                    name=f"audit_staff_token_{key}",
                    condition=Q(chain="admin", kind="staff_token.issued"),
                )
                for key in ("token", "user_id")
            ),
            # A terminal's events (its issue, its revocation) and its table's issues.
            models.Index(
                KT("payload__terminal"),
                name="audit_terminal_events",
                condition=Q(
                    chain="admin",
                    kind__in=["terminal.bootstrapped", "terminal.issued", "terminal.revoked"],
                ),
            ),
            models.Index(
                KT("payload__table"),
                name="audit_table_terminal_issues",
                condition=Q(chain="admin", kind__in=["terminal.bootstrapped", "terminal.issued"]),
            ),
            models.Index(
                KT("payload__change"),
                name="audit_change_proposed",
                condition=Q(
                    kind__in=[
                        "pool.change_proposed",
                        "staff.change_proposed",
                        "table.change_proposed",
                        "terminal.change_proposed",
                    ]
                ),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.chain}#{self.sequence} {self.kind}"
