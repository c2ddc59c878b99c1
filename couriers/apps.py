from django.apps import AppConfig


class CouriersConfig(AppConfig):
    name = "couriers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the courier token's OpenAPI security scheme (drf-spectacular discovers
        # extensions on import) and connects the token's key-cache receivers.
        from couriers import schema, signals  # noqa: F401, PLC0415
