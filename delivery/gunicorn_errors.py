"""The contract's JSON error body for requests gunicorn refuses before Django sees them.

Gunicorn answers an over-long request line (414), too many or too large header fields (431), a
malformed header such as one with a NUL in its value (400) and other unparsable requests with
an HTML page written by `gunicorn.util.write_error`. Every one of those goes through that one
function, so gunicorn.conf.py replaces it (in the master, before the workers fork) with this
one: the same status, `{statusCode, message, error, code, requestId}` as JSON (docs/contract.md
"Errors"). No request id exists yet (Django makes it, and a client's `X-Request-Id` may not even
have been read), so one is made here, for the `X-Request-Id` header and the body alike. The
request's path is unknown when its line could not be read, so every path gets JSON, not only
`/api/` ones.
"""

import json
import uuid
from http import HTTPStatus

from gunicorn import util

from delivery.errors import (
    ExpectationFailed,
    Forbidden,
    HeaderFieldsTooLarge,
    InternalError,
    MalformedRequest,
    RequestLineTooLong,
    TransferCodingUnsupported,
    error_body,
    generic_code,
)
from delivery.versioning import API_VERSION, API_VERSION_HEADER

#: gunicorn's own messages echo the refused input; a client gets at most this much of it
MESSAGE_MAX_CHARS = 200

#: each status gunicorn answers itself (gunicorn.workers.base.Worker.handle_error) → its error
GUNICORN_ERRORS = {
    error.status_code: error
    for error in (
        MalformedRequest,
        Forbidden,
        RequestLineTooLong,
        ExpectationFailed,
        HeaderFieldsTooLarge,
        InternalError,
        TransferCodingUnsupported,
    )
}


def write_json_error(sock, status_int: int, reason: str, mesg: str) -> None:
    error = GUNICORN_ERRORS.get(status_int)
    if status_int == HTTPStatus.NOT_IMPLEMENTED:
        reason = HTTPStatus.NOT_IMPLEMENTED.phrase  # gunicorn keeps "Bad Request" for its 501
    message = (mesg or (error.default_message if error else reason))[:MESSAGE_MAX_CHARS]
    request_id = uuid.uuid4().hex
    body = json.dumps(
        error_body(
            status_int,
            # A 400 carries its problems as an array, as Django's 400s do.
            [message] if status_int == HTTPStatus.BAD_REQUEST else message,
            code=error.code if error else generic_code(status_int),
            request_id=request_id,
            # the status line's phrase, gunicorn's own ("URI Too Long")
            reason=reason,
        )
    ).encode()  # ASCII: json.dumps escapes everything else, NUL included
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"X-Request-Id: {request_id}\r\n"
        f"{API_VERSION_HEADER}: {API_VERSION}\r\n"
        "\r\n"
    ).encode("latin-1")
    util.write_nonblock(sock, head + body)


def install() -> None:
    util.write_error = write_json_error
