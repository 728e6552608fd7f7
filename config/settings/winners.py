"""Paying a winner: the threshold above which a winner is identified, the keys their identities are
encrypted under, and how long those are kept.

Invariant: no key is set here: production requires its own, and the test and local settings give
theirs, so a build can never encrypt identities under a key shipped with it.
"""

from config.settings.env import env_int, env_list

# Paying a winner (jackpot.awards.winners, docs/operations.md "Winners' identities"): an award at or
# above WINNER_IDENTIFICATION_THRESHOLD_CENTS (EUR 2,000, where French anti-money-laundering rules
# make a gaming club identify a winner) is paid only with the winner's identity, stored encrypted
# under WINNER_IDENTITY_KEYS (comma-separated Fernet keys, kept outside the database: the first
# encrypts, every one decrypts, so a key is rotated by putting the new one first) and kept
# WINNER_IDENTITY_RETENTION_DAYS (5 years) after its recording, then purged
# (`manage.py purge_winner_identities`). No key here: production requires one, the test and local
# settings give their own.
WINNER_IDENTIFICATION_THRESHOLD_CENTS = env_int("WINNER_IDENTIFICATION_THRESHOLD_CENTS", 200_000)
WINNER_IDENTITY_KEYS = env_list("WINNER_IDENTITY_KEYS", [])
WINNER_IDENTITY_RETENTION_DAYS = env_int("WINNER_IDENTITY_RETENTION_DAYS", 1826)
