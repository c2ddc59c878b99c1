"""bench/cpu.py reads the CPU of real processes from /proc (docs/performance.md, "CPU per
operation"): child processes that burn a known amount of CPU, no mocks."""

import subprocess
import sys
import time

from bench import cpu

# Once told to start (a line, or the end of its input), spins on the CPU for the given seconds,
# then waits to be told to exit.
BURN = """
import sys, time
sys.stdin.readline()
end = time.process_time() + float(sys.argv[1])
while time.process_time() < end:
    pass
print("done", flush=True)
sys.stdin.read()
"""

# Once told to start, runs a child that burns and reaps it, then waits: the child's CPU is now
# its parent's reaped children's CPU.
PARENT = """
import subprocess, sys
sys.stdin.readline()
subprocess.run([sys.executable, "-c", sys.argv[1], sys.argv[2]], stdin=subprocess.DEVNULL,
               stdout=subprocess.DEVNULL, check=True)
print("reaped", flush=True)
sys.stdin.read()
"""


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def _finish(process: subprocess.Popen) -> None:
    process.stdin.close()
    process.wait(timeout=10)


def _spent_while(groups: cpu.ProcessGroups, process=None, *, start=None) -> dict[str, float]:
    """Seconds per group from a snapshot taken while `process` waits (or before `start()` makes
    one) to the line the process prints once its work is done."""
    before = groups.snapshot()
    process = process or start()
    try:
        process.stdin.write("go\n")
        process.stdin.flush()
        assert process.stdout.readline().strip() in ("done", "reaped")
        return groups.snapshot() - before
    finally:
        _finish(process)


def test_a_process_that_burns_is_charged_what_it_burned():
    process = _start(BURN, "0.5")
    groups = cpu.ProcessGroups({"burner": cpu.Pids(lambda: [process.pid])})
    assert 0.4 <= _spent_while(groups, process)["burner"] <= 0.8


def test_a_tree_keeps_the_cpu_of_a_child_that_exited_and_was_reaped():
    parent = _start(PARENT, BURN, "0.4")
    groups = cpu.ProcessGroups(
        {"tree": cpu.Tree(parent.pid), "parent only": cpu.Pids(lambda: [parent.pid])}
    )
    spent = _spent_while(groups, parent)
    assert 0.3 <= spent["tree"] <= 0.8
    assert spent["parent only"] < 0.3  # without reaped children: the child's CPU is not its own


def test_a_process_that_started_between_the_readings_is_charged_all_of_its_cpu():
    started: list[int] = []
    groups = cpu.ProcessGroups({"late": cpu.Pids(lambda: started)})

    def start() -> subprocess.Popen:
        process = _start(BURN, "0.3")
        started.append(process.pid)
        return process

    assert 0.25 <= _spent_while(groups, start=start)["late"] <= 0.7


def test_a_tree_finds_the_descendants_of_its_roots():
    parent = _start(
        "import subprocess, sys; child = subprocess.Popen([sys.executable, '-c', "
        "'import sys; print(1, flush=True); sys.stdin.read()'], stdout=subprocess.PIPE); "
        "child.stdout.readline(); print(child.pid, flush=True); sys.stdin.read(); child.kill()"
    )
    try:
        child = int(parent.stdout.readline())
        deadline = time.monotonic() + 5
        while child not in cpu.Tree(parent.pid).pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cpu.Tree(parent.pid).pids() >= {parent.pid, child}
    finally:
        _finish(parent)


def test_per_operation_divides_each_group_and_adds_the_all_in_groups_only():
    spent = {"web": 0.2, "worker": 0.1, "pg": 0.05, "pg-bg": 0.5, "redis": 0.01}

    row = cpu.per_operation(spent, 10)

    assert row["web"] == 20.0
    assert row["pg-bg"] == 50.0
    assert round(row["all-in"], 6) == 36.0  # web + worker + pg + redis, not pg-bg


def test_per_operation_of_no_operation_counts_one():
    assert cpu.per_operation({"web": 0.01, "worker": 0, "pg": 0, "redis": 0}, 0)["all-in"] == 10.0
