"""Loaded by the fault tests' service processes (PYTHONPATH): on SIGRTMIN+3 every process dumps
the stack of each of its threads to stderr (its log), so a test that finds the service stuck can
show where. gunicorn and Celery leave this signal alone."""

import faulthandler
import signal

faulthandler.register(signal.SIGRTMIN + 3, all_threads=True)
