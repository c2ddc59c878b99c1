"""The foreign keys' own indexes that a composite index already leads with (it serves their
joins and cascades: tests/core/test_redundant_indexes.py), dropped without blocking writes."""

import django.db.models.deletion
from django.db import migrations, models

from delivery.migration_operations import drop_indexes_concurrently

#: (index, table, column)
DROPPED = (
    ("slots_slottemplate_organization_id_0d081b04", "slots_slottemplate", "organization_id"),
)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("slots", "0006_alter_slothold_id_alter_slotpolicy_id_and_more"),
        ("tenants", "0008_foreign_key_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="slottemplate",
                    name="organization",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="slot_templates",
                        to="tenants.organization",
                    ),
                ),
            ],
            database_operations=drop_indexes_concurrently(DROPPED),
        ),
    ]
