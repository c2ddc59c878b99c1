"""Point-in-zone selectors and the spatial index cache (contract "Slots and windows"): what other
apps call."""

from datetime import date

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests import builders
from zones import selectors, services, spatial_index
from zones.errors import ZoneBlackedOut, ZoneNameNotFound, ZoneNotFound
from zones.models import SLOT_PURPOSES, Zone, ZonePurpose

pytestmark = pytest.mark.django_db


def at_berlin(organization) -> dict:
    """The keyword arguments of a lookup of Alexanderplatz among `organization`'s zones."""
    return {
        "organization_id": organization.id,
        "lat": builders.BERLIN[0],
        "lng": builders.BERLIN[1],
    }


@pytest.fixture
def nested(organization):
    """Three zones around Alexanderplatz: 4 km (both), 2 km (slot), 400 m (dispatch)."""
    return {
        "big": builders.zone(
            organization, "Big", builders.box(*builders.BERLIN, width_m=4000, height_m=4000)
        ),
        "middle": builders.zone(
            organization,
            "Middle",
            builders.box(*builders.BERLIN, width_m=2000, height_m=2000),
            purpose=ZonePurpose.SLOT,
        ),
        "small": builders.zone(
            organization,
            "Small",
            builders.box(*builders.BERLIN, width_m=400, height_m=400),
            purpose=ZonePurpose.DISPATCH,
        ),
    }


def names(zones):
    return [zone.name for zone in zones]


def test_zones_containing_point_smallest_first(organization, nested):
    found = selectors.zones_containing_point(
        organization_id=organization.id, lat=builders.BERLIN[0], lng=builders.BERLIN[1]
    )
    assert names(found) == ["Small", "Middle", "Big"]
    assert all(isinstance(zone, Zone) for zone in found)


def test_zone_containing_point_is_the_smallest(organization, nested):
    zone = selectors.zone_containing_point(
        organization_id=str(organization.id), lat=builders.BERLIN[0], lng=builders.BERLIN[1]
    )
    assert zone == nested["small"]


def test_purposes_filter(organization, nested):
    zone = selectors.zone_containing_point(
        organization_id=organization.id,
        lat=builders.BERLIN[0],
        lng=builders.BERLIN[1],
        purposes=SLOT_PURPOSES,
    )
    assert zone == nested["middle"]


def test_disabled_zones_only_on_request(organization, nested):
    services.zone_update(zone=nested["small"], enabled=False)
    point = at_berlin(organization)
    assert names(selectors.zones_containing_point(**point)) == ["Middle", "Big"]
    assert names(selectors.zones_containing_point(**point, enabled_only=False)) == [
        "Small",
        "Middle",
        "Big",
    ]


def test_point_outside_every_zone_is_none(organization, nested):
    far = builders.offset(*builders.BERLIN, east_m=3000)
    assert (
        selectors.zone_containing_point(organization_id=organization.id, lat=far[0], lng=far[1])
        is None
    )


def test_boundary_counts_as_inside(organization):
    zone = builders.zone(
        organization, "Square", builders.box(*builders.BERLIN, width_m=1000, height_m=1000)
    )
    lng, lat = zone.geodata["coordinates"][0][0]  # a corner
    assert (
        selectors.zone_containing_point(organization_id=organization.id, lat=lat, lng=lng) == zone
    )


def test_other_organizations_are_never_searched(organization, nested):
    other = builders.organization()
    assert (
        selectors.zones_containing_point(
            organization_id=other.id, lat=builders.BERLIN[0], lng=builders.BERLIN[1]
        )
        == []
    )


def test_returned_zones_are_private_copies(organization, nested):
    first = selectors.zone_containing_point(
        organization_id=organization.id, lat=builders.BERLIN[0], lng=builders.BERLIN[1]
    )
    first.name = "Mutated"
    first.geodata["coordinates"][0].clear()
    again = selectors.zone_containing_point(
        organization_id=organization.id, lat=builders.BERLIN[0], lng=builders.BERLIN[1]
    )
    assert again.name == "Small"
    assert len(again.geodata["coordinates"][0]) == 5


