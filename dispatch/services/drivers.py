"""Drivers as dispatch sees them (contract "Dispatch"): the tenants' driver plus the zones it
serves (`DriverZone`, kept here because drivers sit below zones in the layers)."""

from collections.abc import Iterable
from uuid import UUID

from django.db import transaction

from dispatch.models import DriverZone
from tenants import services as tenant_services
from tenants.models import Driver
from zones import selectors as zone_selectors


def _zones_of_organization(*, organization_id: UUID | str, zone_ids: Iterable[UUID | str]):
    """The zones `zone_ids` names, each the organization's (404 `Zone not found` otherwise)."""
    zones = {}
    for zone_id in zone_ids:
        zone = zone_selectors.zone_get(organization_id=organization_id, zone_id=zone_id)
        zones[zone.id] = zone
    return list(zones.values())


def _zones_set(*, driver: Driver, zone_ids: list) -> None:
    zones = _zones_of_organization(organization_id=driver.organization_id, zone_ids=zone_ids)
    DriverZone.objects.filter(driver=driver).exclude(zone__in=zones).delete()
    DriverZone.objects.bulk_create(
        [DriverZone(driver=driver, zone=zone) for zone in zones], ignore_conflicts=True
    )


@transaction.atomic
def driver_create(*, organization_id: UUID | str, zone_ids: list | None = None, **fields) -> Driver:
    """A new driver (the fields of `tenants.services.driver_create`) serving `zone_ids` (none:
    every zone of the organization)."""
    driver = tenant_services.driver_create(organization_id=organization_id, **fields)
    if zone_ids:
        _zones_set(driver=driver, zone_ids=zone_ids)
    return driver


@transaction.atomic
def driver_update(*, driver: Driver, zone_ids: list | None = None, **changes) -> Driver:
    """Changes the fields given; `zone_ids` (when given) replaces the zones served."""
    driver = Driver.objects.select_for_update().get(pk=driver.pk)
    driver = tenant_services.driver_update(driver=driver, **changes)
    if zone_ids is not None:
        _zones_set(driver=driver, zone_ids=zone_ids)
    return driver
