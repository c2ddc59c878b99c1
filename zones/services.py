"""Writes on zones and the gazetteer (contract "Slots and windows", "Geocoding and resolve-zone",
"Management API").

Every zone create, update and delete, in one transaction: validates the polygon, writes the row,
emits `erp.polygon.updated` (webhooks outbox) and invalidates the organization's spatial index.
"""

import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import BinaryIO
from uuid import UUID

from django.conf import settings
from django.core.files import File
from django.core.files.storage import storages
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError, RestrictedError
from django.utils import timezone
from django.utils.text import slugify
from kombu.exceptions import KombuError
from redis.exceptions import RedisError

from delivery.celery import app as celery_app
from delivery.errors import ValidationFailed
from delivery.fields import is_iana_timezone, timezone_message
from tenants.models import Organization
from webhooks import events as webhook_events
from zones import gazetteer_csv, geocoding, spatial_index
from zones.errors import (
    BlackoutDateTaken,
    ZoneHasSlotTemplates,
    ZoneInUse,
    ZoneNameTaken,
    ZoneSlugTaken,
)
from zones.geometry import polygon_normalize
from zones.models import (
    GazetteerImport,
    GazetteerImportStatus,
    Place,
    Zone,
    ZoneBlackout,
    ZonePurpose,
)

logger = logging.getLogger(__name__)

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
    depot: dict | None = None,
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
    _depot_set(zone, depot)
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
    depot: dict | None = _UNSET,
) -> Zone:
    """Changes the given fields only (PATCH semantics); `depot` None removes the depot."""
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
    if depot is not _UNSET:
        _depot_set(zone, depot)
    zone.updated_at = timezone.now()
    _check_unique(zone=zone)
    _save(zone, creating=False)
    _changed(zone)
    return zone


def _depot_set(zone: Zone, depot: dict | None) -> None:
    """`depot` is `{address?, lat, lng}` (contract "Dispatch") or None for no depot."""
    if depot is None:
        zone.depot_address, zone.depot_lat, zone.depot_lng = "", None, None
    else:
        zone.depot_address = depot.get("address", "")
        zone.depot_lat, zone.depot_lng = depot["lat"], depot["lng"]


