"""The one error vocabulary of the service (contract "Errors").

Every error a service or view raises is an ApplicationError; the exception handler renders it as
`{statusCode, message, error}`. Apps subclass these in their own `errors.py`.
"""

from http import HTTPStatus


class ApplicationError(Exception):
    """`str(error)` is the message, a list's entries joined by "; " (as admin messages show it)."""

    status_code: int = HTTPStatus.BAD_REQUEST
    default_message: str = "Bad request"

    def __init__(self, message: str | list[str] | None = None, *, headers: dict | None = None):
        self.message = message if message is not None else self.default_message
        self.headers = headers or {}
        super().__init__(self.message if isinstance(self.message, str) else "; ".join(self.message))


class BadRequest(ApplicationError):
    status_code = HTTPStatus.BAD_REQUEST


class ValidationFailed(BadRequest):
    """A 400 whose message is always an array: one entry per problem, each naming its field."""

    def __init__(self, messages: list[str] | str):
        super().__init__([messages] if isinstance(messages, str) else list(messages))


class Unauthorized(ApplicationError):
    status_code = HTTPStatus.UNAUTHORIZED
    default_message = "Unauthorized"


class Forbidden(ApplicationError):
    status_code = HTTPStatus.FORBIDDEN
    default_message = "Forbidden"


class NotFound(ApplicationError):
    status_code = HTTPStatus.NOT_FOUND
    default_message = "Not found"


class Conflict(ApplicationError):
    status_code = HTTPStatus.CONFLICT
    default_message = "Conflict"


class PayloadTooLarge(ApplicationError):
    status_code = HTTPStatus.REQUEST_ENTITY_TOO_LARGE
    default_message = "Request body is too large"


class UnprocessableEntity(ApplicationError):
    status_code = HTTPStatus.UNPROCESSABLE_ENTITY
    default_message = "Unprocessable entity"


class RateLimited(ApplicationError):
    status_code = HTTPStatus.TOO_MANY_REQUESTS
    default_message = "Too many requests"

    def __init__(self, retry_after: int):
        # contract "Errors": Retry-After is a whole number of seconds, at least 1.
        self.retry_after = max(1, int(retry_after))
        super().__init__(headers={"Retry-After": str(self.retry_after)})


class ServiceUnavailable(ApplicationError):
    status_code = HTTPStatus.SERVICE_UNAVAILABLE
    default_message = "Service temporarily unavailable"


def error_body(status_code: int, message: str | list[str]) -> dict:
    return {
        "statusCode": int(status_code),
        "message": message,
        "error": HTTPStatus(status_code).phrase,
    }
