"""The floor's integrity monitoring: award counts tested against the odds, voids by table and shift,
silent terminals, stale rounds.

Integrity monitoring (tables.audit.integrity, docs/operations.md "Integrity flags"): INTEGRITY_ALPHA
(0.001), the family-wise level below which an award count is flagged, a decimal in (0, 1);
INTEGRITY_WINDOW_HOURS (0: since each pool was created), the rounds looked at;
INTEGRITY_CHECK_SECONDS (3600), how often beat runs the check. Its void watch
(tables.selectors.voids): SHIFT_HOURS (8, a divisor of 24), the shifts the club day is cut into from
midnight; INTEGRITY_VOID_SHIFTS (21), the shifts it reads, the current one included;
INTEGRITY_VOID_MIN_ROUNDS (30), the decided rounds a table needs in a shift (or the window) to
be tested.

Award odds per table and terminal (tables.audit.award_odds, docs/operations.md "Award odds"):
AWARD_ODDS_THRESHOLD (1e-6), the binomial tail below which a table's or terminal's count of an
award kind is a significant event (SE18), a decimal in (0, 1); AWARD_ODDS_WINDOW_HOURS (8, a
shift), the sliding window of rounds it reads.

The floor's watch (tables.watch, docs/operations.md "Significant events"): WATCH_SECONDS (60), how
often beat looks; TERMINAL_SILENT_SECONDS (900), how long a table open for play may go without a
round before its terminal's silence is a significant event.

Invariants: each bound is checked at start-up (a bad value stops it, with what to set).
"""

from fractions import Fraction

from django.core.exceptions import ImproperlyConfigured

from config.settings.env import env_int, env_str

INTEGRITY_CHECK_SECONDS = env_int("INTEGRITY_CHECK_SECONDS", 3600)
# The floor's watch (tables.watch): how often it looks, and how long a table open for play may
# go without a round before its silence is a significant event (SE01).
WATCH_SECONDS = env_int("WATCH_SECONDS", 60)
TERMINAL_SILENT_SECONDS = env_int("TERMINAL_SILENT_SECONDS", 900)
for _name in ("WATCH_SECONDS", "TERMINAL_SILENT_SECONDS"):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be 1 or more")
INTEGRITY_ALPHA = env_str("INTEGRITY_ALPHA", "0.001")
try:
    _alpha = Fraction(INTEGRITY_ALPHA)
except ValueError:
    raise ImproperlyConfigured("INTEGRITY_ALPHA must be a decimal number") from None
if not 0 < _alpha < 1:
    raise ImproperlyConfigured("INTEGRITY_ALPHA must lie strictly between 0 and 1")
AWARD_ODDS_THRESHOLD = env_str("AWARD_ODDS_THRESHOLD", "1e-6")
try:
    _threshold = Fraction(AWARD_ODDS_THRESHOLD)
except ValueError:
    raise ImproperlyConfigured("AWARD_ODDS_THRESHOLD must be a decimal number") from None
if not 0 < _threshold < 1:
    raise ImproperlyConfigured("AWARD_ODDS_THRESHOLD must lie strictly between 0 and 1")
AWARD_ODDS_WINDOW_HOURS = env_int("AWARD_ODDS_WINDOW_HOURS", 8)
if AWARD_ODDS_WINDOW_HOURS < 1:
    raise ImproperlyConfigured("AWARD_ODDS_WINDOW_HOURS must be 1 or more")
INTEGRITY_WINDOW_HOURS = env_int("INTEGRITY_WINDOW_HOURS", 0)
if INTEGRITY_WINDOW_HOURS < 0:
    raise ImproperlyConfigured("INTEGRITY_WINDOW_HOURS must be 0 (since the pool began) or more")
SHIFT_HOURS = env_int("SHIFT_HOURS", 8)
if SHIFT_HOURS < 1 or 24 % SHIFT_HOURS:
    raise ImproperlyConfigured("SHIFT_HOURS must divide 24 (1, 2, 3, 4, 6, 8, 12 or 24)")
INTEGRITY_VOID_SHIFTS = env_int("INTEGRITY_VOID_SHIFTS", 21)
INTEGRITY_VOID_MIN_ROUNDS = env_int("INTEGRITY_VOID_MIN_ROUNDS", 30)
if INTEGRITY_VOID_SHIFTS < 1:
    raise ImproperlyConfigured("INTEGRITY_VOID_SHIFTS must be 1 or more")
if INTEGRITY_VOID_MIN_ROUNDS < 1:
    raise ImproperlyConfigured("INTEGRITY_VOID_MIN_ROUNDS must be 1 or more")
# How long a round may stay open before it is "stale" (its result is not coming): the table's
# round list marks it and the pool report counts it (docs/api.md 2.10). A UTH hand takes a few
# minutes; 15 by default.
ROUND_STALE_AFTER_SECONDS = env_int("ROUND_STALE_AFTER_SECONDS", 15 * 60)
if ROUND_STALE_AFTER_SECONDS < 1:
    raise ImproperlyConfigured("ROUND_STALE_AFTER_SECONDS must be 1 or more (seconds)")
