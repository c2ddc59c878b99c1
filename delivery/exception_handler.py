"""Maps every exception raised inside a DRF view to the contract's error body (contract
"Errors")."""

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
    NotFound,
    RateLimited,
    ServiceUnavailable,
    error_body,
)

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
    if isinstance(exc, ApplicationError):
        return Response(
            error_body(exc.status_code, exc.message), status=exc.status_code, headers=exc.headers
        )
    if isinstance(exc, drf_exceptions.ValidationError):
        return Response(error_body(400, flatten_validation_errors(exc.detail)), status=400)
    if isinstance(exc, drf_exceptions.ParseError):
        return Response(error_body(400, "Request body is not valid JSON"), status=400)
    if isinstance(exc, drf_exceptions.UnsupportedMediaType):
        return Response(error_body(415, "Content-Type must be application/json"), status=415)
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        return Response(error_body(405, f"Method {context['request'].method} not allowed"), 405)
    if isinstance(exc, drf_exceptions.NotAuthenticated | drf_exceptions.AuthenticationFailed):
        return Response(error_body(401, str(exc.detail)), status=401)
    if isinstance(exc, drf_exceptions.Throttled):
        wait = max(1, int(exc.wait or 1))
        return Response(
            error_body(429, RateLimited.default_message),
            status=429,
            headers={"Retry-After": str(wait)},
        )
    if isinstance(exc, drf_exceptions.APIException):
        return Response(error_body(exc.status_code, str(exc.detail)), status=exc.status_code)
    if isinstance(exc, Http404):
        return Response(error_body(404, NotFound.default_message), status=404)
    if isinstance(exc, PermissionDenied):
        return Response(error_body(403, Forbidden.default_message), status=403)
    if isinstance(exc, OperationalError | InterfaceError):
        # The database is away: answer fast with 503 instead of hanging or leaking SQL.
        logger.error("database unavailable: %s", exc.__class__.__name__)
        return Response(error_body(503, ServiceUnavailable.default_message), status=503)
    if isinstance(exc, DatabaseError):
        logger.exception("database error")
        return Response(error_body(500, "Internal server error"), status=500)
    return None  # ApiErrorMiddleware renders and logs anything else as a 500.
