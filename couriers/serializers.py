"""Input and output of the courier API and the proof reads (contract "Couriers")."""

from decimal import Decimal

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from couriers import proof_urls
from couriers.models import EventType
from couriers.services.events import (
    SIGNATURE_MAX_BYTES,
    Location,
    ProofDraft,
    StopEventDraft,
)
from couriers.services.locations import PointDraft
from couriers.services.reattempts import NewBooking
from delivery.fields import (
    CoordinateField,
    DateTextField,
    DateTimeTextField,
    NamedTextField,
    StrictCharField,
    StrictFloatField,
    choice_field,
    declare,
    field_messages,
    is_json_number,
    parse_datetime,
)
from delivery.serializers import (
    CrossFieldSerializer,
    LeafFieldsCopied,
    OutputSerializer,
    valid_serializer,
)
from integrations.models import FailureReason

#: a 200 KB PNG in base64 (4 characters per 3 bytes) with its `data:image/png;base64,` prefix
SIGNATURE_MAX_TEXT = (SIGNATURE_MAX_BYTES // 3 + 1) * 4 + 64
CENTS = Decimal("0.01")
#: points one location batch may carry (contract "Couriers")
MAX_POINTS = 100
#: photos one proof may name
MAX_PHOTOS = 10


class AccessTokenOutput(OutputSerializer):
    token = serializers.CharField(source="value")
    createdAt = serializers.DateTimeField(source="token.created_at")


class RouteQuery(serializers.Serializer):
    date = DateTextField("date", required=False)


class _ZoneTime(serializers.DateTimeField):
    """An instant in the route's zone time, with its offset."""

    def to_representation(self, value):
        if value is None:
            return None
        shown = timezone.localtime(value, self.context["tz"]).isoformat()
        return shown.removesuffix("+00:00") + "Z" if shown.endswith("+00:00") else shown


class RouteDriverOutput(OutputSerializer):
    id = serializers.UUIDField()
    name = serializers.CharField()


class RouteStopOutput(OutputSerializer):
    sequence = serializers.IntegerField(allow_null=True)
    orderId = serializers.UUIDField(source="order_id")
    externalRef = serializers.CharField(source="order.external_ref")
    status = serializers.CharField(source="order.status")
    eta = _ZoneTime(allow_null=True)
    windowStart = _ZoneTime(source="window_start", allow_null=True)
    windowEnd = _ZoneTime(source="window_end", allow_null=True)
    kind = serializers.CharField()
    address = serializers.CharField(source="order.dropoff_address")
    lat = serializers.FloatField(allow_null=True)
    lng = serializers.FloatField(allow_null=True)
    recipientName = serializers.CharField(source="order.recipient_name")
    recipientPhone = serializers.CharField(source="order.recipient_phone")
    notes = serializers.CharField(source="order.notes")
    packageSize = serializers.CharField(source="order.package_size", allow_null=True)
    codAmount = serializers.FloatField(source="order.cod_amount", allow_null=True)
    expectedBarcode = serializers.SerializerMethodField(method_name="get_expected_barcode")
    serviceType = serializers.CharField(source="order.service_type")

    def get_expected_barcode(self, stop) -> str | None:
        return stop.order.expected_barcode or None


class RouteOutput(OutputSerializer):
    date = serializers.DateField(source="day")
    driver = RouteDriverOutput()
    routeId = serializers.SerializerMethodField(method_name="get_route_id")
    stops = RouteStopOutput(many=True)

    def get_route_id(self, route) -> str | None:
        return str(route.route.id) if route.route is not None else None


class PhotoOutput(OutputSerializer):
    photoId = serializers.UUIDField(source="id")


class LocationInput(LeafFieldsCopied, serializers.Serializer):
    lat = CoordinateField("location.lat", 90)
    lng = CoordinateField("location.lng", 180)
    accuracyM = StrictFloatField(
        required=False, allow_null=True, min_value=0, max_value=100_000, source="accuracy_m"
    )


class _SignatureField(StrictCharField):
    """The signature's data URL: up to 270,000 characters of base64, which DRF's check for
    surrogate characters walks one at a time in Python (over 10 ms at the limit). Plain ASCII
    without NUL holds neither a surrogate nor a NUL, so only the length is left to check; any
    other text goes through every check, with its messages."""

    def run_validators(self, value):
        if not (value.isascii() and "\x00" not in value):
            super().run_validators(value)
        elif len(value) > self.max_length:
            self.fail("max_length", max_length=self.max_length)


class ProofInput(LeafFieldsCopied, serializers.Serializer):
    recipientName = NamedTextField("proof.recipientName", 200, required=False)
    barcode = NamedTextField("proof.barcode", 200, required=False)
    signature = _SignatureField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=SIGNATURE_MAX_TEXT,
        error_messages=field_messages(
            "proof.signature",
            max_length="proof.signature must be a PNG data URL of at most 200 KB",
        ),
    )
    photoIds = serializers.ListField(
        child=serializers.UUIDField(error_messages={"invalid": "photoIds must hold photo ids"}),
        required=False,
        allow_null=True,
        max_length=MAX_PHOTOS,
        error_messages={"max_length": f"photoIds must hold at most {MAX_PHOTOS} photos"},
    )


