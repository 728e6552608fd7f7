"""What decides money, as settings: the approved checksum of this build's money configuration, and
the settings that are part of it.

Invariant: MONEY_SETTINGS names every setting whose value decides money (none today: a pool's
parameters live in its row, changed by audited events only), so jackpot.pools.configuration's
checksum changes when, and only when, one of them does.
"""

from config.settings.env import env_str

# The start-up self-check (`manage.py selfcheck`, compliance requirement 27; docs/operations.md):
# the approved checksum of what decides money in this build (`manage.py selfcheck
# --print-checksum` prints it), pinned by the operator. Production refuses to serve without it
# (config.settings.production); here a missing pin is reported, not fatal.
JACKPOT_CONFIG_SHA256 = env_str("JACKPOT_CONFIG_SHA256").strip().lower()
SELFCHECK_REQUIRE_PIN = False
# The settings that decide money, by name: their values are part of that checksum
# (jackpot.pools.configuration). None does today: a pool's parameters live in its row, changed by
# audited events only. A setting that comes to decide money is named here.
MONEY_SETTINGS: tuple[str, ...] = ()
