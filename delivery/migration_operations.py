"""Migration operations several apps' migrations use (they import this module by name: keep its
functions as they are)."""

from django.db import migrations


def drop_indexes_concurrently(indexes: tuple[tuple[str, str, str], ...]) -> list:
    """`DROP INDEX CONCURRENTLY` of each (index, table, column), reversed by `CREATE INDEX
    CONCURRENTLY`: writes never wait for it. Its migration sets `atomic = False` (neither runs in
    a transaction)."""
    return [
        migrations.RunSQL(
            f"DROP INDEX CONCURRENTLY IF EXISTS {index}",
            reverse_sql=f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {index} ON {table} ({column})",
        )
        for index, table, column in indexes
    ]
