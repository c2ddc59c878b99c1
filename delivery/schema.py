"""OpenAPI pieces shared by every app: the error body, the standard error responses, the
schema class that declares each operation's security and the rate-limit fields of counted
operations, and takes each operation's description from its method's docstring, and the two
ways an app's `openapi_examples` module declares an example."""

from drf_spectacular import openapi
from drf_spectacular.plumbing import get_doc
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    inline_serializer,
)
from rest_framework import serializers

from delivery.errors import ApplicationError, error_body
from delivery.fields import DATE_PATTERN, MAX_PAGE
from delivery.throttling import is_rate_limited

ErrorBody = inline_serializer(
    name="Error",
    fields={
        "statusCode": serializers.IntegerField(),
        "message": serializers.JSONField(help_text="A string, or an array of strings for 400s"),
        "error": serializers.CharField(help_text="The HTTP reason phrase"),
        "code": serializers.CharField(
            help_text="What went wrong, as a stable snake_case name to branch on (`slot_full`, "
            '`validation_failed`); docs/contract.md "Errors" lists every code with its status. '
            "A status may gain new codes: treat an unknown one as its status says."
        ),
        "requestId": serializers.CharField(
            help_text="This request's id, the same as the X-Request-Id response header: quote it "
            "when reporting a problem."
        ),
    },
)

_DESCRIPTIONS = {
    400: "Bad Request: validation failed (message is an array naming each field)",
    401: "Unauthorized: missing or invalid credentials",
    403: "Forbidden: the API key's platform does not match this integration",
    404: "Not Found",
    409: "Conflict",
    413: "Payload Too Large: body over 1 MiB",
    415: "Unsupported Media Type: body is not application/json",
    422: "Unprocessable Entity",
    429: "Too Many Requests (Retry-After header)",
    503: "Service Unavailable",
}

#: one real body per status: (example name, code, message)
_EXAMPLES = {
    400: ("Validation failed", "validation_failed", ["name is required"]),
    401: ("Invalid API key", "api_key_invalid", "Invalid API key"),
    403: ("Wrong platform", "platform_mismatch", "API key does not match partner-a integration"),
    404: ("Not found", "not_found", "Not found"),
    409: (
        "Duplicate externalRef",
        "duplicate_external_ref",
        "Order with externalRef PO-1001 already exists",
    ),
    413: ("Body too large", "payload_too_large", "Request body must not exceed 1 MiB"),
    415: ("Not JSON", "unsupported_media_type", "Content-Type must be application/json"),
    422: (
        "Idempotency-Key reused",
        "idempotency_key_reused",
        "Idempotency-Key was already used with a different request body",
    ),
    429: ("Rate limited", "rate_limited", "Too many requests"),
    503: ("Unavailable", "service_unavailable", "Service temporarily unavailable"),
}

EXAMPLE_REQUEST_ID = "0b6a3f1c9e2d4f5a8b7c6d5e4f3a2b1c"


def error_example(status: int, error: ApplicationError | None = None) -> OpenApiExample:
    """A realistic error body of `status`: one of its codes (the contract's table has all), or
    `error`'s, for a response that documents one error."""
    if error is None:
        name, code, message = _EXAMPLES[status]
    else:
        name, code, message = type(error).__name__, error.code, error.message
    return OpenApiExample(
        name,
        value=error_body(status, message, code=code, request_id=EXAMPLE_REQUEST_ID),
        status_codes=[status],
        response_only=True,
    )


def errors(*codes: int) -> dict[int, OpenApiResponse]:
    return {
        code: OpenApiResponse(
            ErrorBody, description=_DESCRIPTIONS[code], examples=[error_example(code)]
        )
        for code in codes
    }


#: answered before any counting (authentication, permission, body size): no rate-limit fields
_UNCOUNTED_CODES = {401, 403, 413}
_COUNTED_CODES = [
    code
    for code in (200, 201, 202, 204, 400, 404, 405, 409, 415, 422, 429, 503)
    if code not in _UNCOUNTED_CODES
]

RATE_LIMIT_HEADERS = [
    OpenApiParameter(
        "RateLimit-Policy",
        str,
        location=OpenApiParameter.HEADER,
        response=_COUNTED_CODES,
        description="The quota policy this request is counted against "
        '(draft-ietf-httpapi-ratelimit-headers), e.g. `"api-key";q=600;w=60`: '
        "q requests per w seconds (a fixed window).",
    ),
    OpenApiParameter(
        "RateLimit",
        str,
        location=OpenApiParameter.HEADER,
        response=_COUNTED_CODES,
        description='Where the counter stands, e.g. `"api-key";r=599;t=42`: r requests left in '
        "this window, which resets in t seconds. r=0 on a 429, and t equals its Retry-After.",
    ),
    OpenApiParameter(
        "Retry-After",
        int,
        location=OpenApiParameter.HEADER,
        response=[429],
        description="Whole seconds (at least 1) until the window resets.",
    ),
]


#: A character str.strip() keeps: ECMA-262's `\S` alone would let through the few characters
#: Python also counts as spaces (the separators U+001C-U+001F, NEL U+0085).
NOT_BLANK_PATTERN = r"[^\s\x1c-\x1f\x85]"


