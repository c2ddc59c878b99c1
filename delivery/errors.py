"""The one error vocabulary of the service (contract "Errors").

Every error a service or view raises is an ApplicationError; the exception handler renders it as
`{statusCode, message, error, code, requestId}`. Apps subclass these in their own `errors.py`.

`code` is the stable, machine-readable name of what went wrong (docs/contract.md "Errors" lists
every one): each class names its own, a subclass restating its parent's only where the meaning
is the same. The errors below the base classes are the ones the HTTP layer itself makes (a body
that is not JSON, an unknown Host, a crash), so those bodies carry a code of this vocabulary too.
"""

from http import HTTPStatus


class ApplicationError(Exception):
    """`str(error)` is the message, a list's entries joined by "; " (as admin messages show it)."""

    status_code: int = HTTPStatus.BAD_REQUEST
    default_message: str = "Bad request"
    code: str = "bad_request"

    def __init__(self, message: str | list[str] | None = None, *, headers: dict | None = None):
        self.message = message if message is not None else self.default_message
        self.headers = headers or {}
        super().__init__(self.message if isinstance(self.message, str) else "; ".join(self.message))


class BadRequest(ApplicationError):
    status_code = HTTPStatus.BAD_REQUEST
    code = "bad_request"


class ValidationFailed(BadRequest):
    """A 400 whose message is always an array: one entry per problem, each naming its field."""

    code = "validation_failed"

    def __init__(self, messages: list[str] | str):
        super().__init__([messages] if isinstance(messages, str) else list(messages))


class Unauthorized(ApplicationError):
    status_code = HTTPStatus.UNAUTHORIZED
    default_message = "Unauthorized"
    code = "unauthorized"


class Forbidden(ApplicationError):
    status_code = HTTPStatus.FORBIDDEN
    default_message = "Forbidden"
    code = "forbidden"


class NotFound(ApplicationError):
    status_code = HTTPStatus.NOT_FOUND
    default_message = "Not found"
    code = "not_found"


class Conflict(ApplicationError):
    status_code = HTTPStatus.CONFLICT
    default_message = "Conflict"
    code = "conflict"


class PayloadTooLarge(ApplicationError):
    status_code = HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    default_message = "Request body must not exceed 1 MiB"
    code = "payload_too_large"


class LengthRequired(ApplicationError):
    """A chunked body the server in front of us did not decode (delivery/chunked.py)."""

    status_code = HTTPStatus.LENGTH_REQUIRED
    default_message = "Length Required: send a Content-Length header with the request body"
    code = "length_required"


class UnprocessableEntity(ApplicationError):
    status_code = HTTPStatus.UNPROCESSABLE_ENTITY
    default_message = "Unprocessable entity"
    code = "unprocessable_entity"


class RateLimited(ApplicationError):
    status_code = HTTPStatus.TOO_MANY_REQUESTS
    default_message = "Too many requests"
    code = "rate_limited"

    def __init__(self, retry_after: int):
        # contract "Errors": Retry-After is a whole number of seconds, at least 1.
        self.retry_after = max(1, int(retry_after))
        super().__init__(headers={"Retry-After": str(self.retry_after)})


class TooManyInFlight(RateLimited):
    """The caller's organization already has its limit of requests of this kind running
    (contract "Rate limits": IN_FLIGHT_LIMIT)."""

    default_message = "Too many requests in flight"
    code = "too_many_in_flight"


class ServiceUnavailable(ApplicationError):
    status_code = HTTPStatus.SERVICE_UNAVAILABLE
    default_message = "Service temporarily unavailable"
    code = "service_unavailable"


# The HTTP layer's own errors (delivery/middleware.py, delivery/exception_handler.py,
# delivery/parsers.py, delivery/gunicorn_errors.py).


class InvalidJson(BadRequest):
    default_message = "Request body is not valid JSON"
    code = "invalid_json"


class JsonTooDeep(BadRequest):
    code = "json_too_deep"

    def __init__(self, max_depth: int):
        super().__init__(f"Request body must not nest deeper than {max_depth} levels")


class UnstorableText(ValidationFailed):
    """A NUL character or a lone surrogate in a JSON value or key, the query string or a header."""

    code = "unstorable_text"


