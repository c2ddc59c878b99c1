"""Request ids and the JSON error layer for everything under /api/ (contract "Errors")."""

import contextvars
import logging
import re
import uuid
from urllib.parse import unquote_to_bytes

from django.conf import settings
from django.core.exceptions import DisallowedHost, RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpResponseBadRequest, HttpResponseNotFound, JsonResponse
from django.urls import Resolver404, resolve
from django.views import defaults

from delivery.errors import (
    ApplicationError,
    BadHost,
    BadRequest,
    ContentLengthInvalid,
    InternalError,
    NotFound,
    PayloadTooLarge,
    QueryNotUtf8,
    ServiceUnavailable,
    UnstorableText,
    error_body,
    generic_code,
    reason_phrase,
)
from delivery.parsers import has_unstorable, unstorable_text_message
from delivery.ratelimit import rate_limit_states

logger = logging.getLogger(__name__)
# Django's own logger for this refusal, so an operator silences or routes it as Django documents.
disallowed_host_logger = logging.getLogger("django.security.DisallowedHost")

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


def json_error(
    status: int, message: str | list[str], headers: dict | None = None, *, code: str | None = None
) -> JsonResponse:
    """The contract's error body as a response; `code` defaults to the status's generic one.
    The request id is the one RequestIdMiddleware set for this request (and puts in the header).
    """
    body = error_body(
        status, message, code=code or generic_code(status), request_id=request_id_var.get()
    )
    response = JsonResponse(body, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def body_limit(request) -> int:
    """The largest body `request` may send: 1 MiB, or more on the paths that take a file
    (settings UPLOAD_BODY_PATHS; the view checks the file's own limit)."""
    if request.path_info.rstrip("/") in settings.UPLOAD_BODY_PATHS:
        return settings.MAX_UPLOAD_BODY_BYTES
    return settings.MAX_REQUEST_BODY_BYTES


def error_response(error: ApplicationError) -> JsonResponse:
    return json_error(error.status_code, error.message, error.headers, code=error.code)


def bad_request(request, exception=None):
    """handler400: a refused Host gets the JSON error body on every path, and so does any 400
    under /api/ (Django's HTML page elsewhere). ApiErrorMiddleware refuses a bad Host before any
    view; this covers Django raising DisallowedHost outside it (a middleware above it asking for
    the host), where no request id may be set yet: then one is made for header and body alike.
    """
    if not isinstance(exception, DisallowedHost) and not is_api_request(request):
        return defaults.bad_request(request, exception)
    error = BadHost() if isinstance(exception, DisallowedHost) else BadRequest()
    request_id = getattr(request, "request_id", None) or uuid.uuid4().hex
    token = request_id_var.set(request_id)
    try:
        response = error_response(error)
    finally:
        request_id_var.reset(token)
    response["X-Request-Id"] = request_id
    return response


class ApiErrorMiddleware:
    """Gives every /api/ error the contract body, whoever made it (resolver, Django, a crash)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        refused = self._host_not_allowed(request)
        if refused:
            return refused
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
    def _host_not_allowed(request):
        """A Host outside ALLOWED_HOSTS is refused here, on every path and whatever DEBUG says,
        with the JSON body (Django would answer its HTML page, or its debug page)."""
        try:
            request.get_host()
        except DisallowedHost as exc:
            disallowed_host_logger.warning("%s", exc)
            return error_response(BadHost())
        return None

    @staticmethod
    def _body_too_large(request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return error_response(ContentLengthInvalid())
        if length > body_limit(request):
            return error_response(PayloadTooLarge())
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
            return error_response(QueryNotUtf8())
        return None

    @staticmethod
    def _as_json(response):
        status = response.status_code
        message = NotFound.default_message if status == 404 else reason_phrase(status)
        replacement = json_error(status, message)
        for header in ("Allow", "Retry-After", "WWW-Authenticate"):
            if header in response:
                replacement[header] = response[header]
        return replacement

    def process_exception(self, request, exception):
        if not is_api_request(request):
            return None
        if isinstance(exception, RequestDataTooBig):
            return error_response(PayloadTooLarge())
        if isinstance(exception, OperationalError | InterfaceError):
            logger.error("database unavailable: %s", exception.__class__.__name__)
            return error_response(ServiceUnavailable())
        logger.exception("unhandled error on %s %s", request.method, request.path)
        return error_response(InternalError())


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
            return error_response(NotFound()) if api else HttpResponseNotFound(message)
        problem = self._query_problem(request) or self._header_problem(request)
        if problem and api:
            return error_response(UnstorableText([problem]))
        if problem:
            return HttpResponseBadRequest(problem)
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
