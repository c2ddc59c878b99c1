from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from webhooks import metrics  # noqa: PLC0415 (models are loaded only now)

        metrics.register()
