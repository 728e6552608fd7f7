"""Staff accounts' credentials: API tokens, and the password reset an admin may force.

Only the SHA-256 of a token is stored: tokens are 256-bit random strings, so a fast hash is as
safe as a slow one here, and the lookup stays one indexed query. A token is shown once, when issued,
to its owner, and refused once past its `expires_at`. An admin never sets a colleague's password:
a reset gives a temporary one that must be changed at the next sign-in
(`StaffSecurity.must_change_password`).
"""

from django.conf import settings
from django.db import models
from django_otp.plugins.otp_totp.models import TOTPDevice

from core.tokens import unseal_totp_key


class StaffToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set at issue, STAFF_TOKEN_DAYS on (its `staff_token.issued` event says it): refused after.
    # Null only for a token the previous release issued during an upgrade: refused too.
    expires_at = models.DateTimeField(null=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}... ({self.user})"


class StaffSecurity(models.Model):
    """What guards a staff account beside its password: whether it must choose a new password at
    its next sign-in (set when an admin resets it: `jackpot.staff.accounts.password_reset`, cleared
    by the sign-in that changes it), and who reset it, when. One row per account, made when first
    needed; no row means nothing is pending."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="security",
    )
    must_change_password = models.BooleanField(default=False)
    password_reset_at = models.DateTimeField(null=True, blank=True)
    password_reset_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )

    def __str__(self) -> str:
        return f"security of {self.user}"


class ActivationCode(models.Model):
    """An admin's leave for `user` to enroll a second factor (`jackpot.staff.second_factor`): the
    code is shown once to the admin who issued it, who is neither `user` nor the admin who last
    reset `user`'s password (or the operator, for a fresh install's first admins); the row holds
    only a keyed hash bound to `user`, the issuer and the expiry
    (`core.tokens.seal_activation_code`), so a row written or edited without SECRET_KEY
    matches no code. Used once: the enrollment it allowed deletes it."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    #: None: the operator, for one of a fresh install's first two admins (`bootstrap_admin`).
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    code_hash = models.CharField(max_length=64)
    issued_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"activation of {self.user} by {self.issued_by}"


class SealedTOTPDevice(TOTPDevice):
    """A TOTP device as the service uses it: its `key` column holds the key sealed for its owner
    (`core.tokens.seal_totp_key`), so the database alone never gives a code. Every check and
    every enrolment goes through this class (`jackpot.staff.second_factor`); django-otp's own lists
    of devices (`devices_for_user`) see the same rows as `TOTPDevice`."""

    class Meta:
        proxy = True

    @property
    def bin_key(self) -> bytes:
        return unseal_totp_key(self.user_id, self.key)
