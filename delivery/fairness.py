"""Fair turns (docs/faults.md "Noisy neighbours"): within one web process, and across every
process of the instance.

A gthread worker hands every request it reads to a thread at once. Left alone, a tenant with
twenty connections then has twenty requests (and their PostgreSQL backends) competing for two
cores with another tenant's one, which gets a twentieth of the machine. So a request runs only in
its turn, taken in two steps:

1. An instance turn: at most FAIR_INSTANCE_RUNNING_PER_CALLER requests of one caller (an
   organization and kind of caller) run at once across every worker process of this instance
   (InstanceTurns: an exclusive `flock` on one of the caller's files in FAIR_TURNS_DIR). Per
   worker alone, a flooding tenant still ran one request in each of the 4 workers beside the
   quiet tenant's one. Only while another caller has requests in flight (the middleware knows
   from the in-flight count): a tenant alone takes nothing from anyone, and keeps every worker.
2. A turn in its process (FairGate): at most FAIR_RUNNING_PER_WORKER requests at once, and at
   most FAIR_RUNNING_PER_CALLER of one caller (every uncounted request together); the next to run
   is the waiting request of the caller with the fewest running here, the earliest among equals.

Both waits use no CPU, and always in that order (no request holds a process turn while waiting
for an instance turn, so no two wait for each other). A request that finds no turn within
FAIR_TURN_WAIT_SECONDS gets TurnNotFree (a 503, tenants/in_flight_limit.py). Waiting requests
stay in flight (delivery/inflight.py counts them): the in-flight limit bounds how many threads
one caller can hold waiting.
"""

import contextlib
import fcntl
import functools
import hashlib
import logging
import os
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass

from django.conf import settings

logger = logging.getLogger(__name__)


class TurnNotFree(Exception):
    """No turn came free for the request within FAIR_TURN_WAIT_SECONDS."""


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

    def enter(
        self, caller: object, *, slots: int, per_caller: int, timeout: float | None = None
    ) -> bool:
        """Waits for the caller's turn here: True once it runs, False after `timeout` seconds
        without one (None: no bound)."""
        ticket = object()
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.changed:
            self.waiting.append((caller, ticket))
            while sum(self.running.values()) >= slots or self._next(per_caller) is not ticket:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    self.waiting.remove((caller, ticket))
                    # The caller it stood before may be next now.
                    self.changed.notify_all()
                    return False
                self.changed.wait(left)
            self.waiting.remove((caller, ticket))
            self.running[caller] += 1
            # Another waiting caller may be next now (a free slot, under its own cap).
            self.changed.notify_all()
            return True

    def leave(self, caller: object) -> None:
        with self.changed:
            self.running[caller] -= 1
            if not self.running[caller]:
                del self.running[caller]
            self.changed.notify_all()


gate = FairGate()


def _open_for_locking(path: str) -> int:
    # A descriptor of its own per attempt: flock locks belong to an open file description, so
    # two threads of one process contend as two processes do.
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)


def _unlock(descriptor: int) -> None:
    # LOCK_UN first: it frees the lock even if a fork copied the descriptor meanwhile.
    try:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


class _LockWait:
    """Waits for the first of several files to be locked: one thread blocked in `flock` per file
    (a blocking flock cannot be given a timeout or be interrupted from another thread, so the
    request thread waits on an Event instead). A lock won after the first, or after the request
    gave up, is let go at once."""

    def __init__(self, paths: list[str]) -> None:
        self.decided = threading.Lock()
        self.won = threading.Event()
        self.descriptor: int | None = None
        self.abandoned = False
        for path in paths:
            threading.Thread(
                target=self._lock, args=(path,), daemon=True, name="fair-turn-wait"
            ).start()

    def _lock(self, path: str) -> None:
        descriptor = _open_for_locking(path)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        except OSError:
            os.close(descriptor)
            return
        with self.decided:
            if self.descriptor is None and not self.abandoned:
                self.descriptor = descriptor
                self.won.set()
                return
        _unlock(descriptor)

    def result(self, timeout: float) -> int | None:
        self.won.wait(max(0.0, timeout))
        with self.decided:
            self.abandoned = True
            return self.descriptor


