"""Provisioning API (contract "Provisioning"): views only parse, call a service, render."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from delivery.schema import errors
from delivery.serializers import valid_serializer
from delivery.throttling import ClientAddressThrottle
from provisioning import selectors as provisioning_selectors
from provisioning import services
from provisioning.serializers import (
    AdminAddedOutput,
    AdminAddInput,
    InviteAcceptedOutput,
    InviteAcceptInput,
    InviteReadOutput,
    InviteResentOutput,
    OrganizationCreatedOutput,
    OrganizationCreateInput,
    OrganizationListItemOutput,
    OrganizationOutput,
    OrganizationUpdateInput,
    PasswordResetInput,
    PasswordResetOutput,
)
from tenants import selectors as tenant_selectors
from tenants import services as tenant_services
from tenants.api_bases import ProvisioningApiView, PublicApiView
from tenants.serializers import (
    ApiKeyCreateInput,
    ApiKeyIssuedOutput,
    ApiKeyListOutput,
    ApiKeyRevokedOutput,
    ApiKeyRotatedOutput,
    ApiKeyUpdateInput,
)

TAG = ["provisioning"]


class OrganizationsApi(ProvisioningApiView):
    rate_limits = {"GET": "organizations.list", "POST": "organizations.create"}

    @extend_schema(responses={200: OrganizationListItemOutput(many=True), **errors(401, 429)})
    def get(self, request):
        organizations = provisioning_selectors.organization_list_with_counts()
        return Response(OrganizationListItemOutput(organizations, many=True).data)

    @extend_schema(
        request=OrganizationCreateInput,
        responses={201: OrganizationCreatedOutput, **errors(400, 401, 413, 415, 429)},
    )
    def post(self, request):
        data = valid_serializer(OrganizationCreateInput, request.data).validated_data
        result = services.organization_provision(
            name=data["name"],
            slug=data.get("slug"),
            admin_email=data["admin"]["email"],
            admin_name=data["admin"].get("name", ""),
        )
        return Response(OrganizationCreatedOutput(result).data, status=201)


class OrganizationDetailApi(ProvisioningApiView):
    rate_limits = {"PATCH": "organizations.update"}

    @extend_schema(
        request=OrganizationUpdateInput,
        responses={200: OrganizationOutput, **errors(400, 401, 404, 413, 415, 429)},
    )
    def patch(self, request, org_id):
        """Renames or (de)activates an organization. Deactivation takes effect at once, in every
        process: its API keys answer 401 and its admins get neither the management API (404
        Organization not found) nor Django admin."""
        organization = tenant_selectors.organization_get(organization_id=org_id)
        data = valid_serializer(OrganizationUpdateInput, request.data).validated_data
        updated = tenant_services.organization_update(
            organization=organization, name=data.get("name"), is_active=data.get("is_active")
        )
        return Response(OrganizationOutput(updated).data)


class OrganizationAdminsApi(ProvisioningApiView):
    rate_limits = {"POST": "admins.add"}

    @extend_schema(
        request=AdminAddInput, responses={201: AdminAddedOutput, **errors(400, 401, 404, 429)}
    )
    def post(self, request, org_id):
        organization = tenant_selectors.organization_get(organization_id=org_id)
        data = valid_serializer(AdminAddInput, request.data).validated_data
        result = services.admin_add(
            organization=organization, email=data["email"], name=data.get("name", "")
        )
        return Response(AdminAddedOutput(result).data, status=201)


class AdminResendInviteApi(ProvisioningApiView):
    rate_limits = {"POST": "admins.resend_invite"}

    @extend_schema(request=None, responses={200: InviteResentOutput, **errors(400, 401, 404, 429)})
    def post(self, request, user_id):
        user = tenant_selectors.user_get(user_id=user_id)
        issued = services.invite_resend(user=user)
        return Response(InviteResentOutput(issued).data)


class AdminResetPasswordApi(ProvisioningApiView):
    rate_limits = {"POST": "admins.reset_password"}

    @extend_schema(
        request=PasswordResetInput,
        responses={200: PasswordResetOutput, **errors(400, 401, 404, 429)},
    )
    def post(self, request, user_id):
        user = tenant_selectors.user_get(user_id=user_id)
        data = valid_serializer(PasswordResetInput, request.data).validated_data
        generated = services.password_reset(user=user, password=data.get("password"))
        body = {"ok": True, "email": user.email}
        if generated is not None:
            body["temporaryPassword"] = generated
        return Response(PasswordResetOutput(body).data)


class InviteReadApi(PublicApiView):
    throttle_classes = [ClientAddressThrottle]
    rate_limit_group = "invite"
    rate_limit_setting = "INVITE_RATE_LIMIT"

    @extend_schema(tags=TAG, responses={200: InviteReadOutput, **errors(404, 429)})
    def get(self, request, token):
        invite = provisioning_selectors.invite_get_by_token(token=token)
        return Response(InviteReadOutput(invite).data)


class InviteAcceptApi(PublicApiView):
    throttle_classes = [ClientAddressThrottle]
    rate_limit_group = "invite"
    rate_limit_setting = "INVITE_RATE_LIMIT"

    @extend_schema(
        tags=TAG,
        request=InviteAcceptInput,
        responses={200: InviteAcceptedOutput, **errors(400, 404, 429)},
    )
    def post(self, request, token):
        data = valid_serializer(InviteAcceptInput, request.data).validated_data
        invite = services.invite_accept(token=token, password=data["password"])
        return Response(InviteAcceptedOutput({"ok": True, "email": invite.user.email}).data)


class ApiKeysApi(ProvisioningApiView):
    rate_limits = {"GET": "api_keys.list", "POST": "api_keys.create"}

    @extend_schema(responses={200: ApiKeyListOutput(many=True), **errors(401, 404, 429)})
    def get(self, request, org_id):
        organization = tenant_selectors.organization_get(organization_id=org_id)
        keys = tenant_selectors.api_key_list(organization_id=organization.id)
        return Response(ApiKeyListOutput(keys, many=True).data)

    @extend_schema(
        request=ApiKeyCreateInput,
        responses={201: ApiKeyIssuedOutput, **errors(400, 401, 404, 409, 429)},
    )
    def post(self, request, org_id):
        organization = tenant_selectors.organization_get(organization_id=org_id)
        serializer = valid_serializer(ApiKeyCreateInput, request.data)
        issued = tenant_services.api_key_create(
            organization_id=organization.id, **serializer.service_arguments()
        )
        return Response(ApiKeyIssuedOutput(issued).data, status=201)


class ApiKeyDetailApi(ProvisioningApiView):
    rate_limits = {"POST": "api_keys.update", "DELETE": "api_keys.revoke"}

    @extend_schema(
        request=ApiKeyUpdateInput,
        responses={200: ApiKeyListOutput, **errors(400, 401, 404, 409, 429)},
        operation_id="provisioning_organizations_api_keys_update",
    )
    def post(self, request, org_id, key_id):
        """Webhook URL update: changes any of name, platform, webhookUrl and webhookEvents (an array
        of event names, or null for every event)."""
        organization = tenant_selectors.organization_get(organization_id=org_id)
        api_key = tenant_selectors.api_key_get(organization_id=organization.id, key_id=key_id)
        serializer = valid_serializer(ApiKeyUpdateInput, request.data)
        updated = tenant_services.api_key_update(api_key=api_key, **serializer.service_arguments())
        return Response(ApiKeyListOutput(updated).data)

    @extend_schema(responses={200: ApiKeyRevokedOutput, **errors(401, 404, 429)})
    def delete(self, request, org_id, key_id):
        organization = tenant_selectors.organization_get(organization_id=org_id)
        api_key = tenant_selectors.api_key_get(organization_id=organization.id, key_id=key_id)
        revoked = tenant_services.api_key_revoke(api_key=api_key)
        return Response(ApiKeyRevokedOutput(revoked).data)


class ApiKeyRotateApi(ProvisioningApiView):
    rate_limits = {"POST": "api_keys.rotate"}

    @extend_schema(request=None, responses={200: ApiKeyRotatedOutput, **errors(401, 404, 409, 429)})
    def post(self, request, org_id, key_id):
        organization = tenant_selectors.organization_get(organization_id=org_id)
        api_key = tenant_selectors.api_key_get(organization_id=organization.id, key_id=key_id)
        issued = tenant_services.api_key_rotate(api_key=api_key)
        return Response(ApiKeyRotatedOutput(issued).data)
