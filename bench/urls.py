"""The service's URLs plus the trivial endpoint the round API is measured against."""

from django.urls import path

from bench.trivial import TrivialView
from config.urls import urlpatterns as service_urls

urlpatterns = [*service_urls, path("bench/trivial", TrivialView.as_view())]
