"""Management API: login tokens and the organization's API keys (contract "Management API")."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from delivery.fields import StrictCharField
from delivery.schema import errors
from delivery.serializers import valid_serializer
from tenants import selectors, services
from tenants.api_bases import ManagementApiView, PublicApiView
from tenants.serializers import (
    ApiKeyCreateInput,
    ApiKeyIssuedOutput,
    ApiKeyListOutput,
    ApiKeyUpdateInput,
    DriverInput,
    DriverOutput,
)

TAG = ["management"]


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
        tags=TAG, request=TokenCreateInput, responses={200: TokenOutput, **errors(400, 401)}
    )
    def post(self, request):
        serializer = valid_serializer(TokenCreateInput, request.data)
        issued = services.auth_token_create(**serializer.validated_data)
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

    @extend_schema(tags=TAG, responses={204: None, **errors(401)})
    def delete(self, request):
        services.auth_token_delete(token=request.auth)
        return Response(status=204)


class ManagedApiKeysApi(ManagementApiView):
    @extend_schema(responses={200: ApiKeyListOutput(many=True), **errors(401, 404)})
    def get(self, request, org_id):
        organization = self.get_organization()
        keys = selectors.api_key_list(organization_id=organization.id)
        return Response(ApiKeyListOutput(keys, many=True).data)

    @extend_schema(
        request=ApiKeyCreateInput, responses={201: ApiKeyIssuedOutput, **errors(400, 401, 404, 409)}
    )
    def post(self, request, org_id):
        organization = self.get_organization()
        serializer = valid_serializer(ApiKeyCreateInput, request.data)
        issued = services.api_key_create(
            organization_id=organization.id, **serializer.service_arguments()
        )
        return Response(ApiKeyIssuedOutput(issued).data, status=201)


class ManagedApiKeyDetailApi(ManagementApiView):
    @extend_schema(
        request=ApiKeyUpdateInput, responses={200: ApiKeyListOutput, **errors(400, 401, 404, 409)}
    )
    def patch(self, request, org_id, key_id):
        """Changes any of name, platform, webhookUrl and webhookEvents (an array of event names, or
        null for every event), as the provisioning update does."""
        api_key = selectors.api_key_get(organization_id=self.get_organization().id, key_id=key_id)
        serializer = valid_serializer(ApiKeyUpdateInput, request.data)
        updated = services.api_key_update(api_key=api_key, **serializer.service_arguments())
        return Response(ApiKeyListOutput(updated).data)


class DriversApi(ManagementApiView):
    @extend_schema(responses={200: DriverOutput(many=True), **errors(401, 404)})
    def get(self, request, org_id):
        drivers = selectors.driver_list(organization_id=self.get_organization().id)
        return Response(DriverOutput(drivers, many=True).data)

    @extend_schema(request=DriverInput, responses={201: DriverOutput, **errors(400, 401, 404)})
    def post(self, request, org_id):
        organization = self.get_organization()
        serializer = valid_serializer(DriverInput, request.data)
        driver = services.driver_create(
            organization_id=organization.id, **serializer.validated_data
        )
        return Response(DriverOutput(driver).data, status=201)


class DriverDetailApi(ManagementApiView):
    @extend_schema(responses={200: DriverOutput, **errors(401, 404)})
    def get(self, request, org_id, driver_id):
        driver = selectors.driver_get(
            organization_id=self.get_organization().id, driver_id=driver_id
        )
        return Response(DriverOutput(driver).data)

    @extend_schema(request=DriverInput, responses={200: DriverOutput, **errors(400, 401, 404)})
    def patch(self, request, org_id, driver_id):
        driver = selectors.driver_get(
            organization_id=self.get_organization().id, driver_id=driver_id
        )
        serializer = valid_serializer(DriverInput, request.data, partial=True)
        driver = services.driver_update(driver=driver, **serializer.validated_data)
        return Response(DriverOutput(driver).data)
