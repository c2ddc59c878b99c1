"""Stop events from the courier app, and the proof of delivery or failure they carry (contract
"Couriers": `POST /courier/orders/:orderId/events`)."""

import base64
import binascii
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.db import transaction
from django.utils import timezone

from couriers.errors import (
    BarcodeMismatch,
    CashCollectedRequired,
    EventTimeOutOfRange,
    PhotoNotFound,
    PhotoRequired,
    SignatureInvalid,
    SignatureRequired,
)
from couriers.images import ImageRefused, png_verify
from couriers.models import (
    CourierEvent,
    CourierIdempotencyKey,
    CourierPhoto,
    EventType,
    OutcomeStatus,
    StopProof,
)
from couriers.selectors import ProofPolicy
from delivery.ids import new_id
from integrations.errors import FailureReasonRequired, TransitionNotAllowed
from integrations.models import TERMINAL_STATUSES, Order, OrderStatus
from integrations.services import idempotency
from integrations.services import orders as order_services
from tenants.models import Driver

#: contract "Couriers": a courier app that was offline sends its queue late, never early
LATE_LIMIT = timedelta(hours=24)
AHEAD_LIMIT = timedelta(minutes=2)
SIGNATURE_MAX_BYTES = 200 * 1024
#: a 4K screen's worth, far more than a signature pad (the courier app sends at most 600 px wide):
#: 200 KB of flat PNG can announce tens of megapixels, each decoded into memory
SIGNATURE_MAX_PIXELS = 3840 * 2160
_PNG_DATA_URL = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=\s]+)", re.ASCII)

#: `Idempotency-Key`s of the courier API are the driver's own (contract "Couriers")
DRIVER_KEYS = idempotency.KeyScope(CourierIdempotencyKey, "driver")

#: the status each event type moves the order to (`arrived` moves it nowhere)
EVENT_STATUSES = {
    EventType.PICKED_UP: OrderStatus.PICKED_UP,
    EventType.IN_TRANSIT: OrderStatus.IN_TRANSIT,
    EventType.DELIVERED: OrderStatus.DELIVERED,
    EventType.FAILED: OrderStatus.FAILED,
}


@dataclass(frozen=True)
class Location:
    lat: float
    lng: float
    accuracy_m: float | None = None

    def as_payload(self) -> dict:
        return {"lat": self.lat, "lng": self.lng, "accuracyM": self.accuracy_m}


@dataclass(frozen=True)
class ProofDraft:
    """What the courier sent as proof; the signature as its PNG data URL."""

    recipient_name: str = ""
    barcode: str = ""
    signature: str | None = None
    photo_ids: list[uuid.UUID] = field(default_factory=list)


@dataclass(frozen=True)
class StopEventDraft:
    type: str
    at: datetime | None = None
    location: Location | None = None
    proof: ProofDraft = field(default_factory=ProofDraft)
    failure_reason: str = ""
    note: str = ""
    cash_collected: Decimal | None = None


def event_time_check(at: datetime | None, *, now: datetime, field_name: str = "at") -> datetime:
    """When it happened: `at` (default now), at most 24 hours late and at most 2 minutes ahead
    of the service's clock (contract "Couriers")."""
    if at is None:
        return now
    if at < now - LATE_LIMIT:
        raise EventTimeOutOfRange([f"{field_name} must not be more than 24 hours ago"])
    if at > now + AHEAD_LIMIT:
        raise EventTimeOutOfRange([f"{field_name} must not be more than 2 minutes ahead"])
    return at


