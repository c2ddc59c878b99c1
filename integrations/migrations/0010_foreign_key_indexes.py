"""The foreign keys' own indexes where a composite index already leads with their column (it
serves their joins and cascades, tests/core/test_redundant_indexes.py): every insert and every
non-HOT update wrote them. Dropped without blocking writes (DROP INDEX CONCURRENTLY runs outside a
transaction, hence `atomic = False`)."""

import django.db.models.deletion
from django.db import migrations, models

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
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX CONCURRENTLY IF EXISTS {index}",
                    reverse_sql=f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {index} ON {table} ({column})",
                )
                for index, table, column in DROPPED
            ],
        ),
    ]
