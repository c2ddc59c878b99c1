"""Fair turns in one web process and across the instance's processes (delivery/fairness.py;
docs/faults.md "Noisy neighbours")."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from django.test import RequestFactory

from delivery import fairness, inflight
from tenants.in_flight_limit import InFlightLimitMiddleware
from tests import builders
from tests.conftest import assert_error

FLOOD, QUIET = ("flood-org", "api-key"), ("quiet-org", "api-key")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def turns_of_this_test(settings, tmp_path):
    """Instance turns in a directory of this test's own (the shipped defaults otherwise)."""
    settings.FAIR_TURNS_DIR = str(tmp_path / "turns")
    settings.FAIR_INSTANCE_RUNNING_PER_CALLER = 1
    return settings.FAIR_TURNS_DIR


class Held:
    """A request of `caller` that runs until released (in its own thread)."""

    def __init__(self, gate: fairness.FairGate, caller, started: list) -> None:
        self.release = threading.Event()
        self.caller = caller

        def serve():
            gate.enter(caller, slots=2, per_caller=1)
            started.append(caller)
            self.release.wait(5)
            gate.leave(caller)

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()

    def finish(self) -> None:
        self.release.set()
        self.thread.join(5)


def wait_until(condition) -> None:
    deadline = time.monotonic() + 5
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_a_flooding_caller_runs_one_at_a_time_and_another_caller_finds_a_turn_free():
    gate, started = fairness.FairGate(), []
    floods = [Held(gate, FLOOD, started) for _ in range(3)]
    wait_until(lambda: len(gate.waiting) == 2)
    assert started == [FLOOD]

    quiet = Held(gate, QUIET, started)

    wait_until(lambda: len(started) == 2)
    assert started == [FLOOD, QUIET]
    for held in (*floods, quiet):
        held.finish()
    assert started == [FLOOD, QUIET, FLOOD, FLOOD]


def test_the_caller_with_fewest_running_goes_first_when_a_turn_frees():
    gate, started = fairness.FairGate(), []
    first, second = Held(gate, FLOOD, started), Held(gate, ("other-org", "api-key"), started)
    wait_until(lambda: len(started) == 2)
    waiting_flood = Held(gate, FLOOD, started)
    wait_until(lambda: len(gate.waiting) == 1)
    quiet = Held(gate, QUIET, started)  # came later, but has nothing running
    wait_until(lambda: len(gate.waiting) == 2)

    second.finish()

    wait_until(lambda: len(started) == 3)
    assert started[2] == QUIET
    for held in (first, waiting_flood, quiet):
        held.finish()


@pytest.mark.django_db
def test_requests_take_their_turn_through_the_middleware(organization, settings):
    settings.FAIR_RUNNING_PER_WORKER = 2
    settings.FAIR_RUNNING_PER_CALLER = 1
    issued = builders.api_key(organization)
    seen = []

    def view(request):
        seen.append(dict(fairness.gate.running))
        raise RuntimeError("boom")

    path = "/api/integrations/partner-a/orders/X"
    request = RequestFactory().get(path, HTTP_X_API_KEY=issued.value)
    with pytest.raises(RuntimeError):
        InFlightLimitMiddleware(view)(request)

    assert seen == [{(str(organization.id), "api-key"): 1}]
    assert not fairness.gate.running  # the turn was given back despite the exception


def test_a_request_waiting_outside_gives_its_turn_to_the_callers_next_request(settings):
    settings.FAIR_RUNNING_PER_WORKER = 2
    settings.FAIR_RUNNING_PER_CALLER = 1
    waiting, done, order = threading.Event(), threading.Event(), []

    def test_webhook(request):
        with fairness.turn_given_up():  # as webhooks/probes.py waits for the worker
            waiting.set()
            done.wait(5)
        order.append("test webhook answered")

    def list_keys(request):
        order.append("keys listed")

    first = threading.Thread(
        target=lambda: fairness.run(test_webhook, None, caller=QUIET), daemon=True
    )
    first.start()
    assert waiting.wait(5)
    fairness.run(list_keys, None, caller=QUIET)  # same caller, same worker: not held back
    done.set()
    first.join(5)

    assert order == ["keys listed", "test webhook answered"]
    assert not fairness.gate.running


def test_a_turn_not_free_in_time_is_given_up_and_the_next_caller_goes():
    gate, started = fairness.FairGate(), []
    running = [Held(gate, FLOOD, started), Held(gate, ("other-org", "api-key"), started)]
    wait_until(lambda: len(started) == 2)

    assert gate.enter(QUIET, slots=2, per_caller=1, timeout=0.05) is False
    assert not gate.waiting  # no ticket left behind to stand before others

    running[0].finish()
    assert gate.enter(QUIET, slots=2, per_caller=1, timeout=1) is True
    gate.leave(QUIET)
    running[1].finish()


