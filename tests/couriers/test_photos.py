"""Proof photos (docs/contract.md "Couriers"): JPEG or PNG of at most 5 MB, decoded and encoded
again without metadata, stored through the `proofs` storage; anything else is a 400."""

import io

import pytest
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import ExifTags, Image
from rest_framework.test import APIClient

from couriers import images
from couriers.models import CourierPhoto
from tests import builders
from tests.conftest import assert_error

pytestmark = pytest.mark.django_db

PHOTOS = "/api/courier/photos"
BERLIN_GPS = {
    ExifTags.GPS.GPSLatitudeRef: "N",
    ExifTags.GPS.GPSLatitude: (52.0, 31.0, 12.0),
    ExifTags.GPS.GPSLongitudeRef: "E",
    ExifTags.GPS.GPSLongitude: (13.0, 24.0, 36.0),
}


def image_bytes(fmt: str = "JPEG", size=(64, 48), exif: Image.Exif | None = None) -> bytes:
    image = Image.new("RGB", size, (200, 30, 30))
    out = io.BytesIO()
    image.save(out, fmt, **({"exif": exif} if exif is not None else {}))
    return out.getvalue()


def gps_exif() -> Image.Exif:
    exif = Image.Exif()
    exif[ExifTags.Base.Make] = "PhoneCam"
    exif[ExifTags.IFD.GPSInfo] = BERLIN_GPS
    return exif


def upload(client, content: bytes, name: str = "door.jpg", content_type: str = "image/jpeg"):
    return client.post(
        PHOTOS, {"photo": SimpleUploadedFile(name, content, content_type)}, format="multipart"
    )


@pytest.fixture
def driver(organization):
    return builders.driver(organization)


@pytest.fixture
def courier(driver):
    return builders.courier_client(driver)


def test_a_photo_with_gps_exif_is_stored_without_it(courier, driver):
    sent = image_bytes(exif=gps_exif())
    assert Image.open(io.BytesIO(sent)).getexif().get_ifd(ExifTags.IFD.GPSInfo)

    response = upload(courier, sent)

    assert response.status_code == 201, response.content
    photo = CourierPhoto.objects.get(pk=response.json()["photoId"])
    assert (photo.driver, photo.content_type, photo.width, photo.height) == (
        driver,
        "image/jpeg",
        64,
        48,
    )
    with storages["proofs"].open(photo.file_name) as stored_file:
        stored = stored_file.read()
    kept = Image.open(io.BytesIO(stored))
    assert kept.format == "JPEG"
    assert dict(kept.getexif()) == {}
    assert b"Exif" not in stored and b"PhoneCam" not in stored
    assert "door" not in photo.file_name  # the phone's file name never reaches the storage


def test_a_photo_is_turned_the_way_its_exif_orientation_says(courier):
    exif = gps_exif()
    exif[ExifTags.Base.Orientation] = 6  # taken with the phone on its side: turn 90 degrees
    response = upload(courier, image_bytes("JPEG", size=(64, 48), exif=exif))

    assert response.status_code == 201, response.content
    photo = CourierPhoto.objects.get(pk=response.json()["photoId"])
    with storages["proofs"].open(photo.file_name) as stored:
        image = Image.open(stored)
        assert image.size == (48, 64)
        assert dict(image.getexif()) == {}


def test_a_png_stays_a_png_without_its_metadata(courier):
    response = upload(courier, image_bytes("PNG", exif=gps_exif()), "x.png", "image/png")

    assert response.status_code == 201, response.content
    photo = CourierPhoto.objects.get(pk=response.json()["photoId"])
    with storages["proofs"].open(photo.file_name) as stored_file:
        kept = Image.open(io.BytesIO(stored_file.read()))
    assert (kept.format, photo.content_type) == ("PNG", "image/png")
    assert "exif" not in kept.info


@pytest.mark.parametrize(
    "content",
    [
        b"%PDF-1.7 not an image at all",
        b"",
        image_bytes("GIF"),
        image_bytes("JPEG")[:200],  # truncated: does not decode whole
    ],
    ids=["pdf", "empty", "gif", "truncated"],
)
def test_anything_but_a_jpeg_or_png_is_refused(courier, content):
    response = upload(courier, content)

    assert_error(response, 400, code="photo_invalid")
    assert not CourierPhoto.objects.exists()


def test_a_photo_over_5_mb_is_refused(courier):
    response = upload(courier, b"\xff\xd8" + b"0" * (5 * 1024 * 1024))

    assert_error(response, 400, ["photo must be at most 5 MB"], code="photo_invalid")


def test_a_decompression_bomb_is_refused_before_decoding(courier, monkeypatch):
    monkeypatch.setattr(images, "MAX_PIXELS", 1000)

    assert_error(upload(courier, image_bytes(size=(100, 100))), 400, code="photo_invalid")


def test_a_json_body_or_a_missing_field_is_a_400(courier):
    assert_error(
        courier.post(PHOTOS, {"photo": "aGVsbG8="}, format="json"),
        400,
        ["photo is required (a multipart file field)"],
    )
    assert_error(courier.post(PHOTOS, {}, format="multipart"), 400, code="photo_invalid")


def test_photos_need_a_courier_token(db):
    assert_error(upload(APIClient(), image_bytes()), 401, "Invalid or missing token")