class StopEventInput(LeafFieldsCopied, serializers.Serializer):
    type = choice_field("type", EventType.values, missing="type required")
    at = DateTimeTextField("at", required=False, allow_null=True)
    location = LocationInput(required=False, allow_null=True)
    proof = ProofInput(required=False, allow_null=True)
    failureReason = choice_field(
        "failureReason", FailureReason.values, required=False, allow_null=True, allow_blank=True
    )
    note = NamedTextField("note", 2000, required=False)
    cashCollected = StrictFloatField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=9_999_999_999.99,
        error_messages={"invalid": "cashCollected must be a number"},
    )

    def validate_at(self, value):
        if value is not None and timezone.is_naive(value):
            raise serializers.ValidationError("at must carry a UTC offset (Z or +01:00)")
        return value

    def draft(self) -> StopEventDraft:
        """The validated body as the service takes it."""
        data = self.validated_data
        location = data.get("location")
        proof = data.get("proof") or {}
        return StopEventDraft(
            type=data["type"],
            at=data.get("at"),
            location=Location(**location) if location else None,
            proof=ProofDraft(
                recipient_name=proof.get("recipientName") or "",
                barcode=proof.get("barcode") or "",
                signature=proof.get("signature") or None,
                photo_ids=list(proof.get("photoIds") or []),
            ),
            failure_reason=data.get("failureReason") or "",
            note=data.get("note") or "",
            cash_collected=(
                Decimal(str(data["cashCollected"])).quantize(CENTS)
                if data.get("cashCollected") is not None
                else None
            ),
        )


class ProofLocationOutput(OutputSerializer):
    lat = serializers.FloatField()
    lng = serializers.FloatField()
    accuracyM = serializers.FloatField(allow_null=True)


class ProofOutput(serializers.Serializer):
    """An order's proof (contract "Couriers", "Proof"); file URLs signed for 10 minutes. Give it
    `context={"request": request}` for absolute URLs."""

    status = serializers.CharField()
    at = serializers.DateTimeField()
    location = serializers.SerializerMethodField()
    recipientName = serializers.SerializerMethodField(method_name="get_recipient_name")
    barcode = serializers.SerializerMethodField()
    cashCollected = serializers.SerializerMethodField(method_name="get_cash_collected")
    failureReason = serializers.SerializerMethodField(method_name="get_failure_reason")
    note = serializers.SerializerMethodField()
    signatureUrl = serializers.SerializerMethodField(method_name="get_signature_url")
    photoUrls = serializers.SerializerMethodField(method_name="get_photo_urls")

    def _proof_value(self, shown, attribute: str):
        return (getattr(shown.proof, attribute) or None) if shown.proof is not None else None

    @extend_schema_field(ProofLocationOutput(allow_null=True))
    def get_location(self, shown) -> dict | None:
        proof = shown.proof
        if proof is None or proof.lat is None:
            return None
        return {"lat": proof.lat, "lng": proof.lng, "accuracyM": proof.accuracy_m}

    def get_recipient_name(self, shown) -> str | None:
        return self._proof_value(shown, "recipient_name")

    def get_barcode(self, shown) -> str | None:
        return self._proof_value(shown, "barcode")

    def get_cash_collected(self, shown) -> float | None:
        value = shown.proof.cash_collected if shown.proof is not None else None
        return float(value) if value is not None else None

    def get_failure_reason(self, shown) -> str | None:
        return shown.failure_reason or None

    def get_note(self, shown) -> str | None:
        return self._proof_value(shown, "note")

    def get_signature_url(self, shown) -> str | None:
        name = shown.proof.signature_name if shown.proof is not None else ""
        return proof_urls.proof_file_url(self.context.get("request"), name)

    def get_photo_urls(self, shown) -> list[str]:
        if shown.proof is None:
            return []
        request = self.context.get("request")
        return [
            proof_urls.proof_file_url(request, photo.file_name)
            for photo in shown.proof.photos.all()
        ]


