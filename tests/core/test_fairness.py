"""Fair turns within one web process (delivery/fairness.py; docs/faults.md "Noisy neighbours")."""

import threading
import time

import pytest
from django.test import RequestFactory

from delivery import fairness
from tenants.in_flight_limit import InFlightLimitMiddleware
from tests import builders

FLOOD, QUIET = ("flood-org", "api-key"), ("quiet-org", "api-key")


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
