from django.apps import AppConfig


class ZonesConfig(AppConfig):
    name = "zones"
    default_auto_field = "django.db.models.BigAutoField"