class ContentLengthInvalid(BadRequest):
    default_message = "Content-Length header is not valid"
    code = "content_length_invalid"


class QueryNotUtf8(BadRequest):
    default_message = "Query string is not valid UTF-8"
    code = "query_not_utf8"


class BadHost(BadRequest):
    """The Host header names no host of ALLOWED_HOSTS (or is malformed)."""

    default_message = "Invalid Host header"
    code = "bad_host"


class MalformedRequest(BadRequest):
    """What the HTTP server could not parse (gunicorn: a control character in a header, a bad
    request line or chunk); its message is an array of one string, as validation 400s' are."""

    code = "malformed_request"


class MethodNotAllowed(ApplicationError):
    status_code = HTTPStatus.METHOD_NOT_ALLOWED
    default_message = "Method not allowed"
    code = "method_not_allowed"


class NotAcceptable(ApplicationError):
    status_code = HTTPStatus.NOT_ACCEPTABLE
    default_message = "Could not satisfy the request Accept header"
    code = "not_acceptable"


class RequestLineTooLong(ApplicationError):
    status_code = HTTPStatus.REQUEST_URI_TOO_LONG
    default_message = "Request line is too long"
    code = "request_line_too_long"


class UnsupportedMediaType(ApplicationError):
    status_code = HTTPStatus.UNSUPPORTED_MEDIA_TYPE
    default_message = "Content-Type must be application/json"
    code = "unsupported_media_type"


class ExpectationFailed(ApplicationError):
    status_code = HTTPStatus.EXPECTATION_FAILED
    default_message = "Expectation failed"
    code = "expectation_failed"


class HeaderFieldsTooLarge(ApplicationError):
    status_code = HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
    default_message = "Request header fields too large"
    code = "header_fields_too_large"


class InternalError(ApplicationError):
    """Never raised on purpose: the body of a crash (no stack trace, no SQL; it is logged)."""

    status_code = HTTPStatus.INTERNAL_SERVER_ERROR
    default_message = "Internal server error"
    code = "internal_error"


class TransferCodingUnsupported(ApplicationError):
    status_code = HTTPStatus.NOT_IMPLEMENTED
    default_message = "Unsupported transfer coding"
    code = "transfer_coding_unsupported"


#: The error of a status when nothing more specific is known: a Django or DRF error of that
#: status, or an error response a view or middleware made without a body of ours.
GENERIC_BY_STATUS: dict[int, type[ApplicationError]] = {
    error.status_code: error
    for error in (
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        MethodNotAllowed,
        NotAcceptable,
        Conflict,
        PayloadTooLarge,
        RequestLineTooLong,
        UnsupportedMediaType,
        ExpectationFailed,
        UnprocessableEntity,
        RateLimited,
        HeaderFieldsTooLarge,
        InternalError,
        TransferCodingUnsupported,
        ServiceUnavailable,
    )
}


def generic_code(status_code: int) -> str:
    """The code of a status without an error class of its own: `http_<status>` (none is
    expected; the contract's table says so)."""
    error = GENERIC_BY_STATUS.get(int(status_code))
    return error.code if error else f"http_{int(status_code)}"


def error_of_status(status_code: int, message: str | list[str] | None = None) -> ApplicationError:
    """An error made outside our classes (a DRF or Django exception of some status), with its
    status's generic code."""
    generic = GENERIC_BY_STATUS.get(int(status_code))
    error = ApplicationError(message or (generic.default_message if generic else ""))
    error.status_code = int(status_code)
    error.code = generic_code(status_code)
    return error


def reason_phrase(status_code: int) -> str:
    try:
        return HTTPStatus(status_code).phrase
    except ValueError:
        return "Error"


def error_body(
    status_code: int, message: str | list[str], *, code: str, request_id: str, reason: str = ""
) -> dict:
    """The contract's error body; `reason` overrides the status's standard phrase (gunicorn
    names its 414 "URI Too Long", Python "Request-URI Too Long")."""
    return {
        "statusCode": int(status_code),
        "message": message,
        "error": reason or reason_phrase(status_code),
        "code": code,
        "requestId": request_id,
    }
