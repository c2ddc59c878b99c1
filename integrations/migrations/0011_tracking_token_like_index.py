"""An order's tracking token is unique by a constraint of the name its `unique=True` gave the
database (`integrations_order_tracking_token_key`), so the database keeps that index as it is and
loses only the LIKE copy (`varchar_pattern_ops`) Django adds beside a unique varchar: every order
insert wrote it and no query reads it. Dropped without blocking writes (DROP INDEX CONCURRENTLY
runs outside a transaction, hence `atomic = False`)."""

from django.db import migrations, models

import integrations.models

LIKE_INDEX = "integrations_order_tracking_token_6d39e406_like"


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("integrations", "0010_foreign_key_indexes"),
        ("tenants", "0008_foreign_key_indexes"),
        ("zones", "0006_foreign_key_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="order",
                    name="tracking_token",
                    field=models.CharField(
                        default=integrations.models.new_tracking_token,
                        editable=False,
                        max_length=64,
                    ),
                ),
                migrations.AddConstraint(
                    model_name="order",
                    constraint=models.UniqueConstraint(
                        fields=("tracking_token",), name="integrations_order_tracking_token_key"
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX CONCURRENTLY IF EXISTS {LIKE_INDEX}",
                    reverse_sql=f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {LIKE_INDEX} "
                    "ON integrations_order (tracking_token varchar_pattern_ops)",
                ),
            ],
        ),
    ]
