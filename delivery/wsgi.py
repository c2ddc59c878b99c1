import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "delivery.settings")


class WithoutBodyWhereNoneIsSent:
    """Sends no body for a HEAD request, nor for a 204 or 304 answer (RFC 9110).

    Django leaves that to the server (its test client and runserver drop it); gunicorn drops it
    too, but warns on every such request. Headers, Content-Length included, stay as Django made
    them, so a HEAD answer describes the GET one."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        statuses = []

        def start(status, headers, exc_info=None):
            statuses.append(status)
            return start_response(status, headers, exc_info)

        body = self.application(environ, start)
        status = statuses[-1][:3] if statuses else ""
        if environ.get("REQUEST_METHOD") == "HEAD" or status in ("204", "304"):
            return _NoBody(body)
        return body


class _NoBody:
    """An empty body that still closes the one Django made: its close() ends the request
    (request_finished: database connections are released there)."""

    def __init__(self, body):
        self.body = body

    def __iter__(self):
        return iter(())

    def close(self) -> None:
        close = getattr(self.body, "close", None)
        if close is not None:
            close()


application = WithoutBodyWhereNoneIsSent(get_wsgi_application())
