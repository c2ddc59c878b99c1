"""The foreign keys' own indexes that a composite index already leads with (it serves their
joins and cascades: tests/core/test_redundant_indexes.py), dropped without blocking writes."""

import django.db.models.deletion
from django.db import migrations, models

from delivery.migration_operations import drop_indexes_concurrently

#: (index, table, column)
DROPPED = (
    (
        "dispatch_autodispatchrun_organization_id_77c9f7ff",
        "dispatch_autodispatchrun",
        "organization_id",
    ),
    ("dispatch_dispatchday_organization_id_eb651a78", "dispatch_dispatchday", "organization_id"),
    ("dispatch_driverzone_driver_id_cd81f275", "dispatch_driverzone", "driver_id"),
    ("dispatch_plan_organization_id_a4e6341e", "dispatch_plan", "organization_id"),
    ("dispatch_planleftout_plan_id_58d97787", "dispatch_planleftout", "plan_id"),
    ("dispatch_planroute_driver_id_f0194acd", "dispatch_planroute", "driver_id"),
    ("dispatch_planroute_plan_id_8901481d", "dispatch_planroute", "plan_id"),
    ("dispatch_planstop_plan_id_3ed7be86", "dispatch_planstop", "plan_id"),
    ("dispatch_planstop_route_id_aa0968d7", "dispatch_planstop", "route_id"),
)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("dispatch", "0005_planstop_fillfactor"),
        ("tenants", "0008_foreign_key_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="autodispatchrun",
                    name="organization",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="tenants.organization",
                    ),
                ),
                migrations.AlterField(
                    model_name="dispatchday",
                    name="organization",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="tenants.organization",
                    ),
                ),
                migrations.AlterField(
                    model_name="driverzone",
                    name="driver",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="served_zones",
                        to="tenants.driver",
                    ),
                ),
                migrations.AlterField(
                    model_name="plan",
                    name="organization",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="dispatch_plans",
                        to="tenants.organization",
                    ),
                ),
                migrations.AlterField(
                    model_name="planleftout",
                    name="plan",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="left_out",
                        to="dispatch.plan",
                    ),
                ),
                migrations.AlterField(
                    model_name="planroute",
                    name="driver",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="dispatch_routes",
                        to="tenants.driver",
                    ),
                ),
                migrations.AlterField(
                    model_name="planroute",
                    name="plan",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="routes",
                        to="dispatch.plan",
                    ),
                ),
                migrations.AlterField(
                    model_name="planstop",
                    name="plan",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="stops",
                        to="dispatch.plan",
                    ),
                ),
                migrations.AlterField(
                    model_name="planstop",
                    name="route",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="stops",
                        to="dispatch.planroute",
                    ),
                ),
            ],
            database_operations=drop_indexes_concurrently(DROPPED),
        ),
    ]
