from django.apps import AppConfig

from jackpot.pools import at_rest


class TablesConfig(AppConfig):
    name = "tables"
    verbose_name = "Tables and rounds"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The progressive asks whether a pool is at rest without importing the tables; their
        # models load only once the app registry is ready, hence here.
        from tables.pools import POOL_TABLES

        at_rest.register(POOL_TABLES)
