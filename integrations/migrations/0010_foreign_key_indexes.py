"""The foreign keys' own indexes that a composite index already leads with (it serves their
joins and cascades: tests/core/test_redundant_indexes.py), dropped without blocking writes."""

import django.db.models.deletion
from django.db import migrations, models

from delivery.migration_operations import drop_indexes_concurrently

#: (index, table, column)
DROPPED = (
    (
        "integrations_orderstatusevent_order_id_4555d8eb",
        "integrations_orderstatusevent",
        "order_id",
    ),
)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("integrations", "0009_order_fillfactor"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="orderstatusevent",
                    name="order",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="status_events",
                        to="integrations.order",
                    ),
                ),
            ],
            database_operations=drop_indexes_concurrently(DROPPED),
        ),
    ]
