"""The pages' URL map, mounted at the root by config.urls: `/floor/...` and `/audit/...`."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