def zone_purpose_change_check(*, zone: Zone, purpose: str) -> None:
    """Slot templates belong to zones of purpose `slot` or `both` (contract): a saved zone that
    still has live ones cannot become `dispatch`, or its slots would stay bookable while
    availability no longer shows them. 409 `Zone <name> has slot templates; ...`. The management
    API and the admin form both ask here."""
    if (
        purpose == ZonePurpose.DISPATCH
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

IMPORT_BATCH_SIZE = 1000
#: a refused file's report lists this many problems (and counts them all)
MAX_REPORTED_PROBLEMS = 100
#: the storage (settings.STORAGES) that keeps a large upload until its task imports it
IMPORT_STORAGE = "gazetteer_imports"
#: the Celery name of zones.tasks.import_gazetteer
IMPORT_TASK = "zones.import_gazetteer"


@dataclass
class GazetteerImportReport:
    """What an import did: every row written (`imported`), or nothing and why (`problems`)."""

    rows: int = 0
    imported: int = 0
    problems: list[str] = field(default_factory=list)
    problem_count: int = 0

    @property
    def refused(self) -> bool:
        return self.problem_count > 0

    def add_problem(self, problem: str) -> None:
        self.problem_count += 1
        if len(self.problems) < MAX_REPORTED_PROBLEMS:
            self.problems.append(problem)

    def summary(self) -> str:
        if not self.refused:
            return f"{self.imported} places imported from {self.rows} rows"
        more = self.problem_count - len(self.problems)
        listed = f" (the first {len(self.problems)} are listed)" if more else ""
        return (
            f"Import refused, nothing was imported: {self.problem_count} "
            f"problem{'s' if self.problem_count != 1 else ''} in {self.rows} rows{listed}"
        )


def gazetteer_size_problem(size: int) -> str | None:
    """Why a file of `size` bytes is refused before it is read (GAZETTEER_IMPORT_MAX_BYTES)."""
    limit = settings.GAZETTEER_IMPORT_MAX_BYTES
    if size > limit:
        return (
            f"the file is larger than the limit of {limit:,} bytes "
            "(GAZETTEER_IMPORT_MAX_BYTES): split it into smaller files"
        )
    return None


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


class _Refused(Exception):
    """Rolls back an import that found a problem."""


def _places_upsert(organization_id, places: dict[str, Place]) -> None:
    Place.objects.bulk_create(
        places.values(),
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


def gazetteer_import_csv(
    *,
    organization_id: UUID | str,
    stream: BinaryIO,
    on_progress: Callable[[GazetteerImportReport], None] | None = None,
) -> GazetteerImportReport:
    """Imports places from a gazetteer CSV file (zones.gazetteer_csv), all or nothing.

    Rows are upserted by normalized address (a re-import updates, never duplicates; the same
    address twice, the last row wins), in one transaction: a file with any problem, or with
    more than GAZETTEER_IMPORT_MAX_ROWS rows, writes nothing and its report lists the problems
    by line. `on_progress` sees the running report every IMPORT_BATCH_SIZE rows. The caller
    checks the file's size first (gazetteer_size_problem).
    """
    report = GazetteerImportReport()
    max_rows = settings.GAZETTEER_IMPORT_MAX_ROWS
    batch: dict[str, Place] = {}
    try:
        with transaction.atomic():
            last_line = 1
            for item in gazetteer_csv.places_read(stream):
                if item.line != last_line:  # a row's first item (a row may have several)
                    last_line = item.line
                    if report.rows == max_rows:
                        report.add_problem(
                            f"line {item.line}: the file has more than {max_rows:,} rows "
                            "(GAZETTEER_IMPORT_MAX_ROWS): split it into smaller files"
                        )
                        break
                    report.rows += 1
                if isinstance(item, gazetteer_csv.RowProblem):
                    report.add_problem(str(item))
                    if item.line == 1:
                        break  # the header: no row can be read without it
                    continue
                try:
                    values = place_fields(
                        address=item.address,
                        postal_code=item.postal_code,
                        locality=item.locality,
                        lat=item.lat,
                        lng=item.lng,
                    )
                except ValueError as exc:
                    report.add_problem(f"line {item.line}: {exc}")
                    continue
                if report.refused:
                    continue  # nothing more is written; the rows are still checked
                batch[values["address_key"]] = Place(organization_id=organization_id, **values)
                if len(batch) >= IMPORT_BATCH_SIZE:
                    _places_upsert(organization_id, batch)
                    report.imported += len(batch)
                    batch.clear()
                    if on_progress is not None:
                        on_progress(report)
            if report.refused:
                raise _Refused
            _places_upsert(organization_id, batch)
            report.imported += len(batch)
            geocoding.gazetteer_changed(organization_id=organization_id)
    except _Refused:
        report.imported = 0
    return report


def gazetteer_import_record(
    *, organization_id: UUID | str, file_name: str, size_bytes: int, requested_by: str = ""
) -> GazetteerImport:
    """The record of an import about to run (or be queued): the admin lists it."""
    return GazetteerImport.objects.create(
        organization_id=organization_id,
        file_name=file_name[:255],
        size_bytes=size_bytes,
        requested_by=requested_by[:254],
    )


def gazetteer_import_finish(
    *, record: GazetteerImport, report: GazetteerImportReport
) -> GazetteerImport:
    record.status = (
        GazetteerImportStatus.REFUSED if report.refused else GazetteerImportStatus.IMPORTED
    )
    record.rows, record.imported = report.rows, report.imported
    record.problem_count, record.problems = report.problem_count, report.problems
    record.finished_at = timezone.now()
    record.save(
        update_fields=(
            "status",
            "rows",
            "imported",
            "problem_count",
            "problems",
            "finished_at",
        )
    )
    return record


def gazetteer_import_now(
    *,
    organization_id: UUID | str,
    stream: BinaryIO,
    file_name: str,
    size_bytes: int,
    requested_by: str = "",
) -> tuple[GazetteerImport, GazetteerImportReport]:
    """Imports a file at once (a small admin upload) and records its outcome."""
    record = gazetteer_import_record(
        organization_id=organization_id,
        file_name=file_name,
        size_bytes=size_bytes,
        requested_by=requested_by,
    )
    try:
        report = gazetteer_import_csv(organization_id=organization_id, stream=stream)
    except Exception:
        _gazetteer_import_failed(record.pk)
        raise
    return gazetteer_import_finish(record=record, report=report), report


def gazetteer_import_queue(
    *,
    organization_id: UUID | str,
    upload: File,
    file_name: str,
    size_bytes: int,
    requested_by: str = "",
) -> GazetteerImport:
    """Stores a large upload and queues its import (`zones.import_gazetteer`). When the broker
    cannot be reached the record answered is failed (and the stored file removed)."""
    record = gazetteer_import_record(
        organization_id=organization_id,
        file_name=file_name,
        size_bytes=size_bytes,
        requested_by=requested_by,
    )
    storage = storages[IMPORT_STORAGE]
    record.stored_name = storage.save(f"{record.organization_id}/{record.id}.csv", upload)
    record.save(update_fields=("stored_name",))
    try:
        celery_app.send_task(IMPORT_TASK, args=[str(record.id)], retry=False)
    except (KombuError, RedisError, OSError) as exc:
        logger.error("gazetteer import %s could not be queued: %s", record.id, exc)
        _stored_file_delete(record)
        record.status = GazetteerImportStatus.FAILED
        record.problems = ["the import could not be queued (task broker unavailable)"]
        record.finished_at = timezone.now()
        record.save(update_fields=("status", "problems", "finished_at", "stored_name"))
    return record


def _stored_file_delete(record: GazetteerImport) -> None:
    if record.stored_name:
        storages[IMPORT_STORAGE].delete(record.stored_name)
        record.stored_name = ""


def gazetteer_import_run(*, import_id: UUID | str) -> GazetteerImport | None:
    """Runs a queued import (the task); None when there is none to run.

    The record is locked for the whole import, so a second message for it waits, then finds
    it no longer queued and does nothing: the import runs once. A run that dies (a killed
    worker) rolls back with the record still queued, so a redelivered message runs it again;
    one that raises is marked failed, so the admin does not wait for it forever.
    """
    try:
        return _gazetteer_import_run(import_id)
    except Exception:
        logger.exception("gazetteer import %s failed", import_id)
        _gazetteer_import_failed(import_id)
        raise


def _gazetteer_import_failed(import_id) -> None:
    """A run that raised is marked failed, so the admin does not show it queued forever."""
    GazetteerImport.objects.filter(pk=import_id, status=GazetteerImportStatus.QUEUED).update(
        status=GazetteerImportStatus.FAILED,
        problems=["the import failed unexpectedly (the service's log has the details)"],
        finished_at=timezone.now(),
    )


def _gazetteer_import_run(import_id: UUID | str) -> GazetteerImport | None:
    with transaction.atomic():
        record = (
            GazetteerImport.objects.select_for_update()
            .filter(pk=import_id, status=GazetteerImportStatus.QUEUED)
            .first()
        )
        if record is None:
            return None
        storage = storages[IMPORT_STORAGE]
        if not record.stored_name or not storage.exists(record.stored_name):
            record.status = GazetteerImportStatus.FAILED
            record.problems = ["the uploaded file is gone; upload it again"]
            record.finished_at = timezone.now()
            record.save(update_fields=("status", "problems", "finished_at"))
            return record
        with storage.open(record.stored_name, "rb") as stream:
            report = gazetteer_import_csv(organization_id=record.organization_id, stream=stream)
        gazetteer_import_finish(record=record, report=report)
        stored_name = record.stored_name
        GazetteerImport.objects.filter(pk=record.pk).update(stored_name="")
        record.stored_name = ""
        transaction.on_commit(lambda: storage.delete(stored_name))
    return record


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
    spatial_index.invalidate(organization_id=zone.organization_id)
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
    spatial_index.invalidate(organization_id=zone.organization_id)
    return blackout


@transaction.atomic
def zone_blackout_delete(*, blackout: ZoneBlackout) -> None:
    ZoneBlackout.objects.filter(pk=blackout.pk).delete()
    spatial_index.invalidate(organization_id=blackout.zone.organization_id)
