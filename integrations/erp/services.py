"""The ERP family's writes: create an order on a slot, move it to another slot, cancel it
(contract "Orders"; contract "Orders", "Slots and windows").

The order row and its slot booking are written in one transaction: an order that cannot get
its slot is not created, and a move frees the old slot and takes the new one atomically.
"""

from datetime import date, datetime, time
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from integrations.erp.errors import DropoffRequired
from integrations.errors import TransitionNotAllowed
from integrations.models import TERMINAL_STATUSES, Order, OrderFamily, OrderStatus
from integrations.services import orders as order_services
from slots import selectors as slot_selectors
from slots.models import SlotHold, SlotTemplate
from slots.occurrences import Occurrence, local_moment, zone_tz
from slots.services import bookings as booking_services
from slots.services import holds as hold_services
from slots.services import templates as template_services
from zones.models import Zone


def _held_until(*, slot: Occurrence, template: SlotTemplate) -> datetime | None:
    """contract "Orders": an order delivered on a later day (zone time) than today is held from
    dispatch until 00:00 zone time of that day."""
    tz = zone_tz(template.zone.timezone)
    if slot.date <= timezone.now().astimezone(tz).date():
        return None
    return local_moment(slot.date, time(0), tz)


def erp_order_create(
    *,
    organization_id: UUID | str,
    platform: str,
    external_ref: str,
    slot_template_id: str,
    slot_date: date,
    dropoff_address: str,
    dropoff_lat: float,
    dropoff_lng: float,
    recipient_name: str,
    recipient_phone: str,
    pickup_address: str | None = None,
    pickup_lat: float | None = None,
    pickup_lng: float | None = None,
    package_size: str = "",
    actor: str = "",
    api_key_id: UUID | str | None = None,
    hold_id: str | None = None,
) -> Order:
    """`POST /integrations/erp/orders`: creates a `pending` order booked on the slot.

    Checks in the order of contract "Orders": the template exists in the organization (404 `Slot
    not found`), the date's weekday is the template's, the cutoff has not passed, the dropoff
    lies in the template's zone, then (under the slot's lock) capacity is left. A duplicate
    `externalRef` is a 409. Without a pickup address, the slot policy's default pickup address
    is used. Emits `erp.slot.booked`.

    With `hold_id`, the key's slot hold becomes the booking (docs/slot-holds.md): after the
    template, the hold is checked (404 unknown or another key's, 400 another slot or date, 409
    used or expired); the cutoff is judged at the moment of the hold, and its place is the
    order's, with no capacity check.
    """
    with transaction.atomic():
        template = slot_selectors.slot_template_get(
            organization_id=organization_id,
            template_id=slot_template_id,
            with_pickup=pickup_address is None,
        )
        hold = None
        if hold_id is not None:
            hold = hold_services.slot_hold_claim(
                api_key_id=api_key_id, hold_id=hold_id, template=template, day=slot_date
            )
        slot = booking_services.slot_booking_check(
            template=template,
            day=slot_date,
            dropoff_lat=dropoff_lat,
            dropoff_lng=dropoff_lng,
            # A hold promised the slot when it was taken: its cutoff is judged then.
            now=hold.created_at if hold is not None else None,
        )
        if pickup_address is None:
            pickup_address = template.policy_pickup_address  # read with the template
        if pickup_address is None:  # an organization without its policy yet
            pickup_address = template_services.slot_policy_get_or_create(
                organization_id=organization_id
            ).default_pickup_address
        order = order_services.order_insert(
            organization_id=organization_id,
            family=OrderFamily.ERP,
            platform=platform,
            external_ref=external_ref,
            actor=actor,
            api_key_id=api_key_id,
            pickup_address=pickup_address or "",
            pickup_lat=pickup_lat,
            pickup_lng=pickup_lng,
            dropoff_address=dropoff_address,
            dropoff_lat=dropoff_lat,
            dropoff_lng=dropoff_lng,
            recipient_name=recipient_name,
            recipient_phone=recipient_phone,
            package_size=package_size,
            zone=template.zone,
            delivery_window_start=slot.window_start,
            delivery_window_end=slot.window_end,
            held_until=_held_until(slot=slot, template=template),
        )
        # Last, so the slot's lock is held for as short a time as possible.
        if hold is not None:
            hold_services.slot_hold_book(order=order, hold=hold, template=template)
        else:
            booking_services.slot_book(order=order, template=template, day=slot_date)
    return order


