"""The contract's JSON error body for requests gunicorn refuses before Django sees them.

Gunicorn answers an over-long request line (414), too many or too large header fields (431), a
malformed header such as one with a NUL in its value (400) and other unparsable requests with
an HTML page written by `gunicorn.util.write_error`. Every one of those goes through that one
function, so gunicorn.conf.py replaces it (in the master, before the workers fork) with this
one: the same status, `{statusCode, message, error}` as JSON, and an `X-Request-Id`
(docs/contract.md "Errors"). The request's path is unknown when its line could not be read, so
every path gets JSON, not only `/api/` ones.
"""

import json
import uuid

from gunicorn import util

from delivery.versioning import API_VERSION, API_VERSION_HEADER

#: gunicorn's own messages echo the refused input; a client gets at most this much of it
MESSAGE_MAX_CHARS = 200


def write_json_error(sock, status_int: int, reason: str, mesg: str) -> None:
    message = (mesg or reason)[:MESSAGE_MAX_CHARS]
    body = json.dumps(
        {
            "statusCode": status_int,
            # A 400 carries its problems as an array, as Django's 400s do.
            "message": [message] if status_int == 400 else message,
            "error": reason,
        }
    ).encode()  # ASCII: json.dumps escapes everything else, NUL included
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"X-Request-Id: {uuid.uuid4().hex}\r\n"
        f"{API_VERSION_HEADER}: {API_VERSION}\r\n"
        "\r\n"
    ).encode("latin-1")
    util.write_nonblock(sock, head + body)


def install() -> None:
    util.write_error = write_json_error
