"""Populated organizations built once per test module (committed), each test still running in
its own transaction: whatever a test changes is rolled back, the worlds stay as built."""

import pytest
from django.core.cache import cache
from django.test import Client, override_settings

from integrations.models import Order
from slots.models import SlotBooking
from tenants.models import Organization, User
from tests.core.world import World, build_world

#: the service's own packages, bottom floor first (docs/architecture.md)
APP_PACKAGES = (
    "delivery",
    "tenants",
    "webhooks",
    "zones",
    "slots",
    "integrations",
    "dispatch",
    "couriers",
    "tracking",
    "provisioning",
    "demo",
    "service",
)

FAST = {
    "RATELIMIT_ENABLE": False,
    "PASSWORD_HASHERS": ["django.contrib.auth.hashers.MD5PasswordHasher"],
}


def _remove(worlds: tuple[World, ...]) -> None:
    for world in worlds:
        emails = list(
            User.objects.filter(memberships__organization=world.organization).values_list(
                "email", flat=True
            )
        )
        # Bookings restrict their orders, orders protect their zones: those first.
        SlotBooking.objects.filter(organization=world.organization).delete()
        Order.objects.filter(organization=world.organization).delete()
        Organization.objects.filter(pk=world.organization.pk).delete()
        User.objects.filter(email__in=emails).delete()


@pytest.fixture(scope="module")
def module_worlds(django_db_setup, django_db_blocker):
    """Two organizations ("ours" and "theirs") with one of everything, for a whole module."""
    with django_db_blocker.unblock(), override_settings(**FAST):
        cache.clear()
        worlds = (build_world("Ours"), build_world("Theirs"))
    yield worlds
    with django_db_blocker.unblock():
        _remove(worlds)


@pytest.fixture
def fast(settings):
    for name, value in FAST.items():
        setattr(settings, name, value)
    return settings


@pytest.fixture
def world(module_worlds, fast, db) -> World:
    return module_worlds[0]


@pytest.fixture
def two_worlds(module_worlds, fast, db) -> tuple[World, World]:
    return module_worlds


@pytest.fixture(scope="module")
def document(django_db_blocker) -> dict:
    """The service's OpenAPI document (/api/schema/) as JSON, generated once per module."""
    with django_db_blocker.unblock():
        response = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()
