"""Request ids and the JSON error layer for everything under /api/ (contract "Errors")."""

import contextvars
import logging
import re
import uuid
from http import HTTPStatus
from urllib.parse import unquote_to_bytes

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpResponseBadRequest, HttpResponseNotFound, JsonResponse
from django.urls import Resolver404, resolve

from delivery.errors import NotFound, ServiceUnavailable, error_body
from delivery.parsers import has_unstorable, unstorable_text_message
from delivery.ratelimit import rate_limit_states

logger = logging.getLogger(__name__)

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

# A client-sent id is echoed only when it is short and harmless in logs and headers.
_CLIENT_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


class RequestIdLogFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        return True


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        sent = request.headers.get("X-Request-Id", "")
        request_id = sent if _CLIENT_REQUEST_ID.match(sent) else uuid.uuid4().hex
        request.request_id = request_id
        token = request_id_var.set(request_id)
        try:
            response = self.get_response(request)
        finally:
            request_id_var.reset(token)
        response["X-Request-Id"] = request_id
        return response


class RateLimitHeadersMiddleware:
    """Reports the rate-limit counters a request was counted against on its response, success
    or 429 alike, as `RateLimit-Policy` and `RateLimit` (docs/contract.md "Rate limits").

    Outside ApiErrorMiddleware, so the fields survive it turning an error into the JSON body.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        states = rate_limit_states(request)
        if states:
            response["RateLimit-Policy"] = ", ".join(state.policy_item() for state in states)
            response["RateLimit"] = ", ".join(state.limit_item() for state in states)
        return response


def is_api_request(request) -> bool:
    return request.path.startswith("/api/") or request.path == "/api"


def json_error(status: int, message: str | list[str], headers: dict | None = None) -> JsonResponse:
    response = JsonResponse(error_body(status, message), status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


class ApiErrorMiddleware:
    """Gives every /api/ error the contract body, whoever made it (resolver, Django, a crash)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if is_api_request(request):
            refused = self._body_too_large(request) or self._query_not_utf8(request)
            if refused:
                return refused
        response = self.get_response(request)
        if is_api_request(request) and response.status_code >= 400:
            content_type = response.get("Content-Type", "")
            if not content_type.startswith("application/json"):
                return self._as_json(response)
        return response

    @staticmethod
    def _body_too_large(request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return json_error(400, "Content-Length header is not valid")
        if length > settings.MAX_REQUEST_BODY_BYTES:
            return json_error(413, "Request body must not exceed 1 MiB")
        return None

    @staticmethod
    def _query_not_utf8(request):
        """A query string whose bytes (percent-decoded) are not UTF-8 is a 400, not a value
        Django would quietly turn into U+FFFD."""
        raw = request.META.get("QUERY_STRING", "")
        if not raw:
            return None
        try:
            # WSGI hands the bytes over as latin-1 text: encode back to the bytes sent.
            unquote_to_bytes(raw.encode("latin-1")).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            return json_error(400, "Query string is not valid UTF-8")
        return None

    @staticmethod
    def _as_json(response):
        status = response.status_code
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = "Error"
        message = NotFound.default_message if status == 404 else phrase
        replacement = json_error(status, message)
        for header in ("Allow", "Retry-After", "WWW-Authenticate"):
            if header in response:
                replacement[header] = response[header]
        return replacement

    def process_exception(self, request, exception):
        if not is_api_request(request):
            return None
        if isinstance(exception, RequestDataTooBig):
            return json_error(413, "Request body must not exceed 1 MiB")
        if isinstance(exception, OperationalError | InterfaceError):
            logger.error("database unavailable: %s", exception.__class__.__name__)
            return json_error(503, ServiceUnavailable.default_message)
        logger.exception("unhandled error on %s %s", request.method, request.path)
        return json_error(500, "Internal server error")


class UnstorableTextMiddleware:
    """Text no part of the service can hold (a NUL character, a lone surrogate) is refused where
    it enters, on every path: in the path a 404 (no object has such an id), in the query string
    or a header a 400. JSON bodies are checked by the parser (delivery.parsers)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        api = is_api_request(request)
        if has_unstorable(request.path) and not (api and self._routed(request)):
            # An API route answers its own 404 (`Order not found`): its lookups refuse such
            # ids before the database (tests/core/test_hostile_classes.py sends them to all).
            message = NotFound.default_message
            return json_error(404, message) if api else HttpResponseNotFound(message)
        problem = self._query_problem(request) or self._header_problem(request)
        if problem:
            return json_error(400, [problem]) if api else HttpResponseBadRequest(problem)
        return self.get_response(request)

    @staticmethod
    def _routed(request) -> bool:
        try:
            resolve(request.path_info)
        except Resolver404:
            return False
        return True

    @staticmethod
    def _query_problem(request) -> str | None:
        for name, values in request.GET.lists():
            if has_unstorable(name) or any(has_unstorable(value) for value in values):
                return unstorable_text_message("Query string")
        return None

    @staticmethod
    def _header_problem(request) -> str | None:
        for key, value in request.META.items():
            if key.startswith("HTTP_") and isinstance(value, str) and has_unstorable(value):
                header = key[5:].replace("_", "-").title()
                return unstorable_text_message(f"Header {header}")
        return None
