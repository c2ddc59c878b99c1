"""Writes on zones and the gazetteer (contract "Slots and windows", "Geocoding and resolve-zone",
"Management API").

Every zone create, update and delete, in one transaction: validates the polygon, writes the row,
emits `erp.polygon.updated` (webhooks outbox) and invalidates the organization's spatial index.
"""

import csv
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from uuid import UUID

from django.db import IntegrityError, transaction
from django.db.models import ProtectedError, RestrictedError
from django.utils import timezone
from django.utils.text import slugify

from delivery.errors import ValidationFailed
from delivery.fields import is_iana_timezone, timezone_message
from tenants.models import Organization
from webhooks import events as webhook_events
from zones import geocoding, spatial_index
from zones.errors import (
    BlackoutDateTaken,
    ZoneHasSlotTemplates,
    ZoneInUse,
    ZoneNameTaken,
    ZoneSlugTaken,
)
from zones.geometry import polygon_normalize
from zones.models import Place, Zone, ZoneBlackout, ZonePurpose

SLUG_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
SLUG_MAX_LENGTH = 63
_UNSET = object()


def timezone_validate(name: str) -> str:
    """An IANA time zone name (`Europe/Berlin`); raises ValidationFailed otherwise."""
    if not is_iana_timezone(name):
        raise ValidationFailed([timezone_message(name)])
    return name


def slug_validate(slug: str) -> str:
    if len(slug) > SLUG_MAX_LENGTH or not SLUG_PATTERN.match(slug):
        raise ValidationFailed(
            [
                "slug must be lower-case letters and digits separated by single hyphens, "
                "at most 63 characters"
            ]
        )
    return slug


def _free_slug(*, organization_id: UUID | str, name: str) -> str:
    base = slugify(name)[:SLUG_MAX_LENGTH].strip("-") or "zone"
    taken = set(
        Zone.objects.filter(organization_id=organization_id, slug__startswith=base).values_list(
            "slug", flat=True
        )
    )
    candidate, n = base, 2
    while candidate in taken:
        suffix = f"-{n}"
        candidate = f"{base[: SLUG_MAX_LENGTH - len(suffix)].rstrip('-')}{suffix}"
        n += 1
    return candidate


def _check_unique(*, zone: Zone) -> None:
    others = Zone.objects.filter(organization_id=zone.organization_id).exclude(pk=zone.pk)
    if others.filter(name=zone.name).exists():
        raise ZoneNameTaken(zone.name)
    if others.filter(slug=zone.slug).exists():
        raise ZoneSlugTaken(zone.slug)


def _save(zone: Zone, *, creating: bool) -> None:
    try:
        with transaction.atomic():
            if creating:
                zone.save(force_insert=True)
            else:
                zone.save()
    except IntegrityError:
        # A concurrent request took the name or slug between our check and our write.
        _check_unique(zone=zone)
        raise


def _default_timezone(organization_id: UUID | str) -> str:
    # The slot policy (slots app) is a one-to-one on the organization; none yet means UTC.
    policy_timezone = (
        Organization.objects.filter(pk=organization_id)
        .values_list("slot_policy__timezone", flat=True)
        .first()
    )
    return policy_timezone if policy_timezone is not None else "UTC"


def _changed(zone: Zone, *, deleted: bool = False) -> None:
    # contract "Management API": zone changes emit erp.polygon.updated, in the same transaction.
    webhook_events.polygon_updated_emit(zone=zone, deleted=deleted)
    spatial_index.invalidate(organization_id=zone.organization_id)


@transaction.atomic
def zone_create(
    *,
    organization_id: UUID | str,
    name: str,
    geodata: dict,
    slug: str | None = None,
    purpose: str = ZonePurpose.BOTH,
    enabled: bool = True,
    timezone_name: str | None = None,
    metadata: dict | None = None,
    window_capacity: int = 20,
) -> Zone:
    """A new zone; the slug is generated from the name when absent (`-2`, `-3`, ... if taken),
    the time zone defaults to the organization's slot policy's (contract "Slots and windows"), else
    UTC."""
    if timezone_name is None:
        timezone_name = _default_timezone(organization_id)
    zone = Zone(
        organization_id=organization_id,
        name=name,
        slug=slug_validate(slug)
        if slug
        else _free_slug(organization_id=organization_id, name=name),
        purpose=purpose,
        enabled=enabled,
        timezone=timezone_validate(timezone_name),
        geodata=polygon_normalize(geodata),
        metadata=metadata if metadata is not None else {},
        window_capacity=window_capacity,
    )
    _check_unique(zone=zone)
    _save(zone, creating=True)
    _changed(zone)
    return zone


