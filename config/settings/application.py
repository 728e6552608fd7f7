"""The Django application itself: where it lives on disk, its apps and middleware in the order they
must run, its templates, languages, time zone and static files.

Invariants: BASE_DIR is the repository's root and VAR_DIR the one directory of files the service
writes (the SQLite file, beat's schedule, exports, static files), so the other settings modules
derive their paths from these two and nothing else. DEBUG is off unless the environment says
(config.settings.local turns it on for `make run`; production refuses it).
"""

from pathlib import Path

from config.settings.env import env_bool

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"

DEBUG = env_bool("DEBUG", default=False)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # The staff's second factor (TOTP) and its recovery codes (django-otp's static tokens).
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "jackpot",
    "tables",
    "floor",
]

MIDDLEWARE = [
    # First: every later line of the request's logs carries its id (core.request_id), and the
    # request is timed from here (config.monitoring).
    "core.request_id.RequestIdMiddleware",
    "config.monitoring.MetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # The admin takes no NUL in its lists' searches, filters and forms (PostgreSQL text cannot
    # hold it): a 400, before any view reads them.
    "config.admin_queries.AdminNulMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # request.user.is_verified(): whether this session signed in with its second factor
    "django_otp.middleware.OTPMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

LANGUAGE_CODE = "en"  # the API speaks English; the display page chooses its own language
LANGUAGES = [("fr", "Français"), ("en", "English")]
TIME_ZONE = "Europe/Paris"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
