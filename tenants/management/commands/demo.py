"""`manage.py demo`: a demo tenant with keys of every platform, idempotently (decisions §10)."""

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction

from delivery.encryption import decrypt_text
from tenants import services
from tenants.models import ApiKey, Membership, Organization, OrgRole, Platform, User

DEMO_SLUG = "demo"
DEMO_ADMIN_EMAIL = "admin@demo.example"
DEMO_ADMIN_PASSWORD = "demo-Password-2026"  # a development demo account, printed by design


class Command(BaseCommand):
    help = "Creates (idempotently) the demo organization, its admin and keys, and prints them."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    def handle(self, *args, base_url: str, **options):
        with transaction.atomic():
            organization = self._organization()
            self._admin(organization)
            keys = {
                platform: self._key_value(organization, platform) for platform in Platform.values
            }
        out = self.stdout.write
        out(self.style.SUCCESS(f"Demo organization: {organization.name} ({organization.id})"))
        out(f"Management login: {DEMO_ADMIN_EMAIL} / {DEMO_ADMIN_PASSWORD} (Django admin: /admin/)")
        out(f"Provisioning secret: {settings.PROVISIONING_SECRET}")
        for platform, value in keys.items():
            out(f"API key {platform:<10} {value}")
        out("\nTry:")
        out(f"  curl -s {base_url}/readyz")
        out(
            f"  curl -s -H 'X-Provisioning-Secret: {settings.PROVISIONING_SECRET}' "
            f"{base_url}/api/provisioning/organizations"
        )
        out(
            f"  curl -s -H 'X-Provisioning-Secret: {settings.PROVISIONING_SECRET}' "
            f"{base_url}/api/provisioning/organizations/{organization.id}/api-keys"
        )

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

    def _key_value(self, organization: Organization, platform: str) -> str:
        existing = ApiKey.objects.filter(
            organization=organization, platform=platform, is_active=True
        ).first()
        if existing is not None:
            # The demo is a development tool: it reads the value back from its encrypted copy.
            return decrypt_text(existing.encrypted_value)
        issued = services.api_key_create(
            organization=organization, name=f"Demo {platform}", platform=platform
        )
        return issued.value
