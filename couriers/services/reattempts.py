"""Re-attempts of failed deliveries (contract "Couriers", "Re-attempts"): a `failed` order books
a new slot or window with the checks of creation and goes back to `pending` with `attempt` + 1,
up to the dispatch policy's `maxAttempts`."""

from dataclasses import dataclass
from datetime import date, datetime

from django.db import transaction

from couriers.errors import NoAttemptsLeft, ReattemptBookingMismatch
from dispatch.services.policy import dispatch_policy_get_or_create
from integrations.erp import services as erp_services
from integrations.errors import TransitionNotAllowed
from integrations.models import Order, OrderFamily, OrderStatus
from integrations.partner import services as partner_services
from integrations.services import orders as order_services


@dataclass(frozen=True)
class NewBooking:
    """Where the next attempt is delivered: a slot (ERP orders) or a window (partner orders)."""

    slot_template_id: str | None = None
    slot_date: date | None = None
    window_start: datetime | None = None
    #: the ERP PUT may move the dropoff point with the slot
    dropoff_lat: float | None = None
    dropoff_lng: float | None = None


def order_reattempt(*, order: Order, booking: NewBooking, actor: str = "") -> Order:
    """Moves a `failed` order back to `pending` for one more attempt, all or nothing.

    In this order: the order's row is locked; not `failed`: 409 `Order <ref> cannot be
    re-attempted in status <status>`; at `maxAttempts`: 409 `Order has no attempts left`; the
    other family's booking: 400; then the slot or window is booked as at creation (its 400s and
    404s, capacity under the slot's or window's lock), and the order reopens. A refusal leaves
    the order failed, with no place taken. The failure freed the old place already.
    """
    with transaction.atomic():
        # The order row first: every path that changes an order's slot locks it first.
        locked = Order.objects.select_for_update(of=("self",)).get(pk=order.pk)
        if locked.status != OrderStatus.FAILED:
            raise TransitionNotAllowed(
                external_ref=locked.external_ref, verb="re-attempted", status=locked.status
            )
        policy = dispatch_policy_get_or_create(organization_id=locked.organization_id)
        if locked.attempt >= policy.max_attempts:
            raise NoAttemptsLeft()
        if locked.family == OrderFamily.ERP:
            if booking.slot_template_id is None or booking.slot_date is None:
                raise ReattemptBookingMismatch(
                    "An ERP order is re-attempted on a slot: deliverySlotTemplateId and "
                    "deliverySlotDate are required"
                )
            erp_services.order_slot_rebook(
                locked=locked,
                slot_template_id=booking.slot_template_id,
                slot_date=booking.slot_date,
                dropoff_lat=booking.dropoff_lat,
                dropoff_lng=booking.dropoff_lng,
            )
        else:
            if booking.window_start is None:
                raise ReattemptBookingMismatch(
                    "A partner order is re-attempted on a window: deliveryWindowStart is required"
                )
            partner_services.order_window_rebook(locked=locked, start=booking.window_start)
        return order_services.order_reopen(locked=locked, actor=actor)


def erp_order_slot_put(
    *,
    order: Order,
    slot_template_id: str,
    slot_date: date,
    dropoff_lat: float | None = None,
    dropoff_lng: float | None = None,
    actor: str = "",
) -> Order:
    """The ERP's `PUT .../delivery-slot`: a `failed` order is re-attempted on the slot (the
    rules above), any other moves as before (integrations' `erp_order_slot_assign`)."""
    with transaction.atomic():
        locked = Order.objects.select_for_update(of=("self",)).get(pk=order.pk)
        if locked.status == OrderStatus.FAILED:
            return order_reattempt(
                order=locked,
                booking=NewBooking(
                    slot_template_id=slot_template_id,
                    slot_date=slot_date,
                    dropoff_lat=dropoff_lat,
                    dropoff_lng=dropoff_lng,
                ),
                actor=actor,
            )
        return erp_services.erp_order_slot_assign(
            order=locked,
            slot_template_id=slot_template_id,
            slot_date=slot_date,
            dropoff_lat=dropoff_lat,
            dropoff_lng=dropoff_lng,
        )
