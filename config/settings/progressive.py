"""The progressive's life (jackpot.pools.notices, jackpot.pools.orphans; compliance 57, 58).

NOTICE_WITHOUT_DELAY_HOURS (24): the deadline of a notice "without delay" (a suspension or an
involuntary stop, to the police des jeux), in hours after its event.
NOTICE_CHECK_SECONDS (300): how often beat looks for notices unsent past their deadline.
CLUB_SEASON_END ("10-31"): the month and day (MM-DD) a club's season ends, in TIME_ZONE: a stopped
pool's orphans are recoverable until the end of that day, final after it.
ORPHANS_CHECK_SECONDS (3600): how often beat looks for orphans past their season.

Invariants: the hours are 1 to 72 (a notice "without delay" is never given days); the season's
end is a real day of every year (not 02-29); the periods are 1 or more. Every environment,
production included, refuses anything else at start-up.
"""

import re

from django.core.exceptions import ImproperlyConfigured

from config.settings.env import env_int, env_str

NOTICE_WITHOUT_DELAY_HOURS = env_int("NOTICE_WITHOUT_DELAY_HOURS", 24)
if not 1 <= NOTICE_WITHOUT_DELAY_HOURS <= 72:
    raise ImproperlyConfigured("NOTICE_WITHOUT_DELAY_HOURS must be 1 to 72 (hours)")
NOTICE_CHECK_SECONDS = env_int("NOTICE_CHECK_SECONDS", 300)
CLUB_SEASON_END = env_str("CLUB_SEASON_END", "10-31")
_season = re.fullmatch(r"(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])", CLUB_SEASON_END)
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
if _season is None or int(_season[2]) > _DAYS[int(_season[1]) - 1]:
    raise ImproperlyConfigured("CLUB_SEASON_END must be a day of every year, MM-DD, e.g. 10-31")
ORPHANS_CHECK_SECONDS = env_int("ORPHANS_CHECK_SECONDS", 3600)
if NOTICE_CHECK_SECONDS < 1 or ORPHANS_CHECK_SECONDS < 1:
    raise ImproperlyConfigured("NOTICE_CHECK_SECONDS and ORPHANS_CHECK_SECONDS must be 1 or more")