class InstanceTurns:
    """At most `per_caller` running requests of one caller across every process that shares
    `directory` (this instance's workers). A turn is an exclusive flock on one of the caller's
    `per_caller` files there; the kernel frees it when its holder closes it or dies, so a killed
    worker holds no turn, and a blocked flock waits without the GIL or CPU."""

    def __init__(self, directory: str, per_caller: int) -> None:
        self.directory = directory
        self.per_caller = per_caller
        os.makedirs(directory, exist_ok=True)

    def paths(self, caller: object) -> list[str]:
        # A digest: the caller's parts come from a request, never from a file name.
        name = hashlib.sha256(repr(caller).encode()).hexdigest()[:32]
        return [os.path.join(self.directory, f"{name}.{n}") for n in range(self.per_caller)]

    def take(self, caller: object, *, timeout: float) -> int | None:
        """The descriptor holding one of the caller's turns (give it to `give_back`), or None
        when none came free within `timeout` seconds."""
        paths = self.paths(caller)
        random.shuffle(paths)  # spreads a caller's requests over its files
        for path in paths:
            descriptor = _open_for_locking(path)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(descriptor)
                continue
            return descriptor
        return _LockWait(paths).result(timeout)

    @staticmethod
    def give_back(descriptor: int) -> None:
        _unlock(descriptor)


@functools.lru_cache(maxsize=4)
def _instance_turns(directory: str, per_caller: int) -> InstanceTurns:
    return InstanceTurns(directory, per_caller)


@dataclass(frozen=True)
class Turn:
    """What a running request holds: its caller's turn in this process, and the descriptor of
    its instance turn (None: not capped in the instance, not counted, or instance turns off)."""

    caller: object
    capped_in_instance: bool
    instance_turn: int | None


# The turn this thread's request holds (set while it runs in its turn).
_holding = threading.local()


def _take_turn(caller: object, *, capped_in_instance: bool) -> Turn:
    """Waits for an instance turn (when capped), then for a turn in this process,
    FAIR_TURN_WAIT_SECONDS at most for both; TurnNotFree after that."""
    deadline = time.monotonic() + settings.FAIR_TURN_WAIT_SECONDS
    instance_turn = None
    per_instance = max(0, settings.FAIR_INSTANCE_RUNNING_PER_CALLER)
    if caller is not None and capped_in_instance and per_instance:
        try:
            turns = _instance_turns(str(settings.FAIR_TURNS_DIR), per_instance)
            instance_turn = turns.take(caller, timeout=deadline - time.monotonic())
        except OSError as exc:
            # The directory unusable (permissions, no descriptors left): not capped, as the
            # in-flight limit fails open when Redis is away.
            logger.error("fair turns: instance turns unavailable, not capped: %s", exc)
        else:
            if instance_turn is None:
                raise TurnNotFree()
    entered = gate.enter(
        caller,
        slots=settings.FAIR_RUNNING_PER_WORKER,
        per_caller=max(1, settings.FAIR_RUNNING_PER_CALLER),
        timeout=deadline - time.monotonic(),
    )
    if not entered:
        if instance_turn is not None:
            InstanceTurns.give_back(instance_turn)
        raise TurnNotFree()
    return Turn(caller=caller, capped_in_instance=capped_in_instance, instance_turn=instance_turn)


def _give_back(turn: Turn) -> None:
    gate.leave(turn.caller)
    if turn.instance_turn is not None:
        InstanceTurns.give_back(turn.instance_turn)


def run(get_response, request, *, caller: object, capped_in_instance: bool = True):
    """`get_response(request)` in its turn (at once when FAIR_RUNNING_PER_WORKER is 0); raises
    TurnNotFree when no turn came free in time."""
    if not settings.FAIR_RUNNING_PER_WORKER:
        return get_response(request)
    _holding.turn = _take_turn(caller, capped_in_instance=capped_in_instance)
    try:
        return get_response(request)
    finally:
        # turn_given_up may have found no turn again: then there is none to give back.
        held, _holding.turn = getattr(_holding, "turn", None), None
        if held is not None:
            _give_back(held)


@contextlib.contextmanager
def turn_given_up():
    """For a request that waits for something outside this process (the Celery worker's attempt
    of a test webhook): its turns (in the instance and in this process) go to the next request
    meanwhile, and it takes them again after. Otherwise a tenant's request waiting seconds would
    hold back its other requests for as long. Nothing happens outside a turn (a Celery task, a
    test). Should no turn come free again in time, the request finishes without one: all it has
    left to do is its response."""
    turn = getattr(_holding, "turn", None)
    if turn is None:
        yield
        return
    _holding.turn = None
    _give_back(turn)
    try:
        yield
    finally:
        try:
            _holding.turn = _take_turn(turn.caller, capped_in_instance=turn.capped_in_instance)
        except TurnNotFree:
            logger.warning("fair turns: no turn again after waiting outside; finishing without")
