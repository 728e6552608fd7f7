"""The service's URLs plus the floors the round API is measured against (bench/trivial.py)."""

from django.urls import path

from bench.trivial import BareShapeView, RoundShapeView, TrivialView, django_shape
from config.urls import urlpatterns as service_urls

urlpatterns = [
    *service_urls,
    path("bench/trivial", TrivialView.as_view()),
    path(
        "bench/floor/tables/<int:table>/<str:step>/<int:statements>",
        RoundShapeView.as_view(),
    ),
    path("bench/floor/drf/tables/<int:table>/<str:step>/<int:statements>", BareShapeView.as_view()),
    path("bench/floor/django/<str:step>", django_shape),
]
