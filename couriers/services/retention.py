"""Retention of couriers' files (docs/operations.md "Retention"): signatures and photos hold
people's handwriting and faces, so they go when their time is up, through Django's storage API
(the `proofs` storage, a directory or a private bucket).

- A proof older than PROOF_FILE_RETENTION_DAYS loses its files: its signature and the photos no
  younger proof uses (file and row). The proof row stays without them (`files_removed_at`), as do
  the order, its status history and the fact that it was delivered or failed.
- A photo no proof uses goes UNUSED_PHOTO_RETENTION_HOURS after its upload; one found in use is
  marked, so the pass looks at each photo once, and goes with its last proof's files.

Batches as delivery/retention.py takes them. A file is deleted before its row's change commits:
if the commit fails, the row still names it and the next run deletes it again (a storage's
delete of a missing file is a no-op), where the other order could leave a file no row names.
"""

from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.core.files.storage import storages
from django.db.models import Exists, OuterRef
from django.utils import timezone

from couriers.models import CourierPhoto, StopProof
from delivery import retention

#: the proofs' links to their photos (the many-to-many table)
ProofPhoto = StopProof.photos.through


def proof_files_expired_delete(
    *, now: datetime | None = None, batch_size: int | None = None, until: float | None = None
) -> int:
    """Deletes the files of the proofs older than PROOF_FILE_RETENTION_DAYS (module docstring);
    returns how many files went."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.PROOF_FILE_RETENTION_DAYS)
    with_files = StopProof.objects.filter(created_at__lt=cutoff, files_removed_at__isnull=True)
    return retention.in_batches(
        with_files,
        partial(_proof_files_remove, now=now),
        order_by="created_at",
        batch_size=batch_size,
        until=until,
    ).removed


def photos_unused_delete(
    *, now: datetime | None = None, batch_size: int | None = None, until: float | None = None
) -> int:
    """Deletes the photos no proof uses, UNUSED_PHOTO_RETENTION_HOURS after their upload (file
    and row), and marks those it finds in use; returns how many went."""
    now = now or timezone.now()
    cutoff = now - timedelta(hours=settings.UNUSED_PHOTO_RETENTION_HOURS)
    unseen = CourierPhoto.objects.filter(created_at__lt=cutoff, seen_in_use_at__isnull=True)
    return retention.in_batches(
        unseen,
        partial(_photos_unused_remove, now=now),
        order_by="created_at",
        batch_size=batch_size,
        until=until,
    ).removed


def _proof_files_remove(proof_ids: list, *, now: datetime) -> int:
    """One locked batch of proofs: their signatures and the photos they alone use go."""
    links = ProofPhoto.objects.filter(stopproof_id__in=proof_ids)
    photo_ids = list(links.values_list("courierphoto_id", flat=True))
    links.delete()
    removed = _photos_delete(photo_ids)
    signatures = list(
        StopProof.objects.filter(pk__in=proof_ids)
        .exclude(signature_name="")
        .values_list("signature_name", flat=True)
    )
    storage = storages["proofs"]
    for name in signatures:
        storage.delete(name)
    StopProof.objects.filter(pk__in=proof_ids).update(signature_name="", files_removed_at=now)
    return removed + len(signatures)


def _photos_unused_remove(photo_ids: list, *, now: datetime) -> int:
    """One locked batch of photos not seen in use: those a proof uses are marked, the others
    go."""
    used = set(
        ProofPhoto.objects.filter(courierphoto_id__in=photo_ids).values_list(
            "courierphoto_id", flat=True
        )
    )
    CourierPhoto.objects.filter(pk__in=used).update(seen_in_use_at=now)
    return _photos_delete([pk for pk in photo_ids if pk not in used])


def _photos_delete(photo_ids: list) -> int:
    """Deletes the photos among `photo_ids` that no proof uses, file and row; how many.

    Their rows are locked first (waiting for a courier's event that is linking one: linking
    locks the photo, couriers/services/events.py), so a link is either seen here or made after
    the photo is gone (the event then answers 400 `photo_not_found`)."""
    locked = list(
        CourierPhoto.objects.select_for_update()
        .filter(pk__in=photo_ids)
        .values_list("pk", flat=True)
    )
    unused = list(
        CourierPhoto.objects.filter(pk__in=locked)
        .exclude(Exists(ProofPhoto.objects.filter(courierphoto_id=OuterRef("pk"))))
        .values_list("pk", "file_name")
    )
    storage = storages["proofs"]
    for _, name in unused:
        storage.delete(name)
    CourierPhoto.objects.filter(pk__in=[pk for pk, _ in unused]).delete()
    return len(unused)
