"""The staff and how they sign in: password rules, the sign-in throttle, the pages' login URL
and the club's name, the second factor, their sessions' limits and their API tokens' lifetime.

Invariants: the second factor is required here and in production (which takes no environment value
for it); only config.settings.local and test turn it off. An authenticator app names the issuer
as the payment slips name the club (OTP_TOTP_ISSUER is CLUB_NAME).
"""

from config.settings.env import env_int, env_str

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# The staff's failed logins allowed per user name and per address, the admin's and the floor
# pages' together (floor.login).
THROTTLE_ADMIN_LOGIN = env_str("THROTTLE_ADMIN_LOGIN", "5/min")

# The staff pages (floor): where a session signs in, and the club named on payment slips.
LOGIN_URL = "/floor/login/"
CLUB_NAME = env_str("CLUB_NAME", "Cercle de jeux")

# The staff's second factor (jackpot.staff.second_factor): whoever signs in, at the floor's door or
# the admin's, gives a TOTP code or a recovery code after the password, and enrolls a device at
# their first sign-in; the API refuses a session without it (403 second_factor_required). Always on
# in production (which takes no environment value for it); config.settings.local turns it off for
# `make run`'s demo unless STAFF_SECOND_FACTOR_REQUIRED=1.
STAFF_SECOND_FACTOR_REQUIRED = True
# The issuer an authenticator app shows beside the account (the otpauth:// URI's).
OTP_TOTP_ISSUER = CLUB_NAME
# How long a sign-in may wait between its password and its last step (a code, a new password,
# an enrollment) before it starts again from the password.
STAFF_SIGN_IN_STEPS_SECONDS = 600

# The staff's browser sessions (core.sessions): the database holds a keyed hash of each cookie's
# key, never the key, and a signed-in session ends STAFF_SESSION_IDLE_SECONDS after it was last
# seen (moved at most once a minute) or STAFF_SESSION_MAX_SECONDS after its sign-in, whichever
# comes first: the limits a club sets for a shift (production refuses absurd ones).
SESSION_ENGINE = "core.sessions"
STAFF_SESSION_IDLE_SECONDS = env_int("STAFF_SESSION_IDLE_SECONDS", 30 * 60)
STAFF_SESSION_MAX_SECONDS = env_int("STAFF_SESSION_MAX_SECONDS", 12 * 3600)
# The cookie lives as long as an idle session may (the server decides, whatever the browser keeps).
SESSION_COOKIE_AGE = STAFF_SESSION_IDLE_SECONDS
# A staff API token (jackpot.staff.accounts.staff_token_issue) is refused this many days after its
# issue, which its `staff_token.issued` event states.
STAFF_TOKEN_DAYS = env_int("STAFF_TOKEN_DAYS", 30)
