"""Fair turns within one web process (docs/faults.md "Noisy neighbours").

A gthread worker hands every request it reads to a thread at once. Left alone, a tenant with
twenty connections then has twenty requests (and their PostgreSQL backends) competing for two
cores with another tenant's one, which gets a twentieth of the machine. Here each process runs
at most FAIR_RUNNING_PER_WORKER requests at once, and at most FAIR_RUNNING_PER_CALLER of one
caller (an organization and kind of caller, or every uncounted request together); the others
wait in their thread, using no CPU, and the next to run is the waiting request of the caller with
the fewest running here, the earliest among equals. So a flooding tenant's requests take their
turns one at a time per process, and another tenant's request finds a turn free (or the next one).

Waiting requests stay in flight (delivery/inflight.py counts them): the in-flight limit bounds
how many threads one caller can hold waiting.
"""

import contextlib
import threading
from collections import Counter

from django.conf import settings


class FairGate:
    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.running: Counter = Counter()
        self.waiting: list[tuple[object, object]] = []

    def _next(self, per_caller: int) -> object | None:
        """The ticket to run next: of the callers below `per_caller` running, the one with the
        fewest; the earliest waiting among equals (min keeps the first)."""
        allowed = [entry for entry in self.waiting if self.running[entry[0]] < per_caller]
        if not allowed:
            return None
        return min(allowed, key=lambda entry: self.running[entry[0]])[1]

    def enter(self, caller: object, *, slots: int, per_caller: int) -> None:
        ticket = object()
        with self.changed:
            self.waiting.append((caller, ticket))
            while sum(self.running.values()) >= slots or self._next(per_caller) is not ticket:
                self.changed.wait()
            self.waiting.remove((caller, ticket))
            self.running[caller] += 1
            # Another waiting caller may be next now (a free slot, under its own cap).
            self.changed.notify_all()

    def leave(self, caller: object) -> None:
        with self.changed:
            self.running[caller] -= 1
            if not self.running[caller]:
                del self.running[caller]
            self.changed.notify_all()


gate = FairGate()

# The caller whose turn this thread's request holds (set while it runs in its turn).
_holding = threading.local()


def _take_turn(caller: object) -> None:
    gate.enter(
        caller,
        slots=settings.FAIR_RUNNING_PER_WORKER,
        per_caller=max(1, settings.FAIR_RUNNING_PER_CALLER),
    )


def run(get_response, request, *, caller: object):
    """`get_response(request)` in its turn (at once when FAIR_RUNNING_PER_WORKER is 0)."""
    if not settings.FAIR_RUNNING_PER_WORKER:
        return get_response(request)
    _take_turn(caller)
    _holding.turn = (caller,)
    try:
        return get_response(request)
    finally:
        _holding.turn = None
        gate.leave(caller)


@contextlib.contextmanager
def turn_given_up():
    """For a request that waits for something outside this process (the Celery worker's attempt
    of a test webhook): its turn goes to the next request meanwhile, and it takes a turn again
    after. Otherwise a tenant's request waiting seconds would hold back its other requests in
    this worker for as long. Nothing happens outside a turn (a Celery task, a test)."""
    turn = getattr(_holding, "turn", None)
    if turn is None:
        yield
        return
    (caller,) = turn
    _holding.turn = None
    gate.leave(caller)
    try:
        yield
    finally:
        _take_turn(caller)
        _holding.turn = turn
