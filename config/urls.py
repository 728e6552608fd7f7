"""URL map: health, metrics, the jackpot sign, the API under /api/v1/, its OpenAPI schema and
docs, and the Django admin."""

from django.contrib import admin
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularSwaggerView

from config.handlers import json_404
from config.health import healthz
from config.monitoring import metrics_view
from config.schema import SchemaView
from core import openapi  # noqa: F401  (registers the schema extensions)
from floor.login import admin_login
from jackpot.sign.page import display_rules, display_rules_pdf, display_sign

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics_view, name="metrics"),  # not the API's: no schema (config.monitoring)
    path("display/<int:pool>/", display_sign, name="display"),
    # The progressive's rules as posted at the table, public like the sign (compliance 56).
    path("display/<int:pool>/rules", display_rules, name="display-rules"),
    path("display/<int:pool>/rules.pdf", display_rules_pdf, name="display-rules-pdf"),
    path("", include("floor.urls")),
    path("api/v1/", include("tables.api.urls")),
    path("api/v1/", include("jackpot.api.urls")),
    path("api/schema/", SchemaView.as_view(), name="schema"),  # built once per process
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("admin/login/", admin_login),  # throttled and logged; before the admin's own
    path("admin/", admin.site.urls),
    # Every unknown API path answers in the API's error shape, DEBUG or not.
    re_path(r"^api/", csrf_exempt(json_404)),
]

handler400 = "config.handlers.json_400"
handler404 = "config.handlers.json_404"
handler500 = "config.handlers.json_500"