def erp_order_slot_assign(
    *,
    order: Order,
    slot_template_id: str,
    slot_date: date,
    dropoff_lat: float | None = None,
    dropoff_lng: float | None = None,
) -> Order:
    """`PUT .../delivery-slot`: moves the order to another slot (or gives it one), with the
    checks of creation (contract "Orders"), freeing the old slot and taking the new one in one
    transaction. An order in a terminal status: 409 (a `failed` one is re-attempted instead, by
    the couriers app that serves this path). New dropoff coordinates, when given, are checked
    against the new slot's zone and stored."""
    with transaction.atomic():
        # The order row first: every path that changes an order's slot locks it first.
        locked = Order.objects.select_for_update(of=("self",)).get(pk=order.pk)
        if locked.status in TERMINAL_STATUSES:
            raise TransitionNotAllowed(
                external_ref=locked.external_ref, verb="rescheduled", status=locked.status
            )
        order_slot_rebook(
            locked=locked,
            slot_template_id=slot_template_id,
            slot_date=slot_date,
            dropoff_lat=dropoff_lat,
            dropoff_lng=dropoff_lng,
        )
    return locked


def order_slot_rebook(
    *,
    locked: Order,
    slot_template_id: str,
    slot_date: date,
    dropoff_lat: float | None = None,
    dropoff_lng: float | None = None,
) -> None:
    """Books `locked` (an order whose row the caller has locked) on the slot, with the checks of
    creation and their order, freeing its old slot if it still holds one, and saves the slot's
    zone, window, dropoff and hold on the order, in the caller's transaction. Used by the PUT
    above and by a re-attempt (contract "Couriers")."""
    template = slot_selectors.slot_template_get(
        organization_id=locked.organization_id, template_id=slot_template_id
    )
    lat = dropoff_lat if dropoff_lat is not None else locked.dropoff_lat
    lng = dropoff_lng if dropoff_lng is not None else locked.dropoff_lng
    if lat is None or lng is None:
        raise DropoffRequired()
    slot = booking_services.slot_booking_check(
        template=template, day=slot_date, dropoff_lat=lat, dropoff_lng=lng
    )
    booking_services.slot_booking_move(order=locked, template=template, day=slot_date)
    locked.dropoff_lat, locked.dropoff_lng = lat, lng
    locked.zone = template.zone
    locked.delivery_window_start = slot.window_start
    locked.delivery_window_end = slot.window_end
    if locked.status in (OrderStatus.PENDING, OrderStatus.FAILED):
        # A failed order is about to be pending again (a re-attempt): held like a new one.
        locked.held_until = _held_until(slot=slot, template=template)
    locked.updated_at = timezone.now()
    locked.save(
        update_fields=[
            "dropoff_lat",
            "dropoff_lng",
            "zone",
            "delivery_window_start",
            "delivery_window_end",
            "held_until",
            "updated_at",
        ]
    )


def erp_order_cancel(*, order: Order, actor: str = "", reason: str = "") -> Order:
    """`POST .../cancel` (contract "Orders"): allowed from `pending`, `dispatching`, `assigned`
    (else 409); the status machine frees the slot, which emits `erp.slots.updated`."""
    return order_services.order_transition(
        order=order, to_status=OrderStatus.CANCELLED, actor=actor, reason=reason
    )


def erp_slot_hold_create(
    *,
    organization_id: UUID | str,
    api_key_id: UUID | str,
    slot_template_id: str,
    slot_date: date,
    dropoff_lat: float,
    dropoff_lng: float,
    ttl_seconds: int,
) -> tuple[SlotHold, Occurrence, Zone]:
    """`POST /integrations/erp/slot-holds`: the checks of `erp_order_create`, in its order and
    with its messages (template, weekday, cutoff, dropoff, zone enabled, capacity), then one
    place of the slot taken by the API key `api_key_id` for `ttl_seconds`.
    Returns (hold, occurrence, zone)."""
    template = slot_selectors.slot_template_get(
        organization_id=organization_id, template_id=slot_template_id
    )
    hold, slot = hold_services.slot_hold_create(
        api_key_id=api_key_id,
        template=template,
        day=slot_date,
        dropoff_lat=dropoff_lat,
        dropoff_lng=dropoff_lng,
        ttl_seconds=ttl_seconds,
    )
    return hold, slot, template.zone


def erp_slot_hold_release(*, api_key_id: UUID | str, hold_id: str) -> None:
    """`DELETE /integrations/erp/slot-holds/:holdId`: the place goes back to the slot."""
    hold_services.slot_hold_release(api_key_id=api_key_id, hold_id=hold_id)