@transaction.atomic
def zone_update(
    *,
    zone: Zone,
    name: str = _UNSET,
    slug: str = _UNSET,
    purpose: str = _UNSET,
    enabled: bool = _UNSET,
    timezone_name: str = _UNSET,
    geodata: dict = _UNSET,
    metadata: dict = _UNSET,
    window_capacity: int = _UNSET,
) -> Zone:
    """Changes the given fields only (PATCH semantics)."""
    zone = Zone.objects.select_for_update().get(pk=zone.pk)
    if name is not _UNSET:
        zone.name = name
    if slug is not _UNSET:
        zone.slug = slug_validate(slug)
    if purpose is not _UNSET:
        zone_purpose_change_check(zone=zone, purpose=purpose)
        zone.purpose = purpose
    if enabled is not _UNSET:
        zone.enabled = enabled
    if timezone_name is not _UNSET:
        zone.timezone = timezone_validate(timezone_name)
    if geodata is not _UNSET:
        zone.geodata = polygon_normalize(geodata)
    if metadata is not _UNSET:
        zone.metadata = metadata
    if window_capacity is not _UNSET:
        zone.window_capacity = window_capacity
    zone.updated_at = timezone.now()
    _check_unique(zone=zone)
    _save(zone, creating=False)
    _changed(zone)
    return zone


def zone_purpose_change_check(*, zone: Zone, purpose: str) -> None:
    """Slot templates belong to zones of purpose `slot` or `both` (contract): a saved zone that
    still has live ones cannot become `dispatch`, or its slots would stay bookable while
    availability no longer shows them. 409 `Zone <name> has slot templates; ...`. The management
    API and the admin form both ask here."""
    if (
        not zone._state.adding
        and purpose == ZonePurpose.DISPATCH
        and zone.purpose != purpose
        and zone.slot_templates.filter(deleted_at=None).exists()
    ):
        raise ZoneHasSlotTemplates(zone.name)


@transaction.atomic
def zone_delete(*, zone: Zone) -> None:
    """Deletes the zone; the event is emitted first, while the zone still has its id.

    A zone that other rows protect (orders, slot templates) answers 409 and stays.
    """
    zone.updated_at = timezone.now()
    _changed(zone, deleted=True)
    try:
        with transaction.atomic():
            zone.delete()
    except (ProtectedError, RestrictedError):
        raise ZoneInUse(zone.name) from None


# ----- gazetteer -----

PLACE_COLUMNS = ("address", "postal_code", "locality", "lat", "lng")
_COLUMN_ALIASES = {
    "postcode": "postal_code",
    "zip": "postal_code",
    "postalcode": "postal_code",
    "city": "locality",
    "latitude": "lat",
    "lon": "lng",
    "long": "lng",
    "longitude": "lng",
}
IMPORT_BATCH_SIZE = 1000
MAX_REPORTED_ERRORS = 50


@dataclass
class GazetteerImportReport:
    rows: int = 0
    imported: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def skipped(self) -> int:
        return self.rows - self.imported


def place_fields(
    *, address: str, postal_code: str = "", locality: str = "", lat: float, lng: float
) -> dict:
    """A gazetteer entry's stored fields, normalized keys included; raises ValueError."""
    address = (address or "").strip()
    if not address or len(address) > 500:
        raise ValueError("address must be 1 to 500 characters")
    postal_code, locality = (postal_code or "").strip(), (locality or "").strip()
    if len(postal_code) > 20 or len(locality) > 200:
        raise ValueError("postal_code at most 20 and locality at most 200 characters")
    if not (math.isfinite(lat) and math.isfinite(lng) and -90 <= lat <= 90 and -180 <= lng <= 180):
        raise ValueError("lat must be within -90..90 and lng within -180..180")
    address_key = geocoding.normalize_text(address)
    if not address_key:
        raise ValueError("address has no letters or digits")
    return {
        "address": address,
        "address_key": address_key,
        "postal_code": postal_code,
        "postal_code_key": geocoding.normalize_postal_code(postal_code),
        "locality": locality,
        "locality_key": geocoding.normalize_text(locality),
        "lat": lat,
        "lng": lng,
    }


def place_save(*, place: Place) -> Place:
    """Saves one gazetteer entry (Django admin), its normalized keys recomputed."""
    fields_ = place_fields(
        address=place.address,
        postal_code=place.postal_code,
        locality=place.locality,
        lat=place.lat,
        lng=place.lng,
    )
    for name, value in fields_.items():
        setattr(place, name, value)
    with transaction.atomic():
        place.save()
        geocoding.gazetteer_changed(organization_id=place.organization_id)
    return place


def place_delete(*, place: Place) -> None:
    with transaction.atomic():
        place.delete()
        geocoding.gazetteer_changed(organization_id=place.organization_id)


