"""The code proved (compliance 59): the installed digest against the approved one, each check
recorded in the journal, and the last one read back.

Invariants: the start-up gate records every check it makes with an approved digest required or
given, on the `admin` chain: `code.verified` when the installed digest is the approved one,
`code.mismatch` (the significant event SE21) otherwise, each naming both digests and the host;
the last check is read by kind through the events' (kind, occurred_at) index, the newest
authentic one (at most `LOOK_BACK` a kind: a forged row is passed over, never believed), so
reading it costs the same whatever the journal's age.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass

from django.conf import settings

from core import code_digest
from jackpot.bodies.code import CodeCheckResult, CodeDigest
from jackpot.models import AuditEvent
from jackpot.money import ledger

VERIFIED = "code.verified"
MISMATCH = "code.mismatch"
KINDS = {VERIFIED: CodeCheckResult.VERIFIED, MISMATCH: CodeCheckResult.MISMATCH}
ACTOR = "system:selfcheck"
#: How many of a kind's newest events are read before giving up on finding an authentic one.
LOOK_BACK = 20
_SHA256 = re.compile(r"[0-9a-f]{64}")
#: The longest approved value a payload carries (a malformed pin is cut, never a wall of text).
_PIN_KEPT = 100


@dataclass(frozen=True, slots=True)
class CodeCheck:
    approved: str  # JACKPOT_CODE_SHA256 as set ("" when it is not)
    installed: str

    @property
    def well_formed(self) -> bool:
        return _SHA256.fullmatch(self.approved) is not None

    @property
    def matches(self) -> bool:
        return self.well_formed and self.approved == self.installed


def code_check() -> CodeCheck:
    """The approved digest (settings) and this process's installed one."""
    return CodeCheck(approved=settings.JACKPOT_CODE_SHA256, installed=code_digest.installed())


def code_check_record(check: CodeCheck) -> AuditEvent:
    """Record `check` on the `admin` chain (call inside the caller's transaction): SE21 when it
    does not match."""
    return ledger.record(
        chain=ledger.ADMIN_CHAIN,
        kind=VERIFIED if check.matches else MISMATCH,
        actor=ACTOR,
        payload={
            "approved": check.approved[:_PIN_KEPT] or None,
            "installed": check.installed,
            "host": socket.gethostname(),
        },
    )


def _newest_authentic(kind: str) -> AuditEvent | None:
    newest = AuditEvent.objects.filter(kind=kind).order_by("-occurred_at", "-pk")[:LOOK_BACK]
    return next((event for event in newest if ledger.authentic(event)), None)


def code_status() -> CodeDigest:
    """Both digests, whether they match, and the newest authentic check the gate recorded."""
    check = code_check()
    found = [event for kind in KINDS if (event := _newest_authentic(kind)) is not None]
    last = max(found, key=lambda event: (event.occurred_at, event.pk), default=None)
    return CodeDigest.model_construct(
        approved_sha256=check.approved if check.well_formed else None,
        installed_sha256=check.installed,
        matches=check.matches,
        last_checked_at=last.occurred_at if last else None,
        last_result=KINDS[last.kind] if last else None,
    )
