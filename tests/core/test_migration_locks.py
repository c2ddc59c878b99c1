"""The storage migrations of a year's tables take no lock a request waits for (issue 29: "the
migrations apply on the loaded database without a long lock"). A request's INSERT, UPDATE or
DELETE holds ROW EXCLUSIVE on its table, a read ACCESS SHARE; `ALTER TABLE ... SET
(fillfactor)` takes SHARE UPDATE EXCLUSIVE, which conflicts with neither, so it neither waits
for an open request nor makes one wait. Checked with the migrations' own statements on two
connections of their own, each with a lock timeout that turns a wait into an error."""

import importlib

import psycopg
import pytest
from django.db import connection
from psycopg import sql

pytestmark = pytest.mark.django_db(transaction=True)

STORAGE_MIGRATIONS = (
    ("integrations.migrations.0009_order_fillfactor", "integrations_order"),
    ("dispatch.migrations.0005_planstop_fillfactor", "dispatch_planstop"),
)


def statement(module: str) -> str:
    (operation,) = importlib.import_module(module).Migration.operations
    return operation.sql


def on(table: str, text: str) -> sql.Composed:
    return sql.SQL(text).format(sql.Identifier(table))


def session() -> psycopg.Connection:
    settings = connection.settings_dict
    return psycopg.connect(
        dbname=settings["NAME"],
        user=settings["USER"],
        password=settings["PASSWORD"] or None,
        host=settings["HOST"] or None,
        port=settings["PORT"] or None,
    )


@pytest.mark.parametrize(("module", "table"), STORAGE_MIGRATIONS)
def test_the_migration_does_not_wait_for_a_request_writing_the_table(module, table):
    with session() as request, session() as migration:
        request.execute(on(table, "LOCK TABLE {} IN ROW EXCLUSIVE MODE"))  # as its UPDATE does
        migration.execute("SET lock_timeout = '2s'")
        migration.execute(statement(module))  # raises LockNotAvailable if it had to wait
        migration.commit()
        request.rollback()


@pytest.mark.parametrize(("module", "table"), STORAGE_MIGRATIONS)
def test_a_request_does_not_wait_for_the_migration(module, table):
    with session() as migration, session() as request:
        migration.execute(statement(module))  # its transaction stays open, lock held
        request.execute("SET lock_timeout = '2s'")
        request.execute(on(table, "SELECT count(*) FROM {}"))
        request.execute(on(table, "LOCK TABLE {} IN ROW EXCLUSIVE MODE"))  # as an INSERT does
        request.rollback()
        migration.rollback()


def test_a_lock_a_request_would_wait_for_is_caught():
    # The check above can fail: a table rewrite (ACCESS EXCLUSIVE) waits for the request.
    with session() as request, session() as migration:
        request.execute("LOCK TABLE integrations_order IN ROW EXCLUSIVE MODE")
        migration.execute("SET lock_timeout = '200ms'")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            migration.execute("ALTER TABLE integrations_order ADD COLUMN probe integer")
        migration.rollback()
        request.rollback()
