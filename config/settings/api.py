"""The HTTP API's framework settings: DRF (strict JSON in, the one error shape out, the throttle
rates of each scope), the request size limit, and drf-spectacular's OpenAPI 3.1 schema.

Invariants: no authentication or permission is on by default (each view declares its own); the
client's address is REMOTE_ADDR unless NUM_PROXIES says how many proxies add to X-Forwarded-For,
so a forged header cannot dodge a per-address throttle; the schema's enum names are pinned
(ENUM_NAME_OVERRIDES), so a new shape cannot rename a published component.
"""

from config.settings.env import env_str

# Terminals post small JSON bodies; anything larger is refused before it is parsed.
DATA_UPLOAD_MAX_MEMORY_SIZE = 64 * 1024

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.parsers.StrictJSONParser"],
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "EXCEPTION_HANDLER": "config.handlers.api_exception_handler",
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_str("THROTTLE_ANON", "600/min"),
        "rules": env_str("THROTTLE_RULES", "1200/min"),
        "terminal": env_str("THROTTLE_TERMINAL", "6000/min"),
        # Per person (per address for the schema): the staff's reads that take seconds
        # (core.throttling.HeavyReadThrottle).
        "heavy_read": env_str("THROTTLE_HEAVY_READ", "60/min"),
    },
    "UNAUTHENTICATED_USER": None,
    # How many proxies in front of the service add to X-Forwarded-For: 0 means the client's
    # address is REMOTE_ADDR and a forged header cannot dodge the per-address throttle.
    "NUM_PROXIES": int(env_str("NUM_PROXIES", "0")),
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Progressive jackpot service",
    "DESCRIPTION": "Ultimate Texas Hold'em and Stud Poker rules engine and the progressive ledger.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # JSON Schema 2020-12, pydantic's dialect: a null is said as strict validators read it
    # (core/openapi.py; OpenAPI 3.0's `nullable` beside a lone `$ref` meant nothing).
    "OAS_VERSION": "3.1.0",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.schema.add_error_responses",
    ],
    # A decision's `action` is a one-value enum in each of its shapes: one name per value.
    # A round's state is one enum wherever it appears (a round, the round list and its filter).
    "ENUM_NAME_OVERRIDES": {
        "FoldActionEnum": ["fold"],
        "PlayActionEnum": ["play"],
        "RoundStateEnum": ["open", "settled", "void"],
    },
    # Swagger UI's files are served from the installed package: no internet at run time.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}
