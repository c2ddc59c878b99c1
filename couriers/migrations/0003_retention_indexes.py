"""Indexes the couriers' retention tasks walk, built without blocking writes (CREATE INDEX
CONCURRENTLY cannot run inside a transaction, hence `atomic = False`): the trail takes every
driver's positions all day."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("couriers", "0002_retention_fields"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="courierphoto",
            index=models.Index(
                condition=models.Q(("seen_in_use_at__isnull", True)),
                fields=["created_at", "id"],
                name="courier_photo_unseen",
            ),
        ),
        AddIndexConcurrently(
            model_name="stopproof",
            index=models.Index(
                condition=models.Q(("files_removed_at__isnull", True)),
                fields=["created_at", "id"],
                name="stop_proof_files_kept",
            ),
        ),
        AddIndexConcurrently(
            model_name="locationpoint",
            index=models.Index(fields=["at", "id"], name="location_point_at"),
        ),
    ]
