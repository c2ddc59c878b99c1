"""Request bodies sent with `Transfer-Encoding: chunked` (no Content-Length).

Django reads a body up to its Content-Length and takes a missing one as 0: a chunked body would
be read as empty (a zone create answering `name is required`). Gunicorn decodes the chunks and
says so with `wsgi.input_terminated` (the input ends where the body ends); this middleware then
reads the body itself, at most one byte past the limit, and hands it on with its length, so the
body-size check (delivery.middleware.ApiErrorMiddleware) answers 413 for a chunked body as for
any other. A server that does not decode chunks gets 411: the body cannot be read safely.
"""

import io

from django.core.handlers.wsgi import LimitedStream

from delivery.errors import LengthRequired
from delivery.middleware import body_limit, error_response

READ_SIZE = 64 * 1024


def is_chunked(meta: dict) -> bool:
    encodings = meta.get("HTTP_TRANSFER_ENCODING", "").lower()
    return "chunked" in (part.strip() for part in encodings.split(","))


class ChunkedBodyMiddleware:
    """Reads a chunked body into the request with its length; 411 when the server cannot."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        meta = request.META
        if is_chunked(meta) and not meta.get("CONTENT_LENGTH"):
            if not meta.get("wsgi.input_terminated"):
                return error_response(LengthRequired())
            body = _read_at_most(meta["wsgi.input"], body_limit(request) + 1)
            meta["CONTENT_LENGTH"] = str(len(body))
            # What WSGIRequest builds from a Content-Length, over the bytes already read.
            request._stream = LimitedStream(io.BytesIO(body), len(body))
        return self.get_response(request)


def _read_at_most(stream, limit: int) -> bytes:
    parts, size = [], 0
    while size < limit:
        part = stream.read(min(READ_SIZE, limit - size))
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)
