from rest_framework import serializers

from delivery.fields import (
    SingleLineTextField,
    StrictBooleanField,
    StrictCharField,
    StrictEmailField,
    declare,
    required_messages,
)
from tenants.services import SLUG_MAX_LENGTH, SLUG_PATTERN

#: Names that reach the invite e-mail (the organization's in its subject, the admin's in its
#: greeting) stay on one line: a line break in a header would make the e-mail unsendable.
NAME_MAX_LENGTH = 200


#: What the password validators (settings.AUTH_PASSWORD_VALIDATORS) refuse that a schema can
#: state: fewer than 10 characters, only digits. Common and user-like passwords it cannot.
PASSWORD_CONSTRAINTS = {"minLength": 10, "pattern": "[^0-9]"}


def _email(label: str) -> StrictEmailField:
    """An admin's e-mail; its messages name it as the caller wrote it (`admin.email`)."""
    return StrictEmailField(
        error_messages=required_messages(
            f"{label} is required", email=f"{label} must be a valid e-mail address"
        )
    )


def _admin_name(label: str) -> SingleLineTextField:
    return SingleLineTextField(label, NAME_MAX_LENGTH, required=False, allow_blank=True, default="")


class AdminInput(serializers.Serializer):
    email = _email("admin.email")
    name = _admin_name("admin.name")


class OrganizationCreateInput(serializers.Serializer):
    name = SingleLineTextField(
        "name",
        NAME_MAX_LENGTH,
        error_messages=required_messages("Organization name is required"),
    )
    slug = declare(
        StrictCharField(required=False, allow_null=True, max_length=200),
        maxLength=SLUG_MAX_LENGTH,
        pattern=SLUG_PATTERN.pattern,
    )
    admin = AdminInput(
        error_messages={"required": "admin.email is required", "null": "admin.email is required"}
    )


class OrganizationUpdateInput(serializers.Serializer):
    name = SingleLineTextField(
        "name",
        NAME_MAX_LENGTH,
        required=False,
        error_messages={
            "blank": "Organization name is required",
            "null": "Organization name is required",
        },
    )
    isActive = StrictBooleanField(required=False, source="is_active")


class AdminAddInput(serializers.Serializer):
    email = _email("email")
    name = _admin_name("name")


class PasswordResetInput(serializers.Serializer):
    password = declare(
        StrictCharField(required=False, max_length=4096, trim_whitespace=False),
        **PASSWORD_CONSTRAINTS,
    )


class InviteAcceptInput(serializers.Serializer):
    password = declare(
        StrictCharField(
            max_length=4096,
            trim_whitespace=False,
            error_messages=required_messages("password is required"),
        ),
        **PASSWORD_CONSTRAINTS,
    )


class OrganizationOutput(serializers.Serializer):
    id = serializers.UUIDField()
    slug = serializers.CharField()
    name = serializers.CharField()
    isActive = serializers.BooleanField(source="is_active")
    createdAt = serializers.DateTimeField(source="created_at")


# The user of a membership or of a provisioning result: id, email and name first. (No docstring:
# the subclasses would carry it into the schema as their description.)
class _MemberUserOutput(serializers.Serializer):
    id = serializers.UUIDField(source="user.id")
    email = serializers.EmailField(source="user.email")
    name = serializers.CharField(source="user.name")


class OrganizationAdminOutput(_MemberUserOutput):
    orgRole = serializers.CharField(source="org_role")
    invitePending = serializers.SerializerMethodField()

    def get_invitePending(self, membership) -> bool:  # noqa: N802 - the contract's field name
        return not membership.is_active


class OrganizationCountsOutput(serializers.Serializer):
    members = serializers.IntegerField(source="members_count")
    drivers = serializers.IntegerField(source="drivers_count")
    orders = serializers.IntegerField(source="orders_count")


class OrganizationListItemOutput(OrganizationOutput):
    counts = OrganizationCountsOutput(source="*")
    admins = OrganizationAdminOutput(source="admin_memberships", many=True)


class InviteOutput(serializers.Serializer):
    expiresAt = serializers.DateTimeField(source="invite.expires_at")
    emailSent = serializers.BooleanField(source="email_sent")


class ProvisionedAdminOutput(_MemberUserOutput):
    isNewUser = serializers.BooleanField(source="is_new_user")


class AddedAdminOutput(ProvisionedAdminOutput):
    alreadyMember = serializers.BooleanField(source="already_member")


class OrganizationCreatedOutput(serializers.Serializer):
    organization = OrganizationOutput()
    admin = ProvisionedAdminOutput(source="*")
    invite = InviteOutput(allow_null=True)


class AdminAddedOutput(serializers.Serializer):
    admin = AddedAdminOutput(source="*")
    invite = InviteOutput(allow_null=True)


class UserBriefOutput(serializers.Serializer):
    id = serializers.UUIDField()
    email = serializers.EmailField()
    name = serializers.CharField()


class InviteResentOutput(serializers.Serializer):
    admin = UserBriefOutput(source="invite.user")
    invite = InviteOutput(source="*")


class PasswordResetOutput(serializers.Serializer):
    ok = serializers.BooleanField()
    email = serializers.EmailField()
    temporaryPassword = serializers.CharField(required=False)


class InviteAcceptedOutput(serializers.Serializer):
    ok = serializers.BooleanField()
    email = serializers.EmailField()


class InviteOrganizationOutput(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    slug = serializers.CharField()


class InviteReadOutput(serializers.Serializer):
    email = serializers.EmailField(source="user.email")
    name = serializers.CharField(source="user.name")
    organization = InviteOrganizationOutput()
    expiresAt = serializers.DateTimeField(source="expires_at")
    status = serializers.CharField()
