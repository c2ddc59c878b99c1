"""The foreign keys' own indexes that a composite index already leads with (it serves their
joins and cascades: tests/core/test_redundant_indexes.py), dropped without blocking writes."""

import django.db.models.deletion
from django.db import migrations, models

from delivery.migration_operations import drop_indexes_concurrently

#: (index, table, column)
DROPPED = (
    ("zones_place_organization_id_15f80fa4", "zones_place", "organization_id"),
    ("zones_zone_organization_id_da4333c0", "zones_zone", "organization_id"),
    ("zones_zoneblackout_zone_id_61a816b5", "zones_zoneblackout", "zone_id"),
)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("tenants", "0008_foreign_key_indexes"),
        ("zones", "0005_alter_gazetteerimport_id_alter_place_id_and_more"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="place",
                    name="organization",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="places",
                        to="tenants.organization",
                    ),
                ),
                migrations.AlterField(
                    model_name="zone",
                    name="organization",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="zones",
                        to="tenants.organization",
                    ),
                ),
                migrations.AlterField(
                    model_name="zoneblackout",
                    name="zone",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="blackouts",
                        to="zones.zone",
                    ),
                ),
            ],
            database_operations=drop_indexes_concurrently(DROPPED),
        ),
    ]
