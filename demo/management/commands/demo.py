"""`manage.py demo`: a demo tenant with keys of every platform, idempotently (contract "Running
it"), and the requests to try them, webhooks included; for dispatch, depots on its dispatch
zones, three drivers and a day of partner orders to plan, and a courier app token.

The addresses printed follow `BIND`, as gunicorn reads it (`--base-url` overrides). The partner_a
key's webhook secret is printed in full although the API shows a secret only at create, rotate
and roll: the demo is a development tool holding the field key, and reads the secret back from
its encrypted copy as it does the key values; rotating it on every run instead would break a
receiver started with the previous run's secret.
"""

import os

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from couriers.demo import demo_courier_lines
from delivery.encryption import decrypt_text
from demo.webhook_lines import (
    DEFAULT_WEBHOOK_URL,
    base_url_from_bind,
    demo_webhook_lines,
    management_login_line,
)
from dispatch.demo import DemoDispatch, demo_dispatch_seed, demo_dispatcher_url, demo_plan_curl_line
from integrations.demo import demo_partner_curl_lines
from slots.demo import demo_slots_curl_lines, demo_slots_next_bookable, demo_slots_seed
from tenants import services
from tenants.models import ApiKey, Membership, Organization, OrgRole, Platform, User
from zones.demo import demo_zones_create
from zones.geometry import polygon_from_geodata

DEMO_SLUG = "demo"
DEMO_ADMIN_EMAIL = "admin@demo.example"
DEMO_ADMIN_PASSWORD = "demo-Password-2026"  # a development demo account, printed by design


