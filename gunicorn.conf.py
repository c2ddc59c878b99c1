"""Gunicorn settings, shared by `make run`, `make bench` and docker-compose."""

import os

bind = os.environ.get("BIND", "127.0.0.1:8000")
# Sync workers: the service is classic synchronous Django; 2 cores here, so 4 workers.
workers = int(os.environ.get("WEB_CONCURRENCY", "4"))
worker_class = "sync"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
errorlog = "-"
