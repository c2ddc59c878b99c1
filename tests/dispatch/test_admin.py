"""Django admin of dispatch: the policy, and the zones a driver serves on the driver's page."""

from dispatch.models import DispatchPolicy, DriverZone
from tests import builders


def driver_form(driver, **overrides) -> dict:
    return {
        "organization": str(driver.organization_id),
        "name": driver.name,
        "phone": driver.phone,
        "vehicle_type": driver.vehicle_type,
        "is_active": "on",
        "capacity": "",
        "shift_start": "07:00",
        "shift_end": "15:00",
        **overrides,
    }


def test_a_driver_page_offers_only_its_own_organizations_zones(organization, other_organization):
    ours = builders.zone(organization, "Mitte")
    theirs = builders.zone(other_organization, "Secret Zone")
    driver = builders.driver(organization, "Ana")
    client = builders.admin_site_client(organization)
    url = f"/admin/tenants/driver/{driver.pk}/change/"

    page = client.get(url).content.decode()
    assert "Mitte" in page and "Secret Zone" not in page

    saved = client.post(url, driver_form(driver, zones_served=[str(ours.id)]))
    assert saved.status_code == 302, saved.content.decode()[:2000]
    assert list(DriverZone.objects.values_list("driver_id", "zone_id")) == [(driver.id, ours.id)]
    refused = client.post(url, driver_form(driver, zones_served=[str(theirs.id)]))
    assert refused.status_code == 200  # not a choice of this form
    assert list(DriverZone.objects.values_list("zone_id", flat=True)) == [ours.id]

    driver.refresh_from_db()
    assert (driver.shift_start.hour, driver.shift_end.hour) == (7, 15)
    bad_shift = client.post(url, driver_form(driver, shift_start="16:00"))
    assert "shiftEnd must be after shiftStart" in bad_shift.content.decode()


def test_the_policy_is_kept_in_admin(organization):
    client = builders.admin_site_client(organization)
    form = {
        "organization": str(organization.id),
        "service_minutes": "5",
        "travel_speed_kmh": "22",
        "detour_factor": "1.4",
        "auto_dispatch": "at_cutoff",
        "auto_dispatch_lead_minutes": "30",
        "max_attempts": "2",
    }

    response = client.post("/admin/dispatch/dispatchpolicy/add/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    policy = DispatchPolicy.objects.get(organization=organization)
    assert (policy.service_minutes, policy.auto_dispatch, policy.max_attempts) == (
        5,
        "at_cutoff",
        2,
    )
    out_of_range = client.post(
        f"/admin/dispatch/dispatchpolicy/{policy.pk}/change/", {**form, "max_attempts": "11"}
    )
    assert out_of_range.status_code == 200  # the form names the broken rule, nothing saved
    policy.refresh_from_db()
    assert policy.max_attempts == 2
