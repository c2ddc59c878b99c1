"""The foreign keys' own indexes where a composite index already leads with their column (it
serves their joins and cascades, tests/core/test_redundant_indexes.py): every insert and every
non-HOT update wrote them. Dropped without blocking writes (DROP INDEX CONCURRENTLY runs outside a
transaction, hence `atomic = False`)."""

import django.db.models.deletion
from django.db import migrations, models

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
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX CONCURRENTLY IF EXISTS {index}",
                    reverse_sql=f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {index} ON {table} ({column})",
                )
                for index, table, column in DROPPED
            ],
        ),
    ]