def signature_png(data_url: str) -> bytes:
    """The PNG of a signature data URL, as sent once it verifies whole (images.png_verify); 400
    unless it is a PNG of at most 200 KB. Not encoded again, as photos are: a signature pad's
    drawing carries no camera metadata, and where and when it was signed are the proof's own
    fields."""
    match = _PNG_DATA_URL.fullmatch(data_url.strip())
    # base64 takes 4 characters per 3 bytes: a longer text cannot hold 200 KB or less.
    if match is None or len(match.group(1)) > (SIGNATURE_MAX_BYTES // 3 + 1) * 4 + 1024:
        raise SignatureInvalid()
    try:
        raw = base64.b64decode("".join(match.group(1).split()), validate=True)
    except (binascii.Error, ValueError):
        raise SignatureInvalid() from None
    if not raw or len(raw) > SIGNATURE_MAX_BYTES:
        raise SignatureInvalid()
    try:
        png_verify(raw, max_pixels=SIGNATURE_MAX_PIXELS)
    except ImageRefused:
        raise SignatureInvalid() from None
    return raw


def _photos_of(driver: Driver, photo_ids: list[uuid.UUID]) -> list[CourierPhoto]:
    """The driver's own photos named by `photo_ids`, in that order; 400 for any other id.

    Locked until the proof that links them commits: the unused-photo retention deletes a photo
    only under its lock (couriers/services/retention.py), so one it took first is not found."""
    if not photo_ids:
        return []
    photos = CourierPhoto.objects.select_for_update(no_key=True).filter(
        driver=driver, id__in=photo_ids
    )
    found = {photo.id: photo for photo in photos}
    for photo_id in photo_ids:
        if photo_id not in found:
            raise PhotoNotFound(str(photo_id))
    return [found[photo_id] for photo_id in dict.fromkeys(photo_ids)]


def _delivery_checks(
    order: Order, draft: StopEventDraft, photos: list[CourierPhoto], policy: ProofPolicy
) -> None:
    """contract "Couriers": the dispatch policy's signature and photo, the expected barcode,
    the cash of a cash-on-delivery order; the first unmet one answers."""
    if policy.require_signature and not draft.proof.signature:
        raise SignatureRequired()
    if policy.require_photo and not photos:
        raise PhotoRequired()
    if order.expected_barcode and (draft.proof.barcode or "").strip() != order.expected_barcode:
        raise BarcodeMismatch()
    if order.cod_amount is not None and draft.cash_collected is None:
        raise CashCollectedRequired()


def proof_summary(proof: StopProof, photo_count: int) -> dict:
    """The proof as `order.delivered` carries it (contract "Couriers"): never the files."""
    location = (
        Location(proof.lat, proof.lng, proof.accuracy_m).as_payload()
        if proof.lat is not None
        else None
    )
    return {
        "recipientName": proof.recipient_name or None,
        "signature": bool(proof.signature_name),
        "photos": photo_count,
        "location": location,
    }


@transaction.atomic(savepoint=False)
def stop_event_record(
    *,
    driver: Driver,
    order: Order,
    proof_policy: ProofPolicy,
    draft: StopEventDraft,
    actor: str,
) -> Order:
    """Applies one courier event to the driver's order (contract "Couriers"), in the order
    events arrive, each checked when it arrives. `order` was read with its row lock in the
    caller's transaction, and `proof_policy` with it (selectors.driver_order_stop with `lock`),
    which orders this event after any other change of the order in flight; the caller rolls it
    back on any error.

    - `at` within 24 hours late and 2 minutes ahead (400);
    - `picked_up`, `in_transit`, `delivered`, `failed` move the order through the one status
      machine (`order_transition`: 409 when its status does not allow it); `arrived` changes no
      status (409 on a delivered, failed or cancelled order);
    - `failed` needs `failureReason`; `delivered` the policy's signature and photo, the expected
      barcode and, on a cash-on-delivery order, `cashCollected` (400 each);
    - `delivered` and `failed` keep their proof (signature stored as a PNG in the `proofs`
      storage, photos linked), which `order.delivered` summarizes for the partner.
    Every accepted event is recorded with when it happened and when it arrived.
    """
    now = timezone.now()
    at = event_time_check(draft.at, now=now)
    to_status = EVENT_STATUSES.get(draft.type)
    if to_status is None:
        if order.status in TERMINAL_STATUSES:
            raise TransitionNotAllowed(
                external_ref=order.external_ref, verb="marked arrived", status=order.status
            )
    elif to_status not in order_services.ALLOWED_TRANSITIONS[order.status]:
        raise TransitionNotAllowed(
            external_ref=order.external_ref,
            verb=order_services.TRANSITION_VERBS[to_status],
            status=order.status,
        )
    if to_status == OrderStatus.FAILED and not draft.failure_reason:
        raise FailureReasonRequired()

    proof = None
    photos: list[CourierPhoto] = []
    if to_status in (OrderStatus.DELIVERED, OrderStatus.FAILED):
        photos = _photos_of(driver, draft.proof.photo_ids)
        signature = signature_png(draft.proof.signature) if draft.proof.signature else None
        if to_status == OrderStatus.DELIVERED:
            _delivery_checks(order, draft, photos, proof_policy)
        proof = _proof_build(order, driver, draft, at=at, status=to_status, signature=signature)

    extra: dict = {"occurredAt": at}
    if proof is not None and to_status == OrderStatus.DELIVERED:
        extra["proof"] = proof_summary(proof, len(photos))
    if to_status is not None:
        order = order_services.order_transition(
            order=order,
            to_status=to_status,
            actor=actor,
            reason=draft.note if to_status == OrderStatus.FAILED else "",
            failure_reason=draft.failure_reason if to_status == OrderStatus.FAILED else "",
            event_extra=extra,
            locked=True,
        )
    if proof is not None:
        # After the status change, so the proof is never older than the change it proves.
        proof.created_at = timezone.now()
        proof.save(force_insert=True)
        if photos:
            proof.photos.add(*photos)
    location = draft.location
    CourierEvent.objects.create(
        order=order,
        driver=driver,
        type=draft.type,
        at=at,
        received_at=now,
        lat=location.lat if location else None,
        lng=location.lng if location else None,
        accuracy_m=location.accuracy_m if location else None,
    )
    return order


def _proof_build(
    order: Order,
    driver: Driver,
    draft: StopEventDraft,
    *,
    at: datetime,
    status: str,
    signature: bytes | None,
) -> StopProof:
    """The proof row, not yet saved; its signature file is written to the `proofs` storage."""
    proof_id = new_id()
    signature_name = ""
    if signature is not None:
        signature_name = storages["proofs"].save(
            f"signatures/{order.organization_id}/{proof_id}.png", ContentFile(signature)
        )
    location = draft.location
    return StopProof(
        id=proof_id,
        organization_id=order.organization_id,
        order=order,
        driver=driver,
        status=OutcomeStatus(status),
        at=at,
        lat=location.lat if location else None,
        lng=location.lng if location else None,
        accuracy_m=location.accuracy_m if location else None,
        recipient_name=draft.proof.recipient_name or "",
        barcode=draft.proof.barcode or "",
        cash_collected=draft.cash_collected if status == OrderStatus.DELIVERED else None,
        failure_reason=draft.failure_reason if status == OrderStatus.FAILED else "",
        note=draft.note or "",
        signature_name=signature_name,
    )
