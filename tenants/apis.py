"""Management API: login tokens and the organization's API keys (contract "Management API")."""

from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.response import Response

from delivery.fields import StrictCharField
from delivery.ratelimit import client_address
from delivery.schema import ErrorBody, error_example, errors
from delivery.serializers import optional_body, valid_serializer
from tenants import openapi_examples as examples
from tenants import selectors, services
from tenants.api_bases import ManagementApiView, PublicApiView
from tenants.errors import LoginLocked, LoginSlowedDown
from tenants.serializers import (
    ApiKeyCreateInput,
    ApiKeyIssuedOutput,
    ApiKeyListOutput,
    ApiKeyUpdateInput,
    WebhookSecretRolledOutput,
    WebhookSecretRollInput,
)

TAG = ["management"]

LOGIN_RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    int,
    location=OpenApiParameter.HEADER,
    response=[429],
    description="Whole seconds (at least 1) until this login may be tried again.",
)


class TokenCreateInput(serializers.Serializer):
    email = StrictCharField(max_length=254, error_messages={"required": "email is required"})
    password = StrictCharField(
        max_length=4096, trim_whitespace=False, error_messages={"required": "password is required"}
    )


class MembershipOrganizationOutput(serializers.Serializer):
    id = serializers.UUIDField()
    slug = serializers.CharField()
    name = serializers.CharField()
    orgRole = serializers.CharField(default="admin")


TokenOutput = inline_serializer(
    name="AuthToken",
    fields={
        "token": serializers.CharField(),
        "expiresAt": serializers.DateTimeField(),
        "user": inline_serializer(
            name="AuthTokenUser",
            fields={
                "id": serializers.UUIDField(),
                "email": serializers.EmailField(),
                "name": serializers.CharField(),
            },
        ),
        "organizations": MembershipOrganizationOutput(many=True),
    },
)


class AuthTokenApi(PublicApiView):
    def get_authenticators(self):
        # Logging in needs no token; logging out (DELETE) needs the token it ends.
        request = getattr(self, "request", None)  # None while the OpenAPI schema is generated
        if request is not None and request.method == "DELETE":
            return [auth() for auth in ManagementApiView.authentication_classes]
        return []

    @extend_schema(
        tags=TAG,
        summary="Log in: get a management token",
        request=TokenCreateInput,
        responses={
            200: TokenOutput,
            **errors(400, 401),
            429: OpenApiResponse(
                ErrorBody,
                description="Too Many Requests: too many wrong passwords (Retry-After header)",
                examples=[
                    error_example(429, LoginLocked(retry_after=60)),
                    error_example(429, LoginSlowedDown(retry_after=2)),
                ],
            ),
        },
        parameters=[LOGIN_RETRY_AFTER],
        examples=examples.AUTH_TOKEN_CREATE,
    )
    def post(self, request):
        """Exchanges an organization admin's e-mail and password for a bearer token that lasts 12
        hours, and lists the organizations the user administers (their ids are the `org_id` of
        every management path). Send the token as `Authorization: Bearer <token>`.

        Called by an organization admin (or the dashboard acting for one); no credentials needed.

        Errors: 400 `email is required`, `password is required`; 401 `Invalid email or password`
        (also for an inactive user); 429 `login_locked` (too many wrong passwords from this
        address, the right one waits too) or `login_slowed_down` (too many for this account from
        anywhere), with `Retry-After`: docs/contract.md "Failed logins"."""
        serializer = valid_serializer(TokenCreateInput, request.data)
        issued = services.auth_token_create(
            **serializer.validated_data, address=client_address(request)
        )
        user = issued.token.user
        organizations = selectors.admin_organizations(user=user)
        return Response(
            {
                "token": issued.value,
                "expiresAt": serializers.DateTimeField().to_representation(issued.token.expires_at),
                "user": {"id": str(user.id), "email": user.email, "name": user.name},
                "organizations": MembershipOrganizationOutput(organizations, many=True).data,
            }
        )

    @extend_schema(
        tags=TAG, summary="Log out: end this token", responses={204: None, **errors(401)}
    )
    def delete(self, request):
        """Ends the bearer token the request carries, at once and in every process; other tokens
        of the same user stay valid. Answers 204 with no body.

        Called by an organization admin with `Authorization: Bearer <token>`.

        Errors: 401 `Invalid or missing token` (no token, or one already ended or expired)."""
        services.auth_token_delete(token=request.auth)
        return Response(status=204)


