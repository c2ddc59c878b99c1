"""What the proof-file and unused-photo retention record (couriers/services/retention.py):
nullable columns without a default, which PostgreSQL adds without rewriting the tables."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("couriers", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="courierphoto",
            name="seen_in_use_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="stopproof",
            name="files_removed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