class Command(BaseCommand):
    help = (
        "Creates (idempotently) the demo organization with its admin, keys of every platform,"
        " zones and slot templates, depots, drivers and a day of orders to dispatch, and prints"
        " the keys and example requests."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--base-url",
            default=None,
            help="The service's address in the printed requests (default: from BIND, as "
            "gunicorn listens; 0.0.0.0 prints as 127.0.0.1)",
        )
        parser.add_argument(
            "--webhook-url",
            default=DEFAULT_WEBHOOK_URL,
            help="Where the printed steps point the partner_a key's webhooks (the receiver of "
            "docs/webhooks.md listens there)",
        )

    def handle(self, *args, base_url: str | None, webhook_url: str, **options):
        base_url = base_url or base_url_from_bind(os.environ.get("BIND"))
        with transaction.atomic():
            organization = self._organization()
            self._admin(organization)
            api_keys = {platform: self._key(organization, platform) for platform in Platform.values}
            keys = {
                platform: decrypt_text(key.encrypted_value) for platform, key in api_keys.items()
            }
            zones = demo_zones_create(organization=organization)
            demo_slots_seed(organization=organization)
            dispatch = demo_dispatch_seed(
                organization=organization, api_key=api_keys["partner_a"], zones=zones
            )
            # A new courier token on every run (shown once, stored as a digest): see
            # couriers/demo.py.
            courier_lines = (
                demo_courier_lines(base_url=base_url, driver=dispatch.drivers[0], day=dispatch.day)
                if dispatch.drivers
                else []
            )
        partner_zone = next(zone for zone in zones if zone.purpose in ("dispatch", "both"))
        bookable = demo_slots_next_bookable(organization=organization)
        out = self.stdout.write
        out(self.style.SUCCESS(f"Demo organization: {organization.name} ({organization.id})"))
        out(f"Management login: {DEMO_ADMIN_EMAIL} / {DEMO_ADMIN_PASSWORD} (Django admin: /admin/)")
        out(f"Provisioning secret: {settings.PROVISIONING_SECRET}")
        for platform, value in keys.items():
            out(f"API key {platform:<10} {value}")
        out(f"Zones: {', '.join(zone.name for zone in zones)}")
        partner_key = api_keys["partner_a"]
        webhook_secret = decrypt_text(partner_key.encrypted_webhook_secret)
        out(f"Webhook secret of the partner_a key: {webhook_secret}")
        receiver_secret = self._x_service_signature_secret(partner_key, webhook_secret)
        if receiver_secret != webhook_secret:
            out(
                f"  (rolled: until {partner_key.previous_webhook_secret_expires_at:%Y-%m-%d %H:%M}"
                f" UTC X-Service-Signature is still keyed with {receiver_secret}; "
                "webhook-signature carries both)"
            )
        out("\nTry:")
        out(f"  curl -s {base_url}/readyz")
        out(
            f"  curl -s -H 'X-Provisioning-Secret: {settings.PROVISIONING_SECRET}' "
            f"{base_url}/api/provisioning/organizations"
        )
        out("\nWebhooks (partner_a key; docs/webhooks.md), pasted in this order:")
        for number, (what, line) in enumerate(
            demo_webhook_lines(
                base_url=base_url,
                organization_id=organization.id,
                api_key_id=partner_key.id,
                webhook_secret=receiver_secret,
                email=DEMO_ADMIN_EMAIL,
                password=DEMO_ADMIN_PASSWORD,
                webhook_url=webhook_url,
            ),
            start=1,
        ):
            out(f"  {number}. {what}")
            out(f"     {line}")
        out("\nPartner orders (partner_a key):")
        for line in demo_partner_curl_lines(
            base_url=base_url, api_key_value=keys["partner_a"], zone_name=partner_zone.name
        ):
            out(f"  {line}")
        if bookable is not None:
            out("\nSlot availability (standard key) and an ERP booking (erp key):")
            for line in demo_slots_curl_lines(
                base_url=base_url,
                erp_key_value=keys["erp"],
                standard_key_value=keys["standard"],
                zone_id=bookable.zone.id,
                template_id=bookable.template.id,
                date=bookable.date,
            ):
                out(f"  {line}")
        out("\nResolve an address to a zone (any key):")
        out(
            f"  curl -s -X POST -H 'X-API-Key: {keys['standard']}' -H 'Content-Type: "
            f'application/json\' -d \'{{"address": "{self._zone_point(partner_zone)}"}}\' '
            f"{base_url}/api/promises/resolve-zone"
        )
        self._dispatch_block(base_url, organization, dispatch, courier_lines)

    def _dispatch_block(
        self,
        base_url: str,
        organization: Organization,
        dispatch: DemoDispatch,
        courier_lines: list[tuple[str, str]],
    ) -> None:
        """The "Dispatch and couriers" block: the drivers and orders, the dispatcher's page,
        a plan of the orders' day through the management API, and the courier app."""
        out = self.stdout.write
        out("\nDispatch and couriers:")
        out(
            "  Depots: "
            + "; ".join(f"{zone.name}: {zone.depot_address}" for zone in dispatch.zones)
        )
        out(
            "  Drivers: "
            + ", ".join(
                f"{driver.name} ({driver.vehicle_type}, {driver.shift_start:%H:%M}-"
                f"{driver.shift_end:%H:%M})"
                for driver in dispatch.drivers
            )
        )
        if dispatch.day is not None:
            out(f"  Orders to plan on {dispatch.day.isoformat()}: {len(dispatch.orders)}")
        if dispatch.zones:
            out("  The dispatcher's page (Django admin, as the demo admin):")
            out(
                "     "
                + demo_dispatcher_url(base_url=base_url, zone=dispatch.zones[0], day=dispatch.day)
            )
        if dispatch.day is not None:
            out(f"  Plan {dispatch.day.isoformat()} through the management API:")
            out(
                "     "
                + management_login_line(
                    base_url=base_url, email=DEMO_ADMIN_EMAIL, password=DEMO_ADMIN_PASSWORD
                )
            )
            out(
                "     "
                + demo_plan_curl_line(
                    base_url=base_url, organization_id=organization.id, day=dispatch.day
                )
            )
        for what, line in courier_lines:
            out(f"  {what}")
            out(f"     {line}")

    @staticmethod
    def _x_service_signature_secret(api_key: ApiKey, webhook_secret: str) -> str:
        """The secret the receiver of docs/webhooks.md checks X-Service-Signature with: while a
        roll's overlap lasts, the replaced one (docs/webhooks.md "Rolling the secret")."""
        expires_at = api_key.previous_webhook_secret_expires_at
        if expires_at is None or expires_at <= timezone.now():
            return webhook_secret
        return decrypt_text(api_key.encrypted_previous_webhook_secret)

    @staticmethod
    def _zone_point(zone) -> str:
        point = polygon_from_geodata(zone.geodata).representative_point()
        return f"{point.y:.6f},{point.x:.6f}"

    def _organization(self) -> Organization:
        organization = Organization.objects.filter(slug=DEMO_SLUG).first()
        return organization or services.organization_create(name="Demo Deliveries", slug=DEMO_SLUG)

    def _admin(self, organization: Organization) -> None:
        user = User.objects.filter(email=DEMO_ADMIN_EMAIL).first()
        if user is None:
            user = User.objects.create_user(
                email=DEMO_ADMIN_EMAIL, password=DEMO_ADMIN_PASSWORD, name="Demo Admin"
            )
        Membership.objects.update_or_create(
            organization=organization,
            user=user,
            defaults={"org_role": OrgRole.ADMIN, "is_active": True},
        )

    def _key(self, organization: Organization, platform: str) -> ApiKey:
        """The organization's active key of `platform`, created the first time. The demo is a
        development tool: its caller reads the value and secret back from their encrypted
        copies."""
        existing = ApiKey.objects.filter(
            organization=organization, platform=platform, is_active=True
        ).first()
        if existing is not None:
            return existing
        return services.api_key_create(
            organization_id=organization.id, name=f"Demo {platform}", platform=platform
        ).api_key
