"""OpenAPI pieces shared by every app: the error body, the standard error responses and the
schema class that declares each operation's security."""

from drf_spectacular import openapi
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers

ErrorBody = inline_serializer(
    name="Error",
    fields={
        "statusCode": serializers.IntegerField(),
        "message": serializers.JSONField(help_text="A string, or an array of strings for 400s"),
        "error": serializers.CharField(help_text="The HTTP reason phrase"),
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


def errors(*codes: int) -> dict[int, OpenApiResponse]:
    return {code: OpenApiResponse(ErrorBody, description=_DESCRIPTIONS[code]) for code in codes}


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
        return operation