def test_zone_get_and_by_name(organization, nested):
    zone = nested["middle"]
    assert selectors.zone_get(organization_id=organization.id, zone_id=str(zone.id)) == zone
    assert selectors.zone_get_by_name(organization_id=organization.id, name="Middle") == zone
    other = builders.organization()
    for zone_id in (zone.id, "nope", None):
        with pytest.raises(ZoneNotFound) as raised:
            selectors.zone_get(organization_id=other.id, zone_id=zone_id)
        assert raised.value.message == "Zone not found"
    with pytest.raises(ZoneNameNotFound) as raised:
        selectors.zone_get_by_name(organization_id=other.id, name="Middle")
    assert (raised.value.status_code, raised.value.message) == (404, "Zone Middle not found")


# ----- the cache -----


def committed_zone(django_capture_on_commit_callbacks, organization, name, geodata):
    with django_capture_on_commit_callbacks(execute=True):
        return builders.zone(organization, name, geodata)


def committed_z(django_capture_on_commit_callbacks, organization):
    """A 400 m x 400 m zone "Z" on Alexanderplatz, committed."""
    geodata = builders.box(*builders.BERLIN, width_m=400, height_m=400)
    return committed_zone(django_capture_on_commit_callbacks, organization, "Z", geodata)


def test_a_warm_index_costs_no_query(
    organization, django_capture_on_commit_callbacks, django_assert_num_queries
):
    for i in range(50):
        centre = builders.offset(*builders.BERLIN, east_m=i * 500)
        committed_zone(
            django_capture_on_commit_callbacks,
            organization,
            f"Z{i}",
            builders.box(*centre, width_m=400, height_m=400),
        )
    lookup = at_berlin(organization)
    assert selectors.zone_containing_point(**lookup).name == "Z0"
    with django_assert_num_queries(0):
        assert selectors.zone_containing_point(**lookup).name == "Z0"


def test_a_version_bump_by_another_process_rebuilds_the_index(
    organization, django_capture_on_commit_callbacks, django_assert_num_queries
):
    zone = committed_z(django_capture_on_commit_callbacks, organization)
    lookup = at_berlin(organization)
    assert selectors.zone_containing_point(**lookup) == zone
    # Another process moves the zone: the row changes and the version in Redis is replaced,
    # but this process's memory is untouched.
    elsewhere = builders.box(
        *builders.offset(*builders.BERLIN, east_m=5000), width_m=400, height_m=400
    )
    Zone.objects.filter(pk=zone.pk).update(geodata=elsewhere)
    with django_assert_num_queries(0):
        assert selectors.zone_containing_point(**lookup) == zone  # still the cached index
    cache.set(f"zones:index-version:{organization.id}", "bumped-elsewhere")
    with django_assert_num_queries(1):
        assert selectors.zone_containing_point(**lookup) is None


def test_blackouts_come_with_the_warm_index_and_a_blackout_change_retires_it(
    organization, django_capture_on_commit_callbacks, django_assert_num_queries
):
    zone = committed_z(django_capture_on_commit_callbacks, organization)
    holiday = date(2030, 1, 6)
    selectors.zone_blackout_check(zone=zone, day=holiday)  # builds and keeps the index
    with django_assert_num_queries(0):
        selectors.zone_blackout_check(zone=zone, day=holiday)

    with django_capture_on_commit_callbacks(execute=True):
        blackout = services.zone_blackout_create(zone=zone, day=holiday, reason="Holiday")
    with pytest.raises(ZoneBlackedOut):
        selectors.zone_blackout_check(zone=zone, day=holiday)
    selectors.zone_blackout_check(zone=zone, day=date(2030, 1, 7))

    with django_capture_on_commit_callbacks(execute=True):
        services.zone_blackout_delete(blackout=blackout)
    selectors.zone_blackout_check(zone=zone, day=holiday)