class AutoSchema(openapi.AutoSchema):
    """Declares exactly the credentials an operation takes (the project's DEFAULT_SCHEMA_CLASS).

    drf-spectacular adds an anonymous alternative (`{}`) to every view whose permission is
    AllowAny, but each of our authentication classes refuses a request without its credentials
    (401) whatever the permission, so that alternative would be false. An operation without
    authentication (invites, tracking, logging in) says so with an explicit empty `security`.
    """

    def get_auth(self):
        return [requirement for requirement in super().get_auth() if requirement]

    def get_operation(self, *args, **kwargs):
        operation = super().get_operation(*args, **kwargs)
        if operation is not None:
            operation.setdefault("security", [])
            self._document_rate_limited(operation.get("responses", {}))
        return operation

    def _document_rate_limited(self, responses: dict) -> None:
        """A counted operation can answer 429 (its rate limit, or the in-flight limit): the
        operations that do not list it themselves (the management API's) get the 429 every
        counted operation documents, with its fields, next to their other error bodies."""
        if "429" in responses or not is_rate_limited(type(self.view), self.method):
            return
        error = next((answer for code, answer in responses.items() if code.startswith("4")), None)
        if error is None or "content" not in error:
            return
        name, code, message = _EXAMPLES[429]
        example = error_body(429, message, code=code, request_id=EXAMPLE_REQUEST_ID)
        responses["429"] = {
            "headers": {
                field.name: {
                    "schema": {"type": "integer" if field.type is int else "string"},
                    "description": field.description,
                }
                for field in RATE_LIMIT_HEADERS
            },
            "content": {
                "application/json": {
                    "schema": error["content"]["application/json"]["schema"],
                    "examples": {"RateLimited": {"value": example, "summary": name}},
                }
            },
            "description": _DESCRIPTIONS[429],
        }

    def get_tags(self):
        # Each family of views names its tag once, on its base view (`openapi_tags`,
        # tenants/api_bases.py); an operation's own `tags=` still wins (extend_schema).
        return getattr(self.view, "openapi_tags", None) or super().get_tags()

    def get_description(self):
        # An operation's description is its method's docstring (drf-spectacular's own rule),
        # wrapped in the source to the line length: each paragraph reaches the document as one
        # line, as Markdown reads it anyway, so re-wrapping the source never changes the document.
        # Without one, only the view class's own docstring: drf-spectacular would otherwise take a
        # base view's (tenants/api_bases.py), which is written for this code's readers, not callers.
        method_doc = get_doc(getattr(self.view, self.method.lower(), None))
        if not method_doc:
            return super().get_description() if vars(type(self.view)).get("__doc__") else ""
        return "\n\n".join(" ".join(paragraph.split()) for paragraph in method_doc.split("\n\n"))

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        # A field that checks its value in code (a pattern, a range, a set of names) states
        # those limits in `openapi_constraints` (delivery.fields.declare): drf-spectacular reads
        # only DRF's own kwargs, and a client generated from the document must know them all.
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        constraints = dict(getattr(field, "openapi_constraints", None) or {})
        if (
            isinstance(field, serializers.CharField)
            and field.trim_whitespace
            and not field.allow_blank
            and not {"pattern", "enum"} & constraints.keys()
        ):
            # A required text is trimmed first: only spaces is blank, refused.
            constraints["pattern"] = NOT_BLANK_PATTERN
        if constraints and direction == "request" and isinstance(schema, dict):
            if "$ref" in schema:
                return {"allOf": [schema], **constraints}
            schema = {**schema, **constraints}
            # a limit DRF states that the field does not apply as stated (None) is dropped
            return {key: value for key, value in schema.items() if value is not None}
        return schema

    def _resolve_path_parameters(self, variables):
        # Every `<name>_id` of a path is a UUID: the document says so, and a malformed one is
        # answered 404 like an unknown one (docs/contract.md "Errors").
        parameters = super()._resolve_path_parameters(variables)
        for parameter in parameters:
            if parameter["name"].endswith("_id") and parameter["schema"].get("type") == "string":
                parameter["schema"] = {**parameter["schema"], "format": "uuid"}
        return parameters

    def get_override_parameters(self):
        # the rate-limit response fields on every operation that is counted (docs/contract.md
        # "Rate limits"), from the view's own throttles
        parameters = super().get_override_parameters()
        if is_rate_limited(type(self.view), self.method):
            return [*parameters, *RATE_LIMIT_HEADERS]
        return parameters


# ----- query parameters: their schema states every limit the view's query serializer checks -----


def query_date(name: str, **kwargs) -> OpenApiParameter:
    """A `YYYY-MM-DD` query parameter (delivery.fields.parse_date)."""
    schema = {"type": "string", "format": "date", "pattern": DATE_PATTERN}
    return OpenApiParameter(name, schema, **kwargs)


def query_number(name: str, *, bound: int, **kwargs) -> OpenApiParameter:
    """A decimal query parameter from -bound to bound (a latitude, a longitude)."""
    schema = {"type": "number", "minimum": -bound, "maximum": bound}
    return OpenApiParameter(name, schema, **kwargs)


def page_parameters(*, max_page_size: int, default_page_size: int) -> list[OpenApiParameter]:
    """`page` and `pageSize` of a paginated list (delivery.fields.page_field, page_size_field)."""
    return [
        OpenApiParameter(
            "page",
            {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 1},
            description="From 1 (default 1)",
        ),
        OpenApiParameter(
            "pageSize",
            {
                "type": "integer",
                "minimum": 1,
                "maximum": max_page_size,
                "default": default_page_size,
            },
            description=f"1 to {max_page_size} (default {default_page_size})",
        ),
    ]


def request_example(value: dict, *, name: str = "Request") -> OpenApiExample:
    """An example of an operation's request body."""
    return OpenApiExample(name, value=value, request_only=True)


def answer_example(status: int, value, *, name: str | None = None) -> OpenApiExample:
    """An example of an operation's answer with `status`. For an operation that answers an
    array, `value` is one item: drf-spectacular shows it inside the array."""
    return OpenApiExample(
        name or f"{status} answer", value=value, response_only=True, status_codes=[str(status)]
    )
