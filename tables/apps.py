from django.apps import AppConfig


class TablesConfig(AppConfig):
    name = "tables"
    verbose_name = "Tables and rounds"
    default_auto_field = "django.db.models.BigAutoField"
