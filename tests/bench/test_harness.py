"""bench/harness.py's pure helpers: a section of bench/results/latest.md replaced alone."""

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