class OtherWorker:
    """Another web process of the instance (a real OS process sharing the turns' directory),
    running one request of `caller` in its turn until told to finish."""

    SCRIPT = textwrap.dedent(
        """
        import sys
        from django.conf import settings

        settings.configure(
            FAIR_RUNNING_PER_WORKER=2,
            FAIR_RUNNING_PER_CALLER=1,
            FAIR_INSTANCE_RUNNING_PER_CALLER=1,
            FAIR_TURNS_DIR=sys.argv[1],
            FAIR_TURN_WAIT_SECONDS=10,
        )
        from delivery import fairness, inflight

        def request_running(request):
            print("running", flush=True)
            sys.stdin.readline()

        fairness.run(request_running, None, caller=(sys.argv[2], sys.argv[3]))
        print("done", flush=True)
        """
    )

    def __init__(self, turns_dir: str, caller) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", self.SCRIPT, turns_dir, *caller],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout.readline() == "running\n"

    def finish(self) -> None:
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline() == "done\n"
        assert self.process.wait(5) == 0

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(5)


class Request:
    """A request of `caller` served in this process, in its own thread, through fair turns."""

    def __init__(self, caller) -> None:
        self.started = threading.Event()
        self.thread = threading.Thread(
            target=lambda: fairness.run(lambda _: self.started.set(), None, caller=caller),
            daemon=True,
        )
        self.thread.start()

    def served(self, within: float) -> bool:
        return self.started.wait(within)


def test_a_callers_second_request_in_another_process_waits_and_another_caller_runs_at_once(
    settings, turns_of_this_test
):
    settings.FAIR_RUNNING_PER_WORKER = 2
    settings.FAIR_RUNNING_PER_CALLER = 1
    other_worker = OtherWorker(turns_of_this_test, FLOOD)
    try:
        flood = Request(FLOOD)
        quiet = Request(QUIET)

        assert quiet.served(within=2)
        assert not flood.served(within=0.3)  # its first request runs in the other process
        other_worker.finish()
        assert flood.served(within=2)
    finally:
        other_worker.process.kill()
    assert not fairness.gate.running


def test_a_killed_worker_holds_no_turn(settings, turns_of_this_test):
    settings.FAIR_RUNNING_PER_WORKER = 2
    other_worker = OtherWorker(turns_of_this_test, FLOOD)
    flood = Request(FLOOD)
    assert not flood.served(within=0.2)

    other_worker.kill()  # mid-request: the kernel frees its lock

    assert flood.served(within=2)


@pytest.mark.django_db
def test_a_request_that_finds_no_turn_in_time_answers_503_and_gives_its_place_back(
    organization, other_organization, settings, turns_of_this_test
):
    settings.FAIR_RUNNING_PER_WORKER = 2
    settings.FAIR_TURN_WAIT_SECONDS = 1
    caller = (str(organization.id), "api-key")
    # Another tenant has a request in flight: the organization is capped across the instance.
    other_place = inflight.acquire(organization_id=str(other_organization.id), kind="api-key")
    other_worker = OtherWorker(turns_of_this_test, caller)
    try:
        client = builders.partner_client(organization)
        started = time.monotonic()
        response = client.get("/api/integrations/partner-a/orders/NOPE-1")
        waited = time.monotonic() - started
    finally:
        other_worker.finish()

    assert_error(response, 503, "Service temporarily unavailable", code="service_unavailable")
    assert response["Retry-After"] == "1"
    assert 1 <= waited < 3
    assert inflight.in_flight(organization_id=caller[0], kind=inflight.API_KEY) == 0
    # Its turn free again, the next request is served.
    assert client.get("/api/integrations/partner-a/orders/NOPE-1").status_code == 404
    inflight.release(other_place)


@pytest.mark.django_db
def test_a_tenant_alone_in_flight_is_not_capped_across_the_instance(
    organization, settings, turns_of_this_test
):
    settings.FAIR_RUNNING_PER_WORKER = 2
    caller = (str(organization.id), "api-key")
    other_worker = OtherWorker(turns_of_this_test, caller)  # as if its own request ran there
    try:
        response = builders.partner_client(organization).get(
            "/api/integrations/partner-a/orders/NOPE-1"
        )
    finally:
        other_worker.finish()
    assert response.status_code == 404  # served at once: no other caller waits for anything


def test_a_request_waiting_outside_gives_its_instance_turn_to_the_callers_next_request(
    settings, turns_of_this_test
):
    settings.FAIR_RUNNING_PER_WORKER = 4
    settings.FAIR_RUNNING_PER_CALLER = 2  # only the instance turn holds the next one back
    waiting, done = threading.Event(), threading.Event()

    def test_webhook(request):
        with fairness.turn_given_up():
            waiting.set()
            done.wait(5)

    first = threading.Thread(
        target=lambda: fairness.run(test_webhook, None, caller=QUIET), daemon=True
    )
    first.start()
    assert waiting.wait(5)
    try:
        # Another process of the instance gets the caller's turn meanwhile.
        OtherWorker(turns_of_this_test, QUIET).finish()
    finally:
        done.set()
        first.join(5)
    assert not fairness.gate.running


def test_an_unusable_turns_directory_fails_open(settings, tmp_path, caplog):
    settings.FAIR_RUNNING_PER_WORKER = 2
    settings.FAIR_TURNS_DIR = str(tmp_path / "a-file")
    (tmp_path / "a-file").write_text("")  # not a directory
    served = []

    fairness.run(lambda _: served.append(True), None, caller=FLOOD)

    assert served == [True]
    assert "instance turns unavailable" in caplog.text
    assert not fairness.gate.running
