from django.apps import AppConfig


class JackpotConfig(AppConfig):
    name = "jackpot"
    verbose_name = "Progressive jackpot"
    default_auto_field = "django.db.models.BigAutoField"
