"""A winner's identity, as the French anti-money-laundering register needs it, encrypted at rest.

An award paid at or above `settings.WINNER_IDENTIFICATION_THRESHOLD_CENTS` is paid only with its
winner identified (`jackpot.awards.winners`); below it an identity may be given and is kept the same
way. One row per award (one-to-one), written in the payment's transaction and never changed:
- `ciphertext` is the identity (name, date of birth, document type and number, nationality) as a
  Fernet token under `settings.WINNER_IDENTITY_KEYS`, keys the database does not hold: a copy of
  the database reveals no identity;
- the payment's `award.paid` event records a keyed digest of the identity (never the identity),
  so a row edited or forged by SQL is reported by the journal's verification;
- `keep_until` is when the retention (`WINNER_IDENTITY_RETENTION_DAYS`) ends. PostgreSQL refuses
  every UPDATE, and a DELETE of a row whose `keep_until` has not passed (migration jackpot
  0018_award_payment): the only deletion is the purge of expired rows (requirement 37).
"""

from django.conf import settings
from django.db import models


class DocumentType(models.TextChoices):
    IDENTITY_CARD = "identity_card", "Identity card"
    PASSPORT = "passport", "Passport"
    RESIDENCE_PERMIT = "residence_permit", "Residence permit"
    DRIVING_LICENCE = "driving_licence", "Driving licence"


class WinnerIdentity(models.Model):
    award = models.OneToOneField(
        "jackpot.Award", on_delete=models.PROTECT, related_name="winner_identity"
    )
    ciphertext = models.TextField(
        help_text="The identity as a Fernet token (jackpot.awards.winners)."
    )
    recorded_at = models.DateTimeField()
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    keep_until = models.DateTimeField(help_text="The retention's end: purged after it, not before.")

    class Meta:
        indexes = [models.Index(fields=["keep_until"])]

    def __str__(self) -> str:
        return f"winner of award {self.award_id} (kept until {self.keep_until:%Y-%m-%d})"
