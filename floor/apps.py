from django.apps import AppConfig


class FloorConfig(AppConfig):
    """The staff's pages: no models of its own, it reads and writes through the apps below."""

    name = "floor"
    verbose_name = "The staff's pages"
