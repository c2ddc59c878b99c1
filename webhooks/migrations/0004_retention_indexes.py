"""Indexes the retention tasks walk (webhooks/retention.py), built without blocking writes: the
outbox's tables are the largest of the service (CREATE INDEX CONCURRENTLY cannot run inside a
transaction, hence `atomic = False`)."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("webhooks", "0003_event_payload_encoder"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="event",
            index=models.Index(fields=["created_at", "id"], name="webhook_event_created"),
        ),
        AddIndexConcurrently(
            model_name="delivery",
            index=models.Index(
                condition=models.Q(("status", "delivered")),
                fields=["delivered_at", "id"],
                name="webhook_delivery_delivered",
            ),
        ),
        AddIndexConcurrently(
            model_name="delivery",
            index=models.Index(
                condition=models.Q(("status", "failed")),
                fields=["schedule_start", "id"],
                name="webhook_delivery_failed",
            ),
        ),
    ]