def _csv_rows(text_stream: Iterable[str]) -> Iterator[tuple[int, dict]]:
    reader = csv.DictReader(text_stream)
    header = [(name or "").strip().lower() for name in reader.fieldnames or []]
    header = [_COLUMN_ALIASES.get(name, name) for name in header]
    missing = {"address", "lat", "lng"} - set(header)
    if missing:
        raise ValidationFailed([f"CSV header must name the columns {', '.join(PLACE_COLUMNS)}"])
    reader.fieldnames = header
    for row in reader:
        yield reader.line_num, row


def _number(text: str | None, name: str) -> float:
    try:
        return float((text or "").strip())
    except ValueError:
        raise ValueError(f"{name} must be a number") from None


def gazetteer_import_csv_steps(
    *, organization_id: UUID | str, text_stream: Iterable[str]
) -> Iterator[GazetteerImportReport]:
    """Imports places from CSV text (header `address,postal_code,locality,lat,lng`).

    Rows are upserted by normalized address (a re-import updates, never duplicates), in
    batches of 1,000, each batch in its own transaction. Yields the running report after each
    batch and once more at the end (the final report). Bad rows are skipped and reported by
    line number; a header without `address`, `lat` and `lng` raises ValidationFailed.
    """
    report = GazetteerImportReport()
    batch: dict[str, Place] = {}

    def flush() -> None:
        if not batch:
            return
        with transaction.atomic():
            Place.objects.bulk_create(
                batch.values(),
                update_conflicts=True,
                unique_fields=("organization", "address_key"),
                update_fields=(
                    "address",
                    "postal_code",
                    "postal_code_key",
                    "locality",
                    "locality_key",
                    "lat",
                    "lng",
                ),
            )
            geocoding.gazetteer_changed(organization_id=organization_id)
        batch.clear()

    for line, row in _csv_rows(text_stream):
        report.rows += 1
        try:
            values = place_fields(
                address=row.get("address") or "",
                postal_code=row.get("postal_code") or "",
                locality=row.get("locality") or "",
                lat=_number(row.get("lat"), "lat"),
                lng=_number(row.get("lng"), "lng"),
            )
        except ValueError as exc:
            if len(report.errors) < MAX_REPORTED_ERRORS:
                report.errors.append(f"line {line}: {exc}")
            continue
        # The same address twice in one batch: the last row wins.
        batch[values["address_key"]] = Place(organization_id=organization_id, **values)
        report.imported += 1
        if len(batch) >= IMPORT_BATCH_SIZE:
            flush()
            yield report
    flush()
    yield report


def gazetteer_import_csv(
    *,
    organization_id: UUID | str,
    text_stream: Iterable[str],
    on_progress: Callable[[GazetteerImportReport], None] | None = None,
) -> GazetteerImportReport:
    """`gazetteer_import_csv_steps` run to the end; `on_progress` sees each step's report."""
    report = GazetteerImportReport()
    for report in gazetteer_import_csv_steps(
        organization_id=organization_id, text_stream=text_stream
    ):
        if on_progress is not None:
            on_progress(report)
    return report


# ----- blackout days -----

BLACKOUT_REASON_MAX_LENGTH = 200


def _blackout_reason(reason: str) -> str:
    reason = reason.strip() if isinstance(reason, str) else ""
    if not reason:
        raise ValidationFailed(["reason must not be empty"])
    if len(reason) > BLACKOUT_REASON_MAX_LENGTH:
        raise ValidationFailed([f"reason must be at most {BLACKOUT_REASON_MAX_LENGTH} characters"])
    return reason


@transaction.atomic
def zone_blackout_create(*, zone: Zone, day: date, reason: str) -> ZoneBlackout:
    """A date on which `zone` takes no deliveries; 409 when the zone has one on that date
    already (the unique constraint decides between concurrent requests)."""
    reason = _blackout_reason(reason)
    blackout = ZoneBlackout(zone=zone, date=day, reason=reason, created_at=timezone.now())
    try:
        with transaction.atomic():
            blackout.save(force_insert=True)
    except IntegrityError:
        raise BlackoutDateTaken(day) from None
    return blackout


@transaction.atomic
def zone_blackout_update(
    *, blackout: ZoneBlackout, zone: Zone, day: date, reason: str
) -> ZoneBlackout:
    """Moves or renames a blackout (Django admin), with the checks of creation."""
    reason = _blackout_reason(reason)
    blackout.zone, blackout.date, blackout.reason = zone, day, reason
    try:
        with transaction.atomic():
            blackout.save(update_fields=["zone", "date", "reason"])
    except IntegrityError:
        raise BlackoutDateTaken(day) from None
    return blackout


@transaction.atomic
def zone_blackout_delete(*, blackout: ZoneBlackout) -> None:
    ZoneBlackout.objects.filter(pk=blackout.pk).delete()
