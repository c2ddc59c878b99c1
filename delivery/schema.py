"""OpenAPI pieces shared by every app: the error body and the standard error responses."""

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
