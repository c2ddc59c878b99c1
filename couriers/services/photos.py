"""Couriers' photos (contract "Couriers": `POST /courier/photos`)."""

from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.core.files.uploadedfile import UploadedFile

from couriers.errors import PhotoInvalid
from couriers.images import ImageRefused, image_reencode
from couriers.models import CourierPhoto
from delivery.ids import new_id
from tenants.models import Driver

MAX_PHOTO_BYTES = 5 * 1024 * 1024
NOT_AN_IMAGE = "photo must be a JPEG or PNG image"


def photo_upload(*, driver: Driver, upload: UploadedFile | None) -> CourierPhoto:
    """Stores the photo a courier took, decoded and encoded again without metadata (EXIF, GPS
    included, is gone), in the `proofs` storage; 400 for anything but a JPEG or PNG of at most
    5 MB. The photo belongs to the driver until a proof refers to it (`photoIds`)."""
    if upload is None or not isinstance(upload, UploadedFile):
        raise PhotoInvalid(["photo is required (a multipart file field)"])
    if upload.size is None or upload.size > MAX_PHOTO_BYTES:
        raise PhotoInvalid(["photo must be at most 5 MB"])
    try:
        clean = image_reencode(upload.read(MAX_PHOTO_BYTES + 1))
    except ImageRefused:
        raise PhotoInvalid([NOT_AN_IMAGE]) from None
    photo_id = new_id()
    photo = CourierPhoto(
        id=photo_id,
        organization_id=driver.organization_id,
        driver=driver,
        content_type=clean.content_type,
        width=clean.width,
        height=clean.height,
        size_bytes=len(clean.content),
    )
    # Named by ids alone: nothing the phone sent (a file name) reaches the storage.
    name = f"photos/{driver.organization_id}/{photo_id}.{clean.extension}"
    photo.file_name = storages["proofs"].save(name, ContentFile(clean.content))
    photo.save(force_insert=True)
    return photo
