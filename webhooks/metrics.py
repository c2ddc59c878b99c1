"""The webhooks' scrape-time metrics (delivery/metrics.py serves them at `/metrics`)."""

import logging

from django.db import DatabaseError
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily

from delivery import metrics
from webhooks.models import Delivery, DeliveryStatus

logger = logging.getLogger("delivery.metrics")


class DueDeliveriesCollector:
    """`webhook_deliveries_due`: pending deliveries whose next attempt is due, counted at scrape
    time in one query on the partial index `webhook_delivery_due`."""

    def collect(self):
        gauge = GaugeMetricFamily(
            "webhook_deliveries_due",
            "Pending webhook deliveries whose next attempt is due now (the queue depth)",
        )
        try:
            due = Delivery.objects.filter(
                status=DeliveryStatus.PENDING, next_attempt_at__lte=timezone.now()
            ).count()
        except DatabaseError as error:
            logger.error("metrics: due deliveries not counted: %s", error.__class__.__name__)
            return
        gauge.add_metric([], due)
        yield gauge


def register() -> None:
    """Called from WebhooksConfig.ready: the due deliveries first, then the attempts (the order
    of `/metrics`)."""
    metrics.register_scrape_time(DueDeliveriesCollector())
    metrics.register_scrape_time(metrics.WebhookAttemptsCollector())
