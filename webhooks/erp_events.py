"""Payload builders of the ERP family's events (contract "Webhooks", contract "Webhooks").

Called by the zones and slots services inside their transactions. `erp.polygon.updated` and
`erp.slots.updated` carry hour-bucketed ids (UTC) and coalesce while unsent; both carry the
`updatedAt` of the change, which tells a newer snapshot under the same id from an older one.
"""

from datetime import UTC, datetime
from datetime import date as date_type

from django.utils import timezone
from rest_framework.fields import DateTimeField

from webhooks import catalog, services
from webhooks.models import Family

POLYGON_UPDATED = catalog.ERP_POLYGON_UPDATED
SLOTS_UPDATED = catalog.ERP_SLOTS_UPDATED
SLOT_BOOKED = catalog.ERP_SLOT_BOOKED

_timestamp = DateTimeField()


def hour_bucket(moment: datetime | None = None) -> str:
    """`YYYY-MM-DDTHH` of `moment` (default now) in UTC."""
    moment = (moment or timezone.now()).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H")


def hour_bucket_event_id(event: str, zone_id, moment: datetime | None = None) -> str:
    return f"{event}:{zone_id}:{hour_bucket(moment)}"


def _iso(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return _timestamp.to_representation(value)
    if isinstance(value, date_type):
        return value.isoformat()
    return str(value)


def polygon_updated_emit(*, zone, deleted: bool = False) -> None:
    """`erp.polygon.updated` for a zone created, updated or (with `deleted=True`) deleted."""
    payload = {
        "polygon_id": str(zone.id),
        "polygon_name": zone.name,
        "geodata": zone.geodata,
        "enabled": zone.enabled,
        "zone_purpose": zone.purpose,
        "updatedAt": _iso(getattr(zone, "updated_at", None) or timezone.now()),
    }
    if deleted:
        payload["deleted"] = True
    services.event_emit(
        organization_id=zone.organization_id,
        family=Family.ERP,
        event=POLYGON_UPDATED,
        event_id=hour_bucket_event_id(POLYGON_UPDATED, zone.id),
        payload=payload,
        coalesce=True,
    )


def slots_updated_emit(
    *, zone, slots: list[dict], availability: list[dict], updated_at: datetime | None = None
) -> None:
    """`erp.slots.updated`: the zone's templates (`slots`) and `availability` as built by the
    slots service (items as in the contract's table), and `updatedAt`, the moment of the
    change (default now): a newer change in the same hour goes out under the same id with a
    later `updatedAt`, so receivers apply these snapshots when newer (docs/contract.md
    "Webhooks")."""
    services.event_emit(
        organization_id=zone.organization_id,
        family=Family.ERP,
        event=SLOTS_UPDATED,
        event_id=hour_bucket_event_id(SLOTS_UPDATED, zone.id),
        payload={
            "polygon_id": str(zone.id),
            "polygon_name": zone.name,
            "zone_purpose": zone.purpose,
            "geodata": zone.geodata,
            "slots": slots,
            "availability": availability,
            "updatedAt": _iso(updated_at or timezone.now()),
        },
        coalesce=True,
    )


def slot_booked_emit(
    *,
    organization_id,
    zone,
    order_id,
    template_id,
    date,
    booked: int,
    capacity: int,
    available: int,
    updated_at,
) -> None:
    """`erp.slot.booked` (id `erp.slot.booked:<order_id>`) when an order books a slot."""
    services.event_emit(
        organization_id=organization_id,
        family=Family.ERP,
        event=SLOT_BOOKED,
        event_id=f"{SLOT_BOOKED}:{order_id}",
        payload={
            "polygon_id": str(zone.id),
            "polygon_name": zone.name,
            "order_id": str(order_id),
            "template_id": str(template_id),
            "date": _iso(date),
            "booked": booked,
            "capacity": capacity,
            "available": available,
            "updatedAt": _iso(updated_at),
        },
    )
