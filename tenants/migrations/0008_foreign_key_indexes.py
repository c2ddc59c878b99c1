"""The foreign keys' own indexes where a composite index already leads with their column (it
serves their joins and cascades, tests/core/test_redundant_indexes.py): every insert and every
non-HOT update wrote them. Dropped without blocking writes (DROP INDEX CONCURRENTLY runs outside a
transaction, hence `atomic = False`)."""

import django.db.models.deletion
from django.db import migrations, models

#: (index, table, column)
DROPPED = (
    ("tenants_membership_organization_id_0a0b39ca", "tenants_membership", "organization_id"),
)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("tenants", "0007_alter_apikey_id_alter_authtoken_id_alter_driver_id_and_more"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="membership",
                    name="organization",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="memberships",
                        to="tenants.organization",
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
