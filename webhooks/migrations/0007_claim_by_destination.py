"""A claim reads only its own destination's deliveries (webhooks/statements.py): indexes by key
of the due and the waiting ones, and the rule they stand on (a delivery has `next_attempt_at`
exactly while pending), added without blocking writes."""

from django.contrib.postgres.operations import (
    AddConstraintNotValid,
    AddIndexConcurrently,
    RemoveIndexConcurrently,
    ValidateConstraint,
)
from django.db import migrations, models

CONSTRAINT = "webhook_delivery_due_while_pending"


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("tenants", "0008_foreign_key_indexes"),
        ("webhooks", "0006_foreign_key_indexes"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="delivery",
            index=models.Index(
                condition=models.Q(("next_attempt_at__isnull", False)),
                fields=["api_key", "next_attempt_at", "id"],
                name="webhook_delivery_claimable",
            ),
        ),
        AddIndexConcurrently(
            model_name="delivery",
            index=models.Index(
                condition=models.Q(("next_attempt_at__isnull", False), ("queued_at__isnull", True)),
                fields=["api_key", "next_attempt_at", "id"],
                name="webhook_delivery_waiting",
            ),
        ),
        RemoveIndexConcurrently(model_name="delivery", name="webhook_delivery_parked"),
        AddConstraintNotValid(
            model_name="delivery",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("next_attempt_at__isnull", False), ("status", "pending")),
                    models.Q(
                        models.Q(("status", "pending"), _negated=True),
                        ("next_attempt_at__isnull", True),
                    ),
                    _connector="OR",
                ),
                name=CONSTRAINT,
            ),
        ),
        ValidateConstraint(model_name="delivery", name=CONSTRAINT),
    ]
