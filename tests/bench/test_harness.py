"""bench/harness.py's helpers: a section of bench/results/latest.md replaced alone, and the seeding
statements' parameters written in as literals."""

import pytest
from django.db import ProgrammingError, connection, transaction

from bench import harness

DOCUMENT = "# Benchmark\n\nintro\n\n## CPU\n\ncpu table\n\n## Noisy\n\nold noisy\n"


def test_a_section_is_replaced_up_to_the_next_heading_and_the_others_are_kept():
    document = DOCUMENT + "\n## Courier\n\nold courier\n"

    replaced = harness.section_replaced(document, "## Noisy", "## Noisy\n\nnew noisy\n")

    assert replaced == (
        "# Benchmark\n\nintro\n\n## CPU\n\ncpu table\n\n## Noisy\n\nnew noisy\n"
        "\n## Courier\n\nold courier\n"
    )


def test_the_last_section_is_replaced_to_the_end():
    replaced = harness.section_replaced(DOCUMENT, "## Noisy", "## Noisy\n\nnew\n")

    assert replaced == "# Benchmark\n\nintro\n\n## CPU\n\ncpu table\n\n## Noisy\n\nnew\n"


def test_a_missing_section_is_added_at_the_end():
    replaced = harness.section_replaced(DOCUMENT, "## Courier", "## Courier\n\nfirst\n")

    assert replaced == DOCUMENT + "\n## Courier\n\nfirst\n"


@pytest.mark.django_db
def test_literal_sql_runs_a_parameter_used_as_text_and_as_a_varchar_column():
    """The seeding statements' shape (bench/maintenance.py): bound by the server, as the service
    binds, PostgreSQL refuses it; with the parameters written in, it runs."""
    statement = (
        "INSERT INTO bench_literal (name) SELECT %(name)s WHERE 'prefix-' || %(name)s <> '' "
        "RETURNING name"
    )
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE bench_literal (name varchar(20))")
        with pytest.raises(ProgrammingError, match="inconsistent types"), transaction.atomic():
            cursor.execute(statement, {"name": "it's"})
        cursor.execute(harness.literal_sql(statement, {"name": "it's"}))
        assert cursor.fetchone() == ("it's",)
