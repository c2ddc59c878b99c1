from django.db import migrations


class Migration(migrations.Migration):
    """Room on each page of stops for the new versions of their rows: every location batch of a
    driver re-times the ETAs of the stops still ahead, so the same rows are updated all day.
    With full pages each update writes a new entry in every index of the table rather than a
    heap-only update (docs/performance.md, "History"). Takes effect for pages written from now
    on; the table is not rewritten."""

    dependencies = [
        ("dispatch", "0004_alter_dispatchpolicy_id_alter_plan_id_and_more"),
    ]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE dispatch_planstop SET (fillfactor = 80)",
            reverse_sql="ALTER TABLE dispatch_planstop RESET (fillfactor)",
        ),
    ]
