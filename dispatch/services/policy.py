"""The dispatch policy (contract "Dispatch"): one per organization, created with the defaults."""

from uuid import UUID

from django.db import IntegrityError, transaction
from django.utils import timezone

from dispatch.models import DispatchPolicy

_POLICY_FIELDS = (
    "service_minutes",
    "travel_speed_kmh",
    "detour_factor",
    "auto_dispatch",
    "auto_dispatch_lead_minutes",
    "require_signature",
    "require_photo",
    "max_attempts",
)


def dispatch_policy_get_or_create(*, organization_id: UUID | str) -> DispatchPolicy:
    """The organization's dispatch policy, created with the defaults the first time it is read
    (concurrent first calls create one row: the one-to-one key decides)."""
    policy = DispatchPolicy.objects.filter(organization_id=organization_id).first()
    if policy is not None:
        return policy
    try:
        with transaction.atomic():
            return DispatchPolicy.objects.create(organization_id=organization_id)
    except IntegrityError:
        return DispatchPolicy.objects.get(organization_id=organization_id)


@transaction.atomic
def dispatch_policy_update(
    *, organization_id: UUID | str, **changes: int | float | str | bool
) -> DispatchPolicy:
    """Changes the given fields of the policy; the others keep their values."""
    unknown = set(changes) - set(_POLICY_FIELDS)
    if unknown:
        raise ValueError(f"unknown dispatch policy fields: {sorted(unknown)}")
    dispatch_policy_get_or_create(organization_id=organization_id)
    policy = DispatchPolicy.objects.select_for_update().get(organization_id=organization_id)
    for field, value in changes.items():
        setattr(policy, field, value)
    policy.updated_at = timezone.now()
    policy.save()
    return policy
