"""The foreign keys' own indexes that a composite index already leads with (it serves their
joins and cascades: tests/core/test_redundant_indexes.py), dropped without blocking writes."""

import django.db.models.deletion
from django.db import migrations, models

from delivery.migration_operations import drop_indexes_concurrently

#: (index, table, column)
DROPPED = (
    ("couriers_courierevent_order_id_19bf066e", "couriers_courierevent", "order_id"),
    ("couriers_stopproof_order_id_59f68c00", "couriers_stopproof", "order_id"),
)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("couriers", "0004_alter_courierphoto_id_alter_stopproof_id"),
        ("integrations", "0010_foreign_key_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="courierevent",
                    name="order",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="courier_events",
                        to="integrations.order",
                    ),
                ),
                migrations.AlterField(
                    model_name="stopproof",
                    name="order",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="stop_proofs",
                        to="integrations.order",
                    ),
                ),
            ],
            database_operations=drop_indexes_concurrently(DROPPED),
        ),
    ]
