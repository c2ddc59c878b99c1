"""bench/commits.py: each commit measured with its own code, and the ratios its table states."""

import subprocess

from bench import commits


def _medians(dbwrite: float, create: float, erp: float) -> dict[str, dict[str, float]]:
    row = {"web": 0.0, "worker": 0.0, "pg": 0.0, "redis": 0.0}
    medians = {name: {**row, "all-in": 1.0} for name in commits.NAMES}
    medians["dbwrite"]["all-in"] = dbwrite
    medians["create partner order"] = {**row, "web": 20.0, "worker": 9.5, "pg": 8.5}
    medians["create partner order"]["all-in"] = create
    medians["ERP booking 50 slots"]["all-in"] = erp
    return medians


def test_a_commit_s_line_divides_the_writes_by_its_own_dbwrite():
    table = commits.render([("a" * 40, "before", _medians(dbwrite=4.0, create=32.0, erp=30.0))])

    line = table.splitlines()[-1]
    assert line.startswith("| aaaaaaa | before |")
    assert "| 8.00x | 7.50x |" in line
    assert line.endswith("| 20.00 / 9.50 / 8.50 |")


def test_every_commit_gets_its_own_line_in_the_order_given():
    rows = [
        ("a" * 40, "before", _medians(dbwrite=4.0, create=24.0, erp=24.0)),
        ("b" * 40, "after", _medians(dbwrite=5.0, create=45.0, erp=40.0)),
    ]

    lines = commits.render(rows).splitlines()

    assert [line[:10] for line in lines[2:]] == ["| aaaaaaa ", "| bbbbbbb "]
    assert "| 6.00x | 6.00x |" in lines[2]
    assert "| 9.00x | 8.00x |" in lines[3]


def test_a_revision_is_cloned_at_its_own_commit(tmp_path):
    sha, path = commits.clone("HEAD", tmp_path)

    checked_out = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert checked_out == sha
    assert path == tmp_path / sha[:12]