def test_a_zone_the_index_gave_carries_its_blackout_dates(
    organization, django_capture_on_commit_callbacks, django_assert_num_queries, monkeypatch
):
    """A create that found its zone through the index checks the blackout on that zone: no
    second version read in Redis, no query."""
    zone = committed_z(django_capture_on_commit_callbacks, organization)
    holiday = date(2030, 1, 6)
    with django_capture_on_commit_callbacks(execute=True):
        services.zone_blackout_create(zone=zone, day=holiday, reason="Holiday")
    found = selectors.zone_containing_point(
        organization_id=organization.id, lat=builders.BERLIN[0], lng=builders.BERLIN[1]
    )
    asked: list = []
    monkeypatch.setattr(spatial_index, "kept_index_for", lambda **kwargs: asked.append(kwargs))
    with django_assert_num_queries(0):
        with pytest.raises(ZoneBlackedOut):
            selectors.zone_blackout_check(zone=found, day=holiday)
        selectors.zone_blackout_check(zone=found, day=date(2030, 1, 7))
    assert asked == []


def test_without_a_kept_index_a_blackout_check_reads_the_blackouts_alone(organization):
    """Zones changed in the open transaction (or Redis away): no index can be kept, so the check
    is one query on the blackouts, not a build of every zone's polygon."""
    geodata = builders.box(*builders.BERLIN, width_m=400, height_m=400)
    zone = builders.zone(organization, "Z", geodata)
    services.zone_blackout_create(zone=zone, day=date(2030, 1, 6), reason="Holiday")
    with CaptureQueriesContext(connection) as queries, pytest.raises(ZoneBlackedOut):
        selectors.zone_blackout_check(zone=zone, day=date(2030, 1, 6))
    [query] = [q["sql"] for q in queries.captured_queries]
    assert 'FROM "zones_zoneblackout"' in query
    assert 'FROM "zones_zone"' not in query


def test_a_lost_version_rebuilds_the_index(organization, django_capture_on_commit_callbacks):
    zone = committed_z(django_capture_on_commit_callbacks, organization)
    lookup = at_berlin(organization)
    assert selectors.zone_containing_point(**lookup) == zone
    Zone.objects.filter(pk=zone.pk).update(enabled=False)
    cache.clear()  # Redis flushed or evicted: a fresh version is made, never the old one again
    assert selectors.zone_containing_point(**lookup) is None


def test_uncommitted_changes_are_seen_but_not_cached(organization, django_assert_num_queries):
    # Inside the open test transaction the zone is visible to this connection only; its index
    # must not outlive a rollback, so each lookup rebuilds.
    builders.zone(organization, "Z", builders.box(*builders.BERLIN, width_m=400, height_m=400))
    lookup = at_berlin(organization)
    for _ in range(2):
        with django_assert_num_queries(1):
            assert selectors.zone_containing_point(**lookup).name == "Z"


def test_the_index_of_an_organization_without_zones(organization):
    assert len(spatial_index.index_for(organization_id=organization.id)) == 0
    assert selectors.zone_containing_point(organization_id=organization.id, lat=0, lng=0) is None


def test_resolve_point_confidence_is_available_to_other_apps(organization):
    builders.zone(organization, "Z", builders.box(*builders.BERLIN, width_m=1000, height_m=1000))
    resolved = selectors.zone_resolve_point(
        organization_id=organization.id, lat=builders.BERLIN[0], lng=builders.BERLIN[1]
    )
    assert (resolved.zone.name, resolved.confidence) == ("Z", "high")
    approximate = selectors.zone_resolve_point(
        organization_id=organization.id,
        lat=builders.BERLIN[0],
        lng=builders.BERLIN[1],
        precise=False,
    )
    assert approximate.confidence == "medium"
