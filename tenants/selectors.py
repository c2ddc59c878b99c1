"""Reads on organizations, users, API keys and tokens."""

from typing import TypeVar
from uuid import UUID

from django.db.models import Count, IntegerField, Model, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from delivery.fields import parse_uuid
from tenants import keycache
from tenants.errors import (
    ApiKeyInvalid,
    ApiKeyNotFound,
    DriverNotFound,
    InvalidToken,
    OrganizationNotFound,
    UserNotFound,
)
from tenants.keycache import ApiKeyPrincipal
from tenants.models import ApiKey, AuthToken, Driver, Organization, OrgRole, User
from tenants.services import secret_digest

M = TypeVar("M", bound=Model)


def _row_by_id(queryset: QuerySet[M], row_id: UUID | str, *, missing: type[Exception]) -> M:
    """The row `row_id` of `queryset`; raises `missing` (a 404) for a malformed id as for an
    unknown one (contract "Errors")."""
    parsed = parse_uuid(row_id)
    row = queryset.filter(pk=parsed).first() if parsed else None
    if row is None:
        raise missing()
    return row


def organization_get(*, organization_id: UUID | str) -> Organization:
    """404 for a malformed or unknown id alike (contract "Errors")."""
    return _row_by_id(Organization.objects.all(), organization_id, missing=OrganizationNotFound)


def user_get(*, user_id: UUID | str) -> User:
    return _row_by_id(User.objects.all(), user_id, missing=UserNotFound)


def count_per_organization(queryset: QuerySet) -> Coalesce:
    """A correlated COUNT subquery over `queryset` (rows with an `organization` foreign key).

    Used as an annotation, it counts for the whole list in the same SQL statement.
    """
    return Coalesce(
        Subquery(
            queryset.filter(organization=OuterRef("pk"))
            .order_by()
            .values("organization")
            .annotate(n=Count("pk"))
            .values("n")[:1],
            output_field=IntegerField(),
        ),
        Value(0),
    )


def api_key_list(*, organization_id: UUID | str) -> QuerySet[ApiKey]:
    return ApiKey.objects.filter(organization_id=organization_id).order_by("created_at", "id")


def api_key_get(*, organization_id: UUID | str, key_id: UUID | str) -> ApiKey:
    return _row_by_id(
        ApiKey.objects.filter(organization_id=organization_id), key_id, missing=ApiKeyNotFound
    )


def api_key_authenticate(*, value: str) -> ApiKeyPrincipal:
    """Resolves an X-API-Key value: through the key cache (tenants/keycache.py), else one
    database query. An unknown value is never cached."""
    digest = secret_digest(value)

    def load() -> dict | None:
        row = (
            ApiKey.objects.filter(digest=digest, is_active=True, organization__is_active=True)
            .values("id", "organization_id", "platform", "name")
            .first()
        )
        if row is None:
            return None
        return {
            "key_id": str(row["id"]),
            "organization_id": str(row["organization_id"]),
            "platform": row["platform"],
            "name": row["name"],
        }

    fields = keycache.through(f"apikey:{digest}", load, keep_missing=False)
    if fields is None:
        raise ApiKeyInvalid()
    return ApiKeyPrincipal(**fields)


def webhook_destination(
    *, organization_id: UUID | str, platform: str
) -> tuple[UUID, str, list[str] | None] | None:
    """(key id, webhook URL, webhook events) of the organization's active key of `platform`,
    or None when it has none; through the key cache (tenants/keycache.py)."""

    def load():
        keys = ApiKey.objects.filter(
            organization_id=organization_id, platform=platform, is_active=True
        )
        # One active key per platform (the model's constraint).
        return next(iter(keys.values_list("pk", "webhook_url", "webhook_events")), None)

    entry_key = f"webhook-destination:{organization_id}:{platform}"
    return keycache.through(entry_key, load, keep_missing=True)


def auth_token_get(*, value: str) -> AuthToken:
    token = (
        AuthToken.objects.select_related("user")
        .filter(digest=secret_digest(value), expires_at__gt=timezone.now(), user__is_active=True)
        .first()
    )
    if token is None:
        raise InvalidToken()
    return token


def token_administers(*, value: str, organization_id: UUID | str) -> bool:
    """Whether the management bearer token `value` is valid and its user administers the
    organization `organization_id` (one query; what the management views check in two)."""
    parsed = parse_uuid(organization_id)
    if parsed is None:
        return False
    return AuthToken.objects.filter(
        digest=secret_digest(value),
        expires_at__gt=timezone.now(),
        user__is_active=True,
        user__memberships__organization_id=parsed,
        user__memberships__organization__is_active=True,
        user__memberships__is_active=True,
        user__memberships__org_role=OrgRole.ADMIN,
    ).exists()


def admin_organizations(*, user: User) -> QuerySet[Organization]:
    """Active organizations the user is an active admin of (an inactive one is unknown)."""
    return Organization.objects.filter(
        is_active=True,
        memberships__user=user,
        memberships__is_active=True,
        memberships__org_role=OrgRole.ADMIN,
    ).order_by("created_at", "id")


def admin_organization_get(*, user: User, organization_id: UUID | str) -> Organization:
    """The organization in a management path, if `user` administers it; else 404 (contract
    "Authentication and scope")."""
    return _row_by_id(admin_organizations(user=user), organization_id, missing=OrganizationNotFound)


def driver_list(*, organization_id: UUID | str) -> QuerySet[Driver]:
    return Driver.objects.filter(organization_id=organization_id).order_by("name", "id")


def driver_get(*, organization_id: UUID | str, driver_id: UUID | str) -> Driver:
    return _row_by_id(
        Driver.objects.filter(organization_id=organization_id), driver_id, missing=DriverNotFound
    )
