from django.db import migrations


class Migration(migrations.Migration):
    """Room on each page of orders for the new versions of their rows: an order is updated at
    every move and, on the road, at every ETA re-timing. With full pages each of those updates
    writes a new entry in every index of the table (not a heap-only update), which a year of
    history makes a random read per index (docs/performance.md, "History"). Takes effect for
    pages written from now on; the table is not rewritten."""

    dependencies = [
        ("integrations", "0008_alter_order_id"),
    ]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE integrations_order SET (fillfactor = 85)",
            reverse_sql="ALTER TABLE integrations_order RESET (fillfactor)",
        ),
    ]
