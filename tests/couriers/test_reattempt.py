"""Re-attempts of failed deliveries (contract "Couriers", "Re-attempts"): a new slot or window
with the checks of creation, `attempt` + 1, up to `maxAttempts`, the whole history kept."""

from datetime import timedelta

import pytest

from dispatch.models import DispatchPolicy
from dispatch.services.policy import dispatch_policy_get_or_create
from integrations.models import Order, OrderStatus, OrderStatusEvent
from slots.models import SlotDay
from tests import builders
from tests.conftest import assert_error
from webhooks.models import Event

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("traveller")]

NEXT_SUNDAY = builders.SUNDAY + timedelta(days=7)
#: Wednesday and Thursday after builders.NOW (a Tuesday), noon in Berlin
WEDNESDAY_NOON = "2030-01-02T12:00:00+01:00"
THURSDAY_NOON = "2030-01-03T12:00:00+01:00"


def reattempt_path(organization, order) -> str:
    return f"/api/manage/organizations/{organization.id}/orders/{order.id}/reattempt"


@pytest.fixture
def slot_zone(organization):
    return builders.slot_zone(organization)


@pytest.fixture
def template(slot_zone):
    """Sundays 08:00, three places."""
    return builders.slot_template(slot_zone, capacity=3)


@pytest.fixture
def erp(organization):
    return builders.erp_client(organization)


@pytest.fixture
def failed_erp_order(erp, template) -> Order:
    response = builders.book(erp, template, builders.SUNDAY)
    assert response.status_code == 201, response.content
    return builders.order_fail(Order.objects.get(pk=response.json()["id"]))


def booked(template, day) -> int:
    counter = SlotDay.objects.filter(template=template, date=day).first()
    return counter.booked if counter else 0


def max_attempts_set(organization, value: int) -> None:
    dispatch_policy_get_or_create(organization_id=organization.id)
    DispatchPolicy.objects.filter(organization=organization).update(max_attempts=value)


# ----- slots (ERP orders) -----


