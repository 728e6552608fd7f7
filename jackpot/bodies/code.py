"""The code proved (compliance 59): the approved and the installed digests and the last check."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from core.wire import Body, Instant

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class CodeCheckResult(StrEnum):
    """What the start-up gate's item `code` found, as the journal records it."""

    VERIFIED = "verified"  # `code.verified`: the installed digest was the approved one
    MISMATCH = "mismatch"  # `code.mismatch` (SE21): it was not, or none was approved


class CodeDigest(Body):
    """Which code runs: the approved digest (JACKPOT_CODE_SHA256), the one this process computed
    of its files, and the newest check the start-up gate recorded in the journal."""

    approved_sha256: Sha256 | None = Field(
        description="JACKPOT_CODE_SHA256 as this process reads it; null when none is set"
    )
    installed_sha256: Sha256 = Field(
        description="the SHA-256 of the manifest of this process's files (manage.py "
        "code_digest --manifest), computed once per process"
    )
    matches: bool = Field(description="the installed digest is the approved one")
    last_checked_at: Instant | None = Field(
        description="when the start-up gate last checked the code (the journal's event); null "
        "when it never did"
    )
    last_result: CodeCheckResult | None = Field(description="what that check found")
