"""The pages' URL map, mounted at the root by config.urls: `/floor/...` and `/audit/...`."""

from django.urls import URLPattern, path

from tables.pages import audit

urlpatterns: list[URLPattern] = [
    path("audit/pools/<int:pool>/", audit.audit_pool, name="audit-pool"),
]
