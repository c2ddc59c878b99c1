from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from webhooks import metrics  # noqa: PLC0415 (models are loaded only now)

        metrics.register()

        from celery.signals import worker_init  # noqa: PLC0415

        from webhooks import queueing  # noqa: PLC0415

        # The in-flight limit reads the worker's thread count (queueing.in_flight_limit).
        worker_init.connect(queueing.worker_attach, weak=False)
