from django.apps import AppConfig


class SlotsConfig(AppConfig):
    name = "slots"
    default_auto_field = "django.db.models.BigAutoField"
