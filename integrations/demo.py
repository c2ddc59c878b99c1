"""Ready-to-paste `curl` commands for the partner family, printed by `manage.py demo` (contract
"Running it")."""

import json
import secrets
import shlex
from datetime import timedelta
from urllib.parse import quote, urlencode

from django.utils import timezone

from integrations import windows
from tenants import selectors as tenant_selectors
from zones import selectors as zone_selectors
from zones.geometry import polygon_from_geodata

PARTNER_BASE = "/api/integrations/partner-a"


def _next_delivery_day(tz):
    day = timezone.now().astimezone(tz).date() + timedelta(days=1)
    while not windows.windows_for_day(day, tz):
        day += timedelta(days=1)
    return day


def demo_partner_curl_lines(*, base_url: str, api_key_value: str, zone_name: str) -> list[str]:
    """curl commands that create a partner order, read it back and list delivery windows.

    `base_url` is the service's address without `/api` (as `manage.py demo --base-url`);
    `api_key_value` a `partner_a` key; `zone_name` a zone of the key's organization. The order
    drops off inside the zone, in the first window of the next delivery day, with an
    Idempotency-Key, so pasting the create command twice shows the replay.
    """
    base_url = base_url.rstrip("/")
    principal = tenant_selectors.api_key_authenticate(value=api_key_value)
    zone = zone_selectors.zone_get_by_name(
        organization_id=principal.organization_id, name=zone_name
    )
    inside = polygon_from_geodata(zone.geodata).representative_point()
    tz = windows.zone_tz(zone.timezone)
    day = _next_delivery_day(tz)
    window = windows.windows_for_day(day, tz)[0]
    external_ref = f"DEMO-{secrets.token_hex(3).upper()}"
    body = {
        "externalRef": external_ref,
        "pickupAddress": "Demo warehouse",
        "pickupLat": round(inside.y, 6),
        "pickupLng": round(inside.x, 6),
        "dropoffAddress": "Demo customer",
        "dropoffLat": round(inside.y, 6),
        "dropoffLng": round(inside.x, 6),
        "recipientName": "Demo Recipient",
        "recipientPhone": "+4915112345678",
        "packageSize": "small",
        "weightKg": 2.5,
        "temperatureClass": "Ambient",
        "deliveryZone": zone.name,
        "deliveryWindowStart": window.start.isoformat(),
        "notes": "Leave at the door",
    }
    key_header = shlex.quote(f"X-API-Key: {api_key_value}")
    orders = f"{base_url}{PARTNER_BASE}/orders"
    windows_query = urlencode({"zone": zone.name, "date": day.isoformat()})
    order_url = f"{orders}/{quote(external_ref, safe='')}"
    windows_url = f"{base_url}{PARTNER_BASE}/delivery-windows?{windows_query}"
    return [
        f"curl -s -X POST {shlex.quote(orders)} -H {key_header} "
        f"-H 'Content-Type: application/json' "
        f"-H {shlex.quote(f'Idempotency-Key: {external_ref}-create')} "
        f"-d {shlex.quote(json.dumps(body))}",
        f"curl -s {shlex.quote(order_url)} -H {key_header}",
        f"curl -s {shlex.quote(windows_url)} -H {key_header}",
    ]
