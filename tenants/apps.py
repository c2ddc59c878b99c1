from django.apps import AppConfig


class TenantsConfig(AppConfig):
    name = "tenants"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the OpenAPI security schemes (drf-spectacular discovers extensions on import).
        # Connects the API-key cache invalidation to every save and delete of keys and orgs.
        from tenants import schema, signals  # noqa: F401, PLC0415
