"""The composition root: the top of the house, above every app (docs/architecture.md). It holds
the root URLconf (`service/urls.py`), which mounts every app; the settings, the WSGI application
and the Celery app stay in `delivery/`."""
