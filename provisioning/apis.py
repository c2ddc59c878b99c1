"""Provisioning API (contract "Provisioning"): views only parse, call a service, render."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from delivery.schema import errors
from delivery.serializers import valid_serializer
from delivery.throttling import ClientAddressThrottle
from provisioning import openapi_examples as examples
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
from tenants import openapi_examples as tenant_examples
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

    @extend_schema(
        summary="List every organization with its counts and admins",
        responses={200: OrganizationListItemOutput(many=True), **errors(401, 429)},
        examples=examples.ORGANIZATION_LIST,
    )
    def get(self, request):
        """Every organization the service holds, inactive ones included, each with how many
        members, drivers and orders it has and its admins (`invitePending` while an admin has not
        accepted their invite).

        Called by the parent platform with `X-Provisioning-Secret` (120 an hour).

        Errors: 401 `Missing X-Provisioning-Secret header`, `Invalid provisioning secret`; 429 `Too
        many requests`."""
        organizations = provisioning_selectors.organization_list_with_counts()
        return Response(OrganizationListItemOutput(organizations, many=True).data)

    @extend_schema(
        request=OrganizationCreateInput,
        summary="Create an organization with its first admin",
        responses={201: OrganizationCreatedOutput, **errors(400, 401, 413, 415, 429)},
        examples=examples.ORGANIZATION_CREATE,
    )
    def post(self, request):
        """Creates an organization (a tenant) and makes `admin.email` its admin. A new user gets
        an invite e-mail valid 7 days (`invite.emailSent` says whether the mail backend accepted
        it); for a user who already exists `invite` is null. Without a `slug` one is made from
        the name (`-2`, `-3`, ... when taken).

        Called by the parent platform with `X-Provisioning-Secret` (30 an hour).

        Errors: 400 `Organization name is required`, `admin.email is required`, `admin.email must be
        a valid e-mail address`, a malformed slug, `Slug <slug> is already taken`; 401 `Missing
        X-Provisioning-Secret header`, `Invalid provisioning secret`; 413 a body over 1 MiB; 415 a
        body that is not JSON; 429 `Too many requests`."""
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
        summary="Rename, deactivate or reactivate an organization",
        request=OrganizationUpdateInput,
        responses={200: OrganizationOutput, **errors(400, 401, 404, 413, 415, 429)},
        examples=examples.ORGANIZATION_UPDATE,
    )
    def patch(self, request, org_id):
        """Renames or (de)activates an organization. Deactivation takes effect at once, in every
        process: its API keys answer 401 and its admins get neither the management API (404
        Organization not found) nor Django admin.

        Called by the parent platform with `X-Provisioning-Secret` (60 an hour).

        Errors: 400 `Organization name is required` (an empty or null name); 401 `Missing
        X-Provisioning-Secret header`, `Invalid provisioning secret`; 404 `Organization not found`;
        413 a body over 1 MiB; 415 a body that is not JSON; 429 `Too many requests`."""
        organization = tenant_selectors.organization_get(organization_id=org_id)
        data = valid_serializer(OrganizationUpdateInput, request.data).validated_data
        updated = tenant_services.organization_update(
            organization=organization, name=data.get("name"), is_active=data.get("is_active")
        )
        return Response(OrganizationOutput(updated).data)


class OrganizationAdminsApi(ProvisioningApiView):
    rate_limits = {"POST": "admins.add"}

    @extend_schema(
        summary="Add an admin to an organization",
        request=AdminAddInput,
        responses={201: AdminAddedOutput, **errors(400, 401, 404, 429)},
        examples=examples.ADMIN_ADD,
    )
    def post(self, request, org_id):
        """Makes a user, found or created by e-mail, an admin of the organization. A user who never
        set a password gets an invite (valid 7 days); otherwise `invite` is null.
        `admin.alreadyMember` is true when the user was a member already (then made admin).

        Called by the parent platform with `X-Provisioning-Secret` (60 an hour).

        Errors: 400 `email is required`, `email must be a valid e-mail address`; 401 `Missing
        X-Provisioning-Secret header`, `Invalid provisioning secret`; 404 `Organization not found`;
        429 `Too many requests`."""
        organization = tenant_selectors.organization_get(organization_id=org_id)
        data = valid_serializer(AdminAddInput, request.data).validated_data
        result = services.admin_add(
            organization=organization, email=data["email"], name=data.get("name", "")
        )
        return Response(AdminAddedOutput(result).data, status=201)


class AdminResendInviteApi(ProvisioningApiView):
    rate_limits = {"POST": "admins.resend_invite"}

    @extend_schema(
        summary="Send an admin a new invite",
        request=None,
        responses={200: InviteResentOutput, **errors(400, 401, 404, 429)},
        examples=examples.INVITE_RESEND,
    )
    def post(self, request, user_id):
        """Issues a new invite token with a new `expiresAt` (7 days) for the user's pending invite
        and e-mails it; the old token stops working at once. Takes no body.

        Called by the parent platform with `X-Provisioning-Secret` (30 an hour).

        Errors: 400 `User has no pending invite`; 401 `Missing X-Provisioning-Secret header`,
        `Invalid provisioning secret`; 404 `User not found`; 429 `Too many requests`."""
        user = tenant_selectors.user_get(user_id=user_id)
        issued = services.invite_resend(user=user)
        return Response(InviteResentOutput(issued).data)


class AdminResetPasswordApi(ProvisioningApiView):
    rate_limits = {"POST": "admins.reset_password"}

    @extend_schema(
        summary="Set or generate an admin's password",
        request=PasswordResetInput,
        responses={200: PasswordResetOutput, **errors(400, 401, 404, 429)},
        examples=examples.PASSWORD_RESET,
    )
    def post(self, request, user_id):
        """Sets the user's password to `password`, or, without one, to a generated
        `temporaryPassword` returned once in the answer. The parent platform vouches for its admin:
        memberships waiting on an invite become active (the invites count as accepted), and every
        management token the user holds ends at once.

        Called by the parent platform with `X-Provisioning-Secret` (30 an hour).

        Errors: 400 the password validators' messages (`password: This password is too short. ...`);
        401 `Missing X-Provisioning-Secret header`, `Invalid provisioning secret`; 404 `User not
        found`; 429 `Too many requests`."""
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

    @extend_schema(
        tags=TAG,
        summary="Read an invite (public)",
        responses={200: InviteReadOutput, **errors(404, 429)},
        examples=examples.INVITE_READ,
    )
    def get(self, request, token):
        """Whom the invite is for, to which organization, until when, and its `status` (`pending`,
        `accepted` or `expired`): what an accept-invite page shows before asking for a password.

        Called by the invited person's browser with the token from the invite e-mail; no
        credentials (60 an hour per client address).

        Errors: 404 `Invite not found` (unknown or replaced token); 429 `Too many requests`."""
        invite = provisioning_selectors.invite_get_by_token(token=token)
        return Response(InviteReadOutput(invite).data)


class InviteAcceptApi(PublicApiView):
    throttle_classes = [ClientAddressThrottle]
    rate_limit_group = "invite"
    rate_limit_setting = "INVITE_RATE_LIMIT"

    @extend_schema(
        tags=TAG,
        summary="Accept an invite and set a password (public)",
        request=InviteAcceptInput,
        responses={200: InviteAcceptedOutput, **errors(400, 404, 429)},
        examples=examples.INVITE_ACCEPT,
    )
    def post(self, request, token):
        """Sets the invited user's password and activates their admin membership: from then on they
        log in with `POST /auth/token` and in Django admin.

        Called by the invited person's browser with the token from the invite e-mail; no
        credentials (60 an hour per client address).

        Errors: 400 `password is required`, the password validators' messages, `Invite has
        expired`, `Invite has already been accepted`; 404 `Invite not found`; 429 `Too many
        requests`."""
        data = valid_serializer(InviteAcceptInput, request.data).validated_data
        invite = services.invite_accept(token=token, password=data["password"])
        return Response(InviteAcceptedOutput({"ok": True, "email": invite.user.email}).data)


class ApiKeysApi(ProvisioningApiView):
    rate_limits = {"GET": "api_keys.list", "POST": "api_keys.create"}

    @extend_schema(
        summary="List an organization's API keys",
        responses={200: ApiKeyListOutput(many=True), **errors(401, 404, 429)},
        examples=tenant_examples.API_KEY_LIST,
    )
    def get(self, request, org_id):
        """Every API key of the organization, revoked ones included, with the value masked (its
        prefix then `****`), its platform, webhook settings and `lastUsedAt`.

        Called by the parent platform with `X-Provisioning-Secret` (120 an hour).

        Errors: 401 `Missing X-Provisioning-Secret header`, `Invalid provisioning secret`; 404
        `Organization not found`; 429 `Too many requests`."""
        organization = tenant_selectors.organization_get(organization_id=org_id)
        keys = tenant_selectors.api_key_list(organization_id=organization.id)
        return Response(ApiKeyListOutput(keys, many=True).data)

    @extend_schema(
        summary="Issue an API key for an organization",
        request=ApiKeyCreateInput,
        responses={201: ApiKeyIssuedOutput, **errors(400, 401, 404, 409, 429)},
        examples=tenant_examples.API_KEY_CREATE,
    )
    def post(self, request, org_id):
        """Issues a key of one platform for the organization (at most one active key per platform),
        with its webhook URL and events. The full `apiKey` and `webhookSecret` appear only here
        and in rotate: hand them to the integration now.

        Called by the parent platform with `X-Provisioning-Secret` (60 an hour).

        Errors: 400 `API key name is required`, an unknown platform or event, a webhookUrl that is
        not an absolute http(s) URL or resolves to a private address; 401 `Missing
        X-Provisioning-Secret header`, `Invalid provisioning secret`; 404 `Organization not found`;
        409 `A key for this platform already exists for this tenant; rotate or revoke it`; 429 `Too
        many requests`."""
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
        summary="Change an API key's name, platform or webhook settings",
        responses={200: ApiKeyListOutput, **errors(400, 401, 404, 409, 429)},
        operation_id="provisioning_organizations_api_keys_update",
        examples=tenant_examples.API_KEY_UPDATE,
    )
    def post(self, request, org_id, key_id):
        """Webhook URL update: changes any of name, platform, webhookUrl and webhookEvents (an array
        of event names, or null for every event). Fields left out keep their value; the answer is
        the key as listed.

        Called by the parent platform with `X-Provisioning-Secret` (60 an hour).

        Errors: 400 `API key name must not be empty`, an unknown platform or event, a bad
        webhookUrl; 401 `Missing X-Provisioning-Secret header`, `Invalid provisioning secret`; 404
        `Organization not found`, `API key not found`; 409 `API key is revoked`, or the platform is
        held by another active key; 429 `Too many requests`."""
        organization = tenant_selectors.organization_get(organization_id=org_id)
        api_key = tenant_selectors.api_key_get(organization_id=organization.id, key_id=key_id)
        serializer = valid_serializer(ApiKeyUpdateInput, request.data)
        updated = tenant_services.api_key_update(api_key=api_key, **serializer.service_arguments())
        return Response(ApiKeyListOutput(updated).data)

    @extend_schema(
        summary="Revoke an API key",
        responses={200: ApiKeyRevokedOutput, **errors(401, 404, 429)},
        examples=examples.API_KEY_REVOKE,
    )
    def delete(self, request, org_id, key_id):
        """Revokes the key at once, in every process (it answers 401 `Invalid API key` from then
        on) and frees its platform for a new key. Revoking a revoked key changes nothing.

        Called by the parent platform with `X-Provisioning-Secret` (60 an hour).

        Errors: 401 `Missing X-Provisioning-Secret header`, `Invalid provisioning secret`; 404
        `Organization not found`, `API key not found`; 429 `Too many requests`."""
        organization = tenant_selectors.organization_get(organization_id=org_id)
        api_key = tenant_selectors.api_key_get(organization_id=organization.id, key_id=key_id)
        revoked = tenant_services.api_key_revoke(api_key=api_key)
        return Response(ApiKeyRevokedOutput(revoked).data)


class ApiKeyRotateApi(ProvisioningApiView):
    rate_limits = {"POST": "api_keys.rotate"}

    @extend_schema(
        summary="Rotate an API key and its webhook secret",
        request=None,
        responses={200: ApiKeyRotatedOutput, **errors(401, 404, 409, 429)},
        examples=examples.API_KEY_ROTATE,
    )
    def post(self, request, org_id, key_id):
        """Issues a new value and a new webhook secret for the key (same id, platform and
        settings); the old value is refused at once. The answer shows both in full, once. Takes no
        body.

        Called by the parent platform with `X-Provisioning-Secret` (60 an hour).

        Errors: 401 `Missing X-Provisioning-Secret header`, `Invalid provisioning secret`; 404
        `Organization not found`, `API key not found`; 409 `API key is revoked`; 429 `Too many
        requests`."""
        organization = tenant_selectors.organization_get(organization_id=org_id)
        api_key = tenant_selectors.api_key_get(organization_id=organization.id, key_id=key_id)
        issued = tenant_services.api_key_rotate(api_key=api_key)
        return Response(ApiKeyRotatedOutput(issued).data)
