"""API tokens of staff accounts (supervisors, auditors, admins).

Only the SHA-256 of a token is stored: tokens are 256-bit random strings, so a fast hash is as
safe as a slow one here, and the lookup stays one indexed query. A token is shown once, when issued.
"""

from django.conf import settings
from django.db import models


class StaffToken(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}... ({self.user})"
