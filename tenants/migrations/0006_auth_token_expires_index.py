"""The index the retention of management tokens walks (tenants.delete_expired_auth_tokens), built
without blocking logins (CREATE INDEX CONCURRENTLY cannot run inside a transaction)."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("tenants", "0005_driver_dispatch_fields"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="authtoken",
            index=models.Index(fields=["expires_at", "id"], name="auth_token_expires"),
        ),
    ]
