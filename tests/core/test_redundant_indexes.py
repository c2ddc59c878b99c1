"""No index repeats the leading columns of another index of its table (docs/performance.md
"Query paths and the indexes that serve them"): every insert and every non-HOT update writes each
index, and a foreign key's own index adds nothing where a composite index already leads with its
column (PostgreSQL uses that one for the joins and the cascades). So every foreign key still
leads an index, but one."""

import pytest
from django.apps import apps
from django.db import connection

from tests.core.conftest import APP_PACKAGES

pytestmark = pytest.mark.django_db


#: each plain (not unique, not partial, no expression) index and the other indexes of its table
#: whose leading columns, with the same operator classes, are the same columns
REDUNDANT = """
SELECT t.relname, ic.relname, other.relname
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_class t ON t.oid = i.indrelid
JOIN pg_index o ON o.indrelid = i.indrelid AND o.indexrelid <> i.indexrelid
JOIN pg_class other ON other.oid = o.indexrelid
WHERE t.relname = ANY(%(tables)s)
  AND NOT i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
  AND o.indpred IS NULL AND o.indexprs IS NULL
  AND i.indnkeyatts <= o.indnkeyatts
  AND (o.indkey::int2[])[0:i.indnkeyatts - 1] = (i.indkey::int2[])[0:i.indnkeyatts - 1]
  AND (o.indclass::oid[])[0:i.indnkeyatts - 1] = (i.indclass::oid[])[0:i.indnkeyatts - 1]
ORDER BY 1, 2, 3
"""


#: each foreign key (of one column) that leads no index but a partial one
UNINDEXED_FOREIGN_KEYS = """
SELECT c.conrelid::regclass::text, a.attname
FROM pg_constraint c
JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
WHERE c.contype = 'f' AND cardinality(c.conkey) = 1
  AND c.conrelid::regclass::text = ANY(%(tables)s)
  AND NOT EXISTS (
    SELECT FROM pg_index i
    WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1] AND i.indpred IS NULL
  )
ORDER BY 1, 2
"""


def rows(statement: str) -> list[tuple]:
    """The statement's rows over the tables of our apps' models."""
    ours = [config for config in apps.get_app_configs() if config.name in APP_PACKAGES]
    tables = [model._meta.db_table for config in ours for model in config.get_models()]
    with connection.cursor() as cursor:
        cursor.execute(statement, {"tables": tables})
        return cursor.fetchall()


def test_no_index_repeats_the_leading_columns_of_another():
    assert rows(REDUNDANT) == []


def test_every_foreign_key_leads_an_index_but_the_order_s_creating_key():
    # integrations.Order.api_key: keys are revoked, never deleted (the model says why).
    assert rows(UNINDEXED_FOREIGN_KEYS) == [("integrations_order", "api_key_id")]


def test_a_repeated_index_is_found():
    # The check above can fail: a plain index on the leading column of a composite one.
    with connection.cursor() as cursor:
        cursor.execute("CREATE INDEX probe_repeat ON integrations_order (organization_id)")
    assert ("integrations_order", "probe_repeat", "order_org_created") in rows(REDUNDANT)


def test_the_order_s_tracking_token_has_no_like_copy_of_its_unique_index():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'integrations_order'"
            " AND indexdef LIKE '%%tracking_token%%'"
        )
        (definition,) = (row[0] for row in cursor.fetchall())
    assert definition.startswith("CREATE UNIQUE INDEX integrations_order_tracking_token_key ")
