"""What `manage.py demo` needs from slots (contract "Running it"): seeded templates, and example
availability and ERP booking requests to print."""

import json
import shlex
import uuid
from dataclasses import dataclass
from datetime import date, timedelta

from django.utils import timezone

from slots import selectors
from slots.models import SlotTemplate
from slots.services import templates as template_services
from tenants.models import Organization
from zones.geometry import polygon_from_geodata
from zones.models import Zone

#: how far ahead `demo_slots_next_bookable` looks for a bookable slot
LOOKAHEAD_DAYS = 14


def demo_slots_seed(*, organization: Organization) -> None:
    """Seeds the policy's templates (days 0-4, 08:00-20:00) for every slot zone of the
    organization; running it again creates nothing new."""
    template_services.slot_policy_get_or_create(organization_id=organization.id)
    template_services.slot_templates_seed(organization_id=organization.id)


@dataclass(frozen=True)
class DemoSlot:
    zone: Zone
    template: SlotTemplate
    date: date


def demo_slots_next_bookable(*, organization: Organization) -> DemoSlot | None:
    """The first bookable slot of the organization's enabled slot zones in the next two weeks
    (for the example requests), or None."""
    zones = Zone.objects.filter(
        organization=organization, enabled=True, slot_templates__deleted_at=None
    ).distinct()
    for zone in zones.order_by("name", "id"):
        today = selectors.zone_today(zone=zone)
        days = selectors.zone_availability(
            zone=zone, first=today, last=today + timedelta(days=LOOKAHEAD_DAYS - 1)
        )
        for day in days:
            for entry in day.slots:
                if entry.bookable:
                    return DemoSlot(zone=zone, template=entry.template, date=day.date)
    return None


def _inside_point(zone_id) -> tuple[float, float]:
    """(lat, lng) of a point inside the zone's polygon (0, 0 for an unknown zone)."""
    zone = Zone.objects.filter(pk=zone_id).only("geodata").first()
    if zone is None:
        return 0.0, 0.0
    point = polygon_from_geodata(zone.geodata).representative_point()
    return round(point.y, 6), round(point.x, 6)


def demo_slots_curl_lines(
    *,
    base_url: str,
    erp_key_value: str,
    standard_key_value: str,
    zone_id,
    template_id,
    date: date,
) -> list[str]:
    """`curl` lines: bulk and single-date availability (standard key), then an ERP booking on
    `template_id` and `date` with a dropoff inside the zone, and reading that order back."""
    api = f"{base_url.rstrip('/')}/api"
    first = date.isoformat()
    last = (date + timedelta(days=6)).isoformat()
    lat, lng = _inside_point(zone_id)
    external_ref = f"DEMO-{timezone.now():%Y%m%d}-{uuid.uuid4().hex[:6].upper()}"
    body = json.dumps(
        {
            "externalRef": external_ref,
            "dropoffAddress": "1 Demo Street",
            "dropoffLat": lat,
            "dropoffLng": lng,
            "recipientName": "Dana Demo",
            "recipientPhone": "+15550100200",
            "deliverySlotTemplateId": str(template_id),
            "deliverySlotDate": first,
        }
    )
    standard = shlex.quote(f"X-API-Key: {standard_key_value}")
    erp = shlex.quote(f"X-API-Key: {erp_key_value}")
    bulk_url = shlex.quote(
        f"{api}/public/delivery-slots/availability/bulk"
        f"?zoneId={zone_id}&startDate={first}&endDate={last}"
    )
    day_url = shlex.quote(f"{api}/public/delivery-slots/availability?zoneId={zone_id}&date={first}")
    return [
        f"curl -s -H {standard} {bulk_url}",
        f"curl -s -H {standard} {day_url}",
        f"curl -s -X POST -H {erp} -H 'Content-Type: application/json' "
        f"-d {shlex.quote(body)} {api}/integrations/erp/orders",
        f"curl -s -H {erp} {api}/integrations/erp/orders/{external_ref}",
    ]