def test_a_failure_frees_its_place_and_a_reattempt_books_the_new_slot(
    organization, manager, failed_erp_order, template
):
    assert booked(template, builders.SUNDAY) == 0  # the failure gave the place back

    response = manager.post(
        reattempt_path(organization, failed_erp_order),
        {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": NEXT_SUNDAY.isoformat()},
        format="json",
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["attempt"], body["failureReason"]) == ("pending", 2, None)
    assert body["deliveryWindowStart"] == "2030-01-13T08:00:00+01:00"
    assert booked(template, NEXT_SUNDAY) == 1
    assert booked(template, builders.SUNDAY) == 0
    order = Order.objects.get(pk=failed_erp_order.pk)
    assert (order.status, order.attempt, order.driver_id, order.eta) == ("pending", 2, None, None)
    # The order is held for its new delivery day, as a new one would be.
    assert order.held_until is not None


def test_the_history_keeps_both_attempts(organization, manager, failed_erp_order, template):
    manager.post(
        reattempt_path(organization, failed_erp_order),
        {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": NEXT_SUNDAY.isoformat()},
        format="json",
    )
    builders.order_fail(Order.objects.get(pk=failed_erp_order.pk))

    detail = manager.get(
        f"/api/manage/organizations/{organization.id}/orders/{failed_erp_order.id}"
    ).json()

    moves = [(event["fromStatus"], event["toStatus"]) for event in detail["statusHistory"]]
    assert moves == [
        (None, "pending"),
        ("pending", "assigned"),
        ("assigned", "failed"),
        ("failed", "pending"),
        ("pending", "assigned"),
        ("assigned", "failed"),
    ]
    reasons = [event["reason"] for event in detail["statusHistory"]]
    assert reasons[2] == reasons[5] == "recipient_absent"
    assert reasons[3] == "Re-attempt 2"
    assert (detail["attempt"], detail["failureReason"]) == (2, "recipient_absent")


def test_a_full_slot_refuses_and_the_order_stays_failed(
    organization, manager, erp, failed_erp_order, slot_zone
):
    full = builders.slot_template(slot_zone, capacity=1, start="14:00")
    assert builders.book(erp, full, NEXT_SUNDAY, ref="SO-OTHER").status_code == 201

    response = manager.post(
        reattempt_path(organization, failed_erp_order),
        {"deliverySlotTemplateId": str(full.id), "deliverySlotDate": NEXT_SUNDAY.isoformat()},
        format="json",
    )

    assert_error(response, 400, "Delivery slot is full")
    order = Order.objects.get(pk=failed_erp_order.pk)
    assert (order.status, order.attempt) == ("failed", 1)
    assert booked(full, NEXT_SUNDAY) == 1
    assert OrderStatusEvent.objects.filter(order=order, to_status="pending").count() == 1


def test_a_slot_past_its_cutoff_refuses(organization, manager, failed_erp_order, template):
    # Sunday 06:00 UTC is past the 08:00 slot's two-hour cutoff (07:00 Berlin = 06:00 UTC).
    response = manager.post(
        reattempt_path(organization, failed_erp_order),
        {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": "2029-12-30"},
        format="json",
    )

    assert response.status_code == 400
    assert Order.objects.get(pk=failed_erp_order.pk).status == "failed"


def test_at_max_attempts_a_reattempt_is_refused(organization, manager, failed_erp_order, template):
    max_attempts_set(organization, 2)
    path = reattempt_path(organization, failed_erp_order)
    slot = {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": NEXT_SUNDAY.isoformat()}
    assert manager.post(path, slot, format="json").status_code == 200
    builders.order_fail(Order.objects.get(pk=failed_erp_order.pk))

    response = manager.post(path, slot, format="json")

    assert_error(response, 409, "Order has no attempts left", code="no_attempts_left")
    order = Order.objects.get(pk=failed_erp_order.pk)
    assert (order.status, order.attempt) == ("failed", 2)
    assert booked(template, NEXT_SUNDAY) == 0


def test_only_a_failed_order_is_reattempted(organization, manager, erp, template):
    response = builders.book(erp, template, builders.SUNDAY)
    order = Order.objects.get(pk=response.json()["id"])

    response = manager.post(
        reattempt_path(organization, order),
        {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": NEXT_SUNDAY.isoformat()},
        format="json",
    )

    assert_error(
        response,
        409,
        "Order SO-1001 cannot be re-attempted in status pending",
        code="transition_not_allowed",
    )
    assert booked(template, NEXT_SUNDAY) == 0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "deliverySlotTemplateId and deliverySlotDate, or deliveryWindowStart, are required"),
        (
            {"deliverySlotDate": "2030-01-13"},
            "deliverySlotTemplateId and deliverySlotDate must be given together",
        ),
        (
            {
                "deliverySlotTemplateId": "x",
                "deliverySlotDate": "2030-01-13",
                "deliveryWindowStart": THURSDAY_NOON,
            },
            "Give either a slot (deliverySlotTemplateId, deliverySlotDate) or a window "
            "(deliveryWindowStart), not both",
        ),
    ],
)
def test_a_body_without_one_booking_is_a_400(
    organization, manager, failed_erp_order, body, message
):
    response = manager.post(reattempt_path(organization, failed_erp_order), body, format="json")

    assert_error(response, 400, [message])


def test_an_erp_order_is_not_reattempted_on_a_window(organization, manager, failed_erp_order):
    response = manager.post(
        reattempt_path(organization, failed_erp_order),
        {"deliveryWindowStart": THURSDAY_NOON},
        format="json",
    )

    assert_error(response, 400, code="reattempt_booking_mismatch")
    assert Order.objects.get(pk=failed_erp_order.pk).status == "failed"


def test_another_organizations_order_is_not_found(other_organization, failed_erp_order, template):
    stranger = builders.manager_client(other_organization, email="eve@example.com")

    response = stranger.post(
        reattempt_path(other_organization, failed_erp_order),
        {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": NEXT_SUNDAY.isoformat()},
        format="json",
    )

    assert_error(response, 404, "Order not found")


# ----- the ERP's PUT delivery-slot -----


def test_erp_put_delivery_slot_on_a_failed_order_is_a_reattempt(erp, failed_erp_order, template):
    response = erp.put(
        "/api/integrations/erp/orders/SO-1001/delivery-slot",
        {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": NEXT_SUNDAY.isoformat()},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert response.json()["deliverySlotDate"] == NEXT_SUNDAY.isoformat()
    read = erp.get("/api/integrations/erp/orders/SO-1001").json()
    assert (read["status"], read["attempt"]) == ("pending", 2)
    assert booked(template, NEXT_SUNDAY) == 1


def test_erp_put_delivery_slot_keeps_the_attempt_limit(
    organization, erp, failed_erp_order, template
):
    max_attempts_set(organization, 1)

    response = erp.put(
        "/api/integrations/erp/orders/SO-1001/delivery-slot",
        {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": NEXT_SUNDAY.isoformat()},
        format="json",
    )

    assert_error(response, 409, "Order has no attempts left")
    assert Order.objects.get(pk=failed_erp_order.pk).status == "failed"


def test_erp_put_delivery_slot_still_moves_a_pending_order(erp, template):
    builders.book(erp, template, builders.SUNDAY)

    response = erp.put(
        "/api/integrations/erp/orders/SO-1001/delivery-slot",
        {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": NEXT_SUNDAY.isoformat()},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert Order.objects.get().attempt == 1
    assert (booked(template, builders.SUNDAY), booked(template, NEXT_SUNDAY)) == (0, 1)


# ----- windows (partner orders) -----


@pytest.fixture
def partner(organization):
    return builders.partner_client(organization)


def failed_partner_order(partner, **overrides) -> Order:
    response = builders.create_order(partner, deliveryWindowStart=WEDNESDAY_NOON, **overrides)
    assert response.status_code == 201, response.content
    return builders.order_fail(Order.objects.get(pk=response.json()["id"]))


def test_a_partner_order_is_reattempted_on_a_window(organization, manager, partner):
    builders.zone(organization, "Dispatch", window_capacity=5)
    order = failed_partner_order(partner)

    response = manager.post(
        reattempt_path(organization, order), {"deliveryWindowStart": THURSDAY_NOON}, format="json"
    )

    assert response.status_code == 200, response.content
    read = partner.get("/api/integrations/partner-a/orders/PO-1001").json()
    assert (read["status"], read["attempt"]) == ("pending", 2)
    assert read["deliveryWindowStart"] == THURSDAY_NOON
    assert read["deliveryWindowEnd"] == "2030-01-03T16:00:00+01:00"
    order.refresh_from_db()
    assert order.window_load.booked == 1
    # Entering pending emits no order event (the machine's rule): created, assigned, failed only.
    events = Event.objects.filter(organization=organization)
    names = [event.name for event in events if event.payload.get("id") == str(order.id)]
    assert sorted(names) == ["order.assigned", "order.created", "order.failed"]


def test_a_full_window_refuses_and_the_order_stays_failed(organization, manager, partner):
    builders.zone(organization, "Dispatch", window_capacity=1)
    order = failed_partner_order(partner)
    taken = builders.create_order(partner, externalRef="PO-2", deliveryWindowStart=THURSDAY_NOON)
    assert taken.status_code == 201, taken.content

    response = manager.post(
        reattempt_path(organization, order), {"deliveryWindowStart": THURSDAY_NOON}, format="json"
    )

    assert_error(response, 400, "Delivery window is full")
    order.refresh_from_db()
    assert (order.status, order.attempt) == (OrderStatus.FAILED, 1)


def test_a_partner_order_is_not_reattempted_on_a_slot(organization, manager, partner, template):
    builders.zone(organization, "Dispatch", window_capacity=5)
    order = failed_partner_order(partner)

    response = manager.post(
        reattempt_path(organization, order),
        {"deliverySlotTemplateId": str(template.id), "deliverySlotDate": NEXT_SUNDAY.isoformat()},
        format="json",
    )

    assert_error(response, 400, code="reattempt_booking_mismatch")