class PointInput(LeafFieldsCopied, serializers.Serializer):
    lat = CoordinateField("lat", 90)
    lng = CoordinateField("lng", 180)
    at = DateTimeTextField("at")
    accuracyM = StrictFloatField(
        required=False, allow_null=True, min_value=0, max_value=100_000, source="accuracy_m"
    )
    speedMps = StrictFloatField(
        required=False, allow_null=True, min_value=0, max_value=100, source="speed_mps"
    )
    heading = StrictFloatField(required=False, allow_null=True, min_value=0, max_value=360)

    def validate_at(self, value):
        if timezone.is_naive(value):
            raise serializers.ValidationError("at must carry a UTC offset (Z or +01:00)")
        return value


class LocationsInput(LeafFieldsCopied, serializers.Serializer):
    points = declare(
        PointInput(
            many=True,
            allow_empty=False,
            max_length=MAX_POINTS,
            error_messages={
                "empty": "points must hold 1 to 100 points",
                "max_length": "points must hold 1 to 100 points",
                "required": "points required",
                "null": "points required",
                "not_a_list": "points must be an array",
            },
        ),
        minItems=1,
        maxItems=MAX_POINTS,
    )

    def drafts(self) -> list[PointDraft]:
        return [PointDraft(**point) for point in self.validated_data["points"]]


#: a point's optional numbers: (field, PointDraft's name, largest value), each from 0
_POINT_NUMBERS = (
    ("accuracyM", "accuracy_m", 100_000),
    ("speedMps", "speed_mps", 100),
    ("heading", "heading", 360),
)


def location_drafts(data) -> list[PointDraft]:
    """A location batch's points (LocationsInput's rules and messages). A courier app sends one
    every few seconds, and a DRF serializer per point would cost most of the request: plain code
    reads a batch of plainly valid points, and anything else goes through LocationsInput, which
    names every problem."""
    drafts = _plain_drafts(data)
    return drafts if drafts is not None else valid_serializer(LocationsInput, data).drafts()


def _plain_drafts(data) -> list[PointDraft] | None:
    """The points as LocationsInput reads them when each is plainly valid, else None."""
    points = data.get("points") if isinstance(data, dict) else None
    if not isinstance(points, list) or not 1 <= len(points) <= MAX_POINTS:
        return None
    drafts = []
    for point in points:
        if not isinstance(point, dict):
            return None
        lat, lng = point.get("lat"), point.get("lng")
        at = parse_datetime(point.get("at"))
        if not (
            is_json_number(lat)
            and -90 <= lat <= 90
            and is_json_number(lng)
            and -180 <= lng <= 180
            and at is not None
            and not timezone.is_naive(at)
        ):
            return None
        numbers = {}
        for field, name, largest in _POINT_NUMBERS:
            value = point.get(field)
            if value is not None:
                if not (is_json_number(value) and 0 <= value <= largest):
                    return None
                value = float(value)
            numbers[name] = value
        drafts.append(PointDraft(lat=float(lat), lng=float(lng), at=at, **numbers))
    return drafts


class LocationsOutput(OutputSerializer):
    accepted = serializers.IntegerField(source="points")
    etasUpdated = serializers.IntegerField(source="etas_moved")


class ReattemptInput(CrossFieldSerializer):
    """`POST /manage/organizations/:orgId/orders/:orderId/reattempt` (contract "Couriers",
    "Re-attempts"): a slot or a window, not both."""

    deliverySlotTemplateId = NamedTextField("deliverySlotTemplateId", 100, required=False)
    deliverySlotDate = DateTextField("deliverySlotDate", required=False)
    deliveryWindowStart = DateTimeTextField("deliveryWindowStart", required=False)

    def cross_field_problems(self, attrs, failed):
        slot = [name for name in ("deliverySlotTemplateId", "deliverySlotDate") if name in attrs]
        window = "deliveryWindowStart" in attrs
        if failed:
            return []
        if window and slot:
            return [
                "Give either a slot (deliverySlotTemplateId, deliverySlotDate) or a window "
                "(deliveryWindowStart), not both"
            ]
        if len(slot) == 1:
            return ["deliverySlotTemplateId and deliverySlotDate must be given together"]
        if not window and not slot:
            return [
                "deliverySlotTemplateId and deliverySlotDate, or deliveryWindowStart, are required"
            ]
        return []

    def booking(self) -> NewBooking:
        data = self.validated_data
        return NewBooking(
            slot_template_id=data.get("deliverySlotTemplateId"),
            slot_date=data.get("deliverySlotDate"),
            window_start=data.get("deliveryWindowStart"),
        )