class ManagedApiKeysApi(ManagementApiView):
    @extend_schema(
        summary="List the organization's API keys",
        responses={200: ApiKeyListOutput(many=True), **errors(401, 404)},
        examples=examples.API_KEY_LIST,
    )
    def get(self, request, org_id):
        """Every API key of the organization, revoked ones included (`isActive` false), with the
        value masked (its prefix then `****`), its webhook settings and `lastUsedAt` (written at
        most once a minute).

        Called by an organization admin with a bearer token.

        Errors: 401 `Invalid or missing token`; 404 `Organization not found` (also for an
        organization the token's user does not administer)."""
        organization = self.get_organization()
        keys = selectors.api_key_list(organization_id=organization.id)
        return Response(ApiKeyListOutput(keys, many=True).data)

    @extend_schema(
        summary="Create an API key",
        request=ApiKeyCreateInput,
        responses={201: ApiKeyIssuedOutput, **errors(400, 401, 404, 409)},
        examples=examples.API_KEY_CREATE,
    )
    def post(self, request, org_id):
        """Issues an API key for a platform (`partner_a`, `partner_b`, `partner_c`, `standard` or
        `erp`; absent means `standard`), optionally a sandbox key (`test: true`) and a webhook
        URL with the events it receives. The answer is the only one, with rotate, that shows the
        full `apiKey` and `webhookSecret`: store them now.

        Called by an organization admin with a bearer token.

        Errors: 400 `API key name is required`, an unknown platform or event, a webhookUrl that is
        not an absolute http(s) URL or resolves to a private address; 401 `Invalid or missing
        token`; 404 `Organization not found`; 409 `A key for this platform already exists for this
        tenant; rotate or revoke it`."""
        organization = self.get_organization()
        serializer = valid_serializer(ApiKeyCreateInput, request.data)
        issued = services.api_key_create(
            organization_id=organization.id, **serializer.service_arguments()
        )
        return Response(ApiKeyIssuedOutput(issued).data, status=201)


class ManagedApiKeyDetailApi(ManagementApiView):
    @extend_schema(
        summary="Change an API key's name or webhook settings",
        request=ApiKeyUpdateInput,
        responses={200: ApiKeyListOutput, **errors(400, 401, 404, 409)},
        examples=examples.API_KEY_UPDATE,
    )
    def patch(self, request, org_id, key_id):
        """Changes any of name, platform, webhookUrl (null clears it) and webhookEvents (an array of
        event names, or null for every event), as the provisioning update does; fields left out
        keep their value. Answers the key as listed (value masked).

        Called by an organization admin with a bearer token.

        Errors: 400 `API key name must not be empty`, an unknown platform or event, a webhookUrl
        that is not an absolute http(s) URL or resolves to a private address; 401 `Invalid or
        missing token`; 404 `Organization not found`, `API key not found`; 409 `API key is
        revoked`, or the platform is held by another active key."""
        api_key = selectors.api_key_get(organization_id=self.get_organization().id, key_id=key_id)
        serializer = valid_serializer(ApiKeyUpdateInput, request.data)
        updated = services.api_key_update(api_key=api_key, **serializer.service_arguments())
        return Response(ApiKeyListOutput(updated).data)


class ApiKeyWebhookSecretRollApi(ManagementApiView):
    @extend_schema(
        summary="Roll an API key's webhook secret",
        request=WebhookSecretRollInput,
        responses={200: WebhookSecretRolledOutput, **errors(400, 401, 404, 409)},
        examples=[
            OpenApiExample(
                "Roll with a 24-hour overlap",
                request_only=True,
                value={"overlapHours": 24},
            ),
            OpenApiExample(
                "The new secret",
                response_only=True,
                status_codes=["200"],
                value={
                    "id": "3f0c2a4e-8d1b-4c7e-9a55-0b6f2d8e1c47",
                    "name": "Partner A",
                    "apiKey": "sk_partner_a_Xy3q****",
                    "platform": "partner_a",
                    "test": False,
                    "webhookUrl": "https://partner.example/hooks/delivery",
                    "webhookEvents": None,
                    "isActive": True,
                    "createdAt": "2030-03-01T09:00:00Z",
                    "lastUsedAt": "2030-03-04T10:14:59Z",
                    "webhookSecret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/g1MXE5ZC3Y=",
                    "previousSecretExpiresAt": "2030-03-05T10:15:30Z",
                },
            ),
        ],
    )
    def post(self, request, org_id, key_id):
        """Gives the key a new webhook secret without downtime, for an organization admin moving
        a receiver to a new secret (docs/webhooks.md "Rolling the secret"). For `overlapHours`
        (0 to 168, default 24) the replaced secret keeps signing beside the new one:
        `webhook-signature` carries a `v1,` signature from each (the new one first) and
        `X-Service-Signature` stays on the replaced secret; afterwards only the new secret signs.
        0 switches at once. Rolling again during an overlap keeps only the secret replaced now.
        The key value is unchanged. The new secret is shown only in this answer. Errors: 400
        `overlapHours: must be between 0 and 168` (or `must be an integer`); 404 `API key not
        found` for another organization's key; 409 `API key is revoked`."""
        api_key = selectors.api_key_get(organization_id=self.get_organization().id, key_id=key_id)
        serializer = valid_serializer(WebhookSecretRollInput, optional_body(request.data))
        rolled = services.api_key_webhook_secret_roll(
            api_key=api_key, overlap_hours=serializer.validated_data["overlapHours"]
        )
        return Response(WebhookSecretRolledOutput(rolled).data)
