"""bench/faults_results.py: `make faults` writes what its tests measured into
bench/results/latest.md, section "Faults", and a full `make bench` keeps that section."""

from datetime import UTC, datetime

from bench import faults_results, harness

FIGURES = {
    "test_hanging_receiver[8-threads]": {
        "other organization's lag, median / max (ms)": "3 / 4",
        "hanging attempt errors": ["Timed out after 5 s"],
    },
    "test_postgres_restart": {"a | piped\nvalue": "x | y"},
}
AT = datetime(2026, 11, 27, 0, 30, tzinfo=UTC)


def test_each_test_gets_a_table_of_its_figures():
    section = faults_results.section(FIGURES, "c7f2438", AT)

    assert section.startswith("## Faults (`make faults`)\n\n- date: 2026-11-27 00:30 UTC; ")
    assert "### test_hanging_receiver[8-threads]\n\n| figure | value |\n|---|---|\n" in section
    assert "| other organization's lag, median / max (ms) | 3 / 4 |" in section
    assert "| hanging attempt errors | Timed out after 5 s |" in section
    # A pipe or a line break in a figure would break the table: neither reaches it.
    assert "| a / piped value | x / y |" in section


def test_a_full_benchmark_run_keeps_the_faults_section():
    section = faults_results.section(FIGURES, "c7f2438", AT)
    old = harness.section_replaced(
        "# Benchmark: latest run\n\n## CPU\n\nold\n", "## Faults (`make faults`)", section
    )
    new = "# Benchmark: latest run\n\n## CPU\n\nnew\n\n## Maintenance under load\n\nm\n"

    kept = harness.section_of(old, faults_results.HEADING)
    document = harness.section_kept(old, new, faults_results.HEADING)  # as bench/run.py does

    assert kept == section
    assert document == new + "\n" + section
    assert harness.section_of(document, "## CPU") == "## CPU\n\nnew\n"


def test_a_document_without_the_section_has_none_to_keep():
    assert harness.section_of("# Benchmark\n\n## CPU\n\nx\n", faults_results.HEADING) == ""


def test_a_previous_file_without_the_section_leaves_the_new_one_as_it_is():
    new = "# Benchmark: latest run\n\n## CPU\n\nnew\n"

    assert harness.section_kept("", new, faults_results.HEADING) == new
