"""Writes the figures of the last `make faults` (var/faults/last-run.json, which
tests/faults/conftest.py saves) into bench/results/latest.md, section "Faults", beside the
benchmark's: what a hanging webhook receiver does to another organization's deliveries and to
the web tier, and what the other faults cost (docs/faults.md says how each is measured).
`make faults` runs it when the fault tests it ran passed."""

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402 - after the path

FIGURES = ROOT / "var" / "faults" / "last-run.json"
LATEST = ROOT / "bench" / "results" / "latest.md"
HEADING = "## Faults (`make faults`)"


def _cell(value: object) -> str:
    text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return " ".join(text.replace("|", "/").split())  # one table cell: no pipe, no line break


def section(figures: dict[str, dict], commit: str, measured_at: datetime) -> str:
    """The "Faults" section of latest.md: per test, a table of the figures it measured."""
    lines = [
        HEADING,
        "",
        f"- date: {measured_at:%Y-%m-%d %H:%M} UTC; commit {commit}; every test below passed",
        "- method: tests/faults (docs/faults.md): a real gunicorn, Celery worker and beat on a "
        "PostgreSQL and Redis of their own, a real webhook receiver; each test's goal is its "
        "assertion, these are the figures it measured",
        "",
    ]
    for test, data in figures.items():
        lines.append(f"### {test}")
        lines.append("")
        lines.append("| figure | value |")
        lines.append("|---|---|")
        for name, value in data.items():
            lines.append(f"| {_cell(name)} | {_cell(value)} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    if not FIGURES.exists():
        print(f"no figures at {FIGURES}: run `make faults` first")
        return 1
    figures = json.loads(FIGURES.read_text())
    commit = harness.git_commit()
    document = LATEST.read_text() if LATEST.exists() else "# Benchmark: latest run\n"
    measured_at = datetime.fromtimestamp(FIGURES.stat().st_mtime, UTC)
    LATEST.write_text(
        harness.section_replaced(document, HEADING, section(figures, commit, measured_at))
    )
    print(f"fault figures written to {LATEST} ({HEADING})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
