"""The club's sessions (tables.club, docs/operations.md "Sessions and drop counts").

CLUB_DAY_ENDS_AT ("06:00"), the local time (TIME_ZONE) HH:MM at which a club day ends: a moment
before it belongs to the day before. CLUB_SESSION_CLOSES_AT_DAY_END (true): beat closes the open
session once the end of the club day it opened on has passed (`system:club_day`).
CLUB_SESSION_CHECK_SECONDS (120): how often beat looks.

Invariants: CLUB_DAY_ENDS_AT is a valid HH:MM; the period is 1 or more (every environment,
production included, refuses anything else at start-up).
"""

import re

from django.core.exceptions import ImproperlyConfigured

from config.settings.env import env_bool, env_int, env_str

CLUB_DAY_ENDS_AT = env_str("CLUB_DAY_ENDS_AT", "06:00")
if re.fullmatch(r"([01][0-9]|2[0-3]):([0-5][0-9])", CLUB_DAY_ENDS_AT) is None:
    raise ImproperlyConfigured("CLUB_DAY_ENDS_AT must be a local time HH:MM, e.g. 06:00")
CLUB_SESSION_CLOSES_AT_DAY_END = env_bool("CLUB_SESSION_CLOSES_AT_DAY_END", default=True)
CLUB_SESSION_CHECK_SECONDS = env_int("CLUB_SESSION_CHECK_SECONDS", 120)
if CLUB_SESSION_CHECK_SECONDS < 1:
    raise ImproperlyConfigured("CLUB_SESSION_CHECK_SECONDS must be 1 or more")
