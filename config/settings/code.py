"""Which code may run: the approved digest of the installed code (compliance 59).

JACKPOT_CODE_SHA256: the digest an approver pinned (`manage.py code_digest` prints a build's);
the start-up gate's item `code` (tables.audit.selfcheck) compares it with the installed files'.
Where SELFCHECK_REQUIRE_PIN (production) a missing one fails the gate; here it is reported.
"""

from config.settings.env import env_str

JACKPOT_CODE_SHA256 = env_str("JACKPOT_CODE_SHA256").strip().lower()
