"""The foreign keys' own indexes that a composite index already leads with (it serves their
joins and cascades: tests/core/test_redundant_indexes.py), dropped without blocking writes."""

import django.db.models.deletion
from django.db import migrations, models

from delivery.migration_operations import drop_indexes_concurrently

#: (index, table, column)
DROPPED = (
    ("webhooks_delivery_organization_id_a565623c", "webhooks_delivery", "organization_id"),
    ("webhooks_deliveryattempt_delivery_id_a3a82286", "webhooks_deliveryattempt", "delivery_id"),
)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("tenants", "0008_foreign_key_indexes"),
        ("webhooks", "0005_alter_delivery_id_alter_event_id"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="delivery",
                    name="organization",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="tenants.organization",
                    ),
                ),
                migrations.AlterField(
                    model_name="deliveryattempt",
                    name="delivery",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="attempt_set",
                        to="webhooks.delivery",
                    ),
                ),
            ],
            database_operations=drop_indexes_concurrently(DROPPED),
        ),
    ]
