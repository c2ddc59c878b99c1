"""Maps every exception raised inside a DRF view to the contract's error body (contract
"Errors"): an error of the service's vocabulary (delivery/errors.py), so every body has a code."""

import logging
import re

from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response

from delivery.errors import (
    ApplicationError,
    Forbidden,
    InternalError,
    InvalidJson,
    MethodNotAllowed,
    NotFound,
    RateLimited,
    ServiceUnavailable,
    Unauthorized,
    UnsupportedMediaType,
    ValidationFailed,
    error_body,
    error_of_status,
)
from delivery.middleware import request_id_var

logger = logging.getLogger(__name__)


def flatten_validation_errors(detail, prefix: str = "") -> list[str]:
    """Turns DRF's nested error detail into one message per problem, each naming its field."""
    if isinstance(detail, dict):
        messages = []
        for field, value in detail.items():
            name = field if field != "non_field_errors" else ""
            path = f"{prefix}.{name}" if prefix and name else (name or prefix)
            messages.extend(flatten_validation_errors(value, path))
        return messages
    if isinstance(detail, list):
        messages = []
        for index, value in enumerate(detail):
            if isinstance(value, dict | list):
                messages.extend(flatten_validation_errors(value, f"{prefix}[{index}]"))
            else:
                messages.extend(flatten_validation_errors(value, prefix))
        return messages
    text = str(detail)
    if not prefix or _names_its_field(text, prefix):
        return [text]
    return [f"{prefix}: {text}"]


def _names_its_field(text: str, path: str) -> bool:
    """True for messages written as whole sentences about their field.

    "admin.email is required" starts with its path; the contract's "API key name is required"
    is a capitalised sentence naming the field. Generic ones ("This field is required.",
    "must be a string") get the field path put in front.
    """
    field = path.rsplit(".", 1)[-1].split("[", 1)[0]
    if text.startswith((path, field)):
        return True
    return text[:1].isupper() and re.search(rf"\b{re.escape(field)}\b", text) is not None


def api_exception_handler(exc, context):
    error = application_error_of(exc, context["request"])
    if error is None:
        return None  # ApiErrorMiddleware renders and logs anything else as a 500.
    body = error_body(
        error.status_code, error.message, code=error.code, request_id=request_id_var.get()
    )
    return Response(body, status=error.status_code, headers=error.headers)


def application_error_of(exc, request) -> ApplicationError | None:
    """The error of the service's vocabulary an exception stands for, so its body carries a code
    of the contract's table; None for what only a 500 can answer."""
    if isinstance(exc, ApplicationError):
        return exc
    if isinstance(exc, drf_exceptions.ValidationError):
        return ValidationFailed(flatten_validation_errors(exc.detail))
    if isinstance(exc, drf_exceptions.ParseError):
        return InvalidJson()
    if isinstance(exc, drf_exceptions.UnsupportedMediaType):
        return UnsupportedMediaType()
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        return MethodNotAllowed(f"Method {request.method} not allowed")
    if isinstance(exc, drf_exceptions.NotAuthenticated | drf_exceptions.AuthenticationFailed):
        return Unauthorized(str(exc.detail))
    if isinstance(exc, drf_exceptions.Throttled):
        return RateLimited(retry_after=exc.wait or 1)
    if isinstance(exc, drf_exceptions.APIException):
        return error_of_status(exc.status_code, str(exc.detail))
    if isinstance(exc, Http404):
        return NotFound()
    if isinstance(exc, PermissionDenied):
        return Forbidden()
    if isinstance(exc, OperationalError | InterfaceError):
        # The database is away: answer fast with 503 instead of hanging or leaking SQL.
        logger.error("database unavailable: %s", exc.__class__.__name__)
        return ServiceUnavailable()
    if isinstance(exc, DatabaseError):
        logger.exception("database error")
        return InternalError()
    return None
