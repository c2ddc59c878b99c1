"""Retention of couriers' records (docs/operations.md "Retention"): proof files (signatures and
photos) go 180 days after the proof, through the `proofs` storage, while the proof, the order and
its history stay; photos no proof uses go 24 hours after their upload; the trail keeps 24 hours.
In batches, safe twice and in parallel."""

import datetime as dt
import logging
import threading

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.db import connections

from couriers import tasks
from couriers.models import CourierPhoto, LocationPoint, StopProof
from couriers.services import locations, retention
from integrations.models import OrderStatusEvent
from tests import builders
from tests.conftest import assert_error
from tests.couriers.conftest import NOW
from tests.couriers.test_events import send, walk
from tests.couriers.test_photos import image_bytes, upload
from tests.couriers.test_proof import deliver_with_proof, proof_path

pytestmark = pytest.mark.django_db

DAY = dt.timedelta(days=1)
SECOND = dt.timedelta(seconds=1)


def stored(name: str) -> bool:
    return storages["proofs"].exists(name)


def files_of(proof: StopProof) -> list[str]:
    names = [proof.signature_name] if proof.signature_name else []
    return names + [photo.file_name for photo in proof.photos.all()]


def photo_row(driver, *, created: dt.datetime) -> CourierPhoto:
    photo = CourierPhoto(
        organization_id=driver.organization_id,
        driver=driver,
        content_type="image/jpeg",
        width=64,
        height=48,
        size_bytes=3,
        created_at=created,
    )
    photo.file_name = storages["proofs"].save(f"photos/{photo.id}.jpg", ContentFile(b"jpg"))
    photo.save(force_insert=True)
    return photo


def proof_row(order, driver, *, created: dt.datetime, photos=()) -> StopProof:
    """A delivered proof with a signature file and `photos`, recorded at `created`."""
    proof = StopProof(
        organization_id=order.organization_id,
        order=order,
        driver=driver,
        status="delivered",
        at=created,
        recipient_name="Ada Lovelace",
        created_at=created,
    )
    proof.signature_name = storages["proofs"].save(
        f"signatures/{proof.id}.png", ContentFile(b"png")
    )
    proof.save(force_insert=True)
    proof.photos.set(photos)
    return proof


# ----- proof files -----


def test_proof_files_go_after_180_days_and_the_proof_and_history_stay(
    clock, organization, courier, driver, route_orders
):
    order = route_orders[1]
    deliver_with_proof(courier, order)
    proof = StopProof.objects.get(order=order)
    names = files_of(proof)
    assert len(names) == 2 and all(stored(name) for name in names)  # signature and photo
    history = list(OrderStatusEvent.objects.filter(order=order).values_list("to_status", flat=True))

    clock.shift(180 * DAY - SECOND)
    assert retention.proof_files_expired_delete() == 0
    assert all(stored(name) for name in names)

    clock.shift(2 * SECOND)
    assert retention.proof_files_expired_delete() == 2

    assert not any(stored(name) for name in names)
    assert not CourierPhoto.objects.exists()
    proof.refresh_from_db()
    assert (proof.signature_name, proof.files_removed_at) == ("", NOW + 180 * DAY + SECOND)
    assert list(proof.photos.all()) == []
    order.refresh_from_db()
    assert order.status == "delivered"
    assert (
        list(OrderStatusEvent.objects.filter(order=order).values_list("to_status", flat=True))
        == history
    )
    # The proof still reads, without its files.
    manager = builders.manager_client(organization, "later@example.com")
    body = manager.get(proof_path(organization, order)).json()
    assert (body["status"], body["recipientName"], body["barcode"]) == (
        "delivered",
        "Ada Lovelace",
        order.expected_barcode,
    )
    assert (body["signatureUrl"], body["photoUrls"]) == (None, [])
    # A second run finds nothing: the proof is no longer walked.
    assert retention.proof_files_expired_delete() == 0


def test_a_photo_a_younger_proof_also_uses_stays_with_it(clock, driver, route_orders):
    shared = photo_row(driver, created=NOW - 200 * DAY)
    own = photo_row(driver, created=NOW - 200 * DAY)
    old = proof_row(route_orders[0], driver, created=NOW - 181 * DAY, photos=[shared, own])
    young = proof_row(route_orders[1], driver, created=NOW - 10 * DAY, photos=[shared])

    # The old proof's signature and its own photo; the shared photo stays for the young proof.
    assert retention.proof_files_expired_delete() == 2

    assert not stored(old.signature_name)
    assert not stored(own.file_name)
    assert stored(shared.file_name) and stored(young.signature_name)
    assert list(CourierPhoto.objects.values_list("pk", flat=True)) == [shared.pk]
    assert list(young.photos.all()) == [shared]

    # When the young proof's time comes, the photo goes with it.
    clock.shift(171 * DAY)
    assert retention.proof_files_expired_delete() == 2
    assert not stored(shared.file_name) and not CourierPhoto.objects.exists()


def test_the_setting_sets_the_proof_retention(clock, driver, route_orders, settings):
    settings.PROOF_FILE_RETENTION_DAYS = 30
    month_old = proof_row(route_orders[0], driver, created=NOW - 30 * DAY - SECOND)
    younger = proof_row(route_orders[1], driver, created=NOW - 30 * DAY + SECOND)

    assert retention.proof_files_expired_delete() == 1
    assert not stored(month_old.signature_name) and stored(younger.signature_name)


@pytest.mark.django_db(transaction=True)
def test_two_runs_at_once_remove_every_file_once(organization, driver, zone):
    """Two workers on their own connections: disjoint batches, no error, each file counted
    once and gone from storage."""
    old = NOW - 200 * DAY
    names = []
    for n in range(12):
        order = builders.order_row(organization, zone=zone, external_ref=f"OLD-{n}")
        proof = proof_row(
            order, driver, created=old + n * SECOND, photos=[photo_row(driver, created=old)]
        )
        names += files_of(proof)
    barrier = threading.Barrier(2)
    removed: list[int] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            barrier.wait()
            removed.append(retention.proof_files_expired_delete(now=NOW, batch_size=2))
        except BaseException as error:  # reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert sum(removed) == len(names) == 24
    assert not any(stored(name) for name in names)
    assert not StopProof.objects.filter(files_removed_at__isnull=True).exists()
    assert StopProof.objects.count() == 12


# ----- unused photos -----


def test_a_photo_no_proof_uses_goes_after_24_hours(clock, courier, route_orders):
    order = route_orders[1]
    deliver_with_proof(courier, order)
    used = CourierPhoto.objects.get()
    unused_id = upload(courier, image_bytes()).json()["photoId"]
    unused = CourierPhoto.objects.get(pk=unused_id)

    clock.shift(24 * dt.timedelta(hours=1) - SECOND)
    assert retention.photos_unused_delete() == 0
    clock.shift(2 * SECOND)
    assert retention.photos_unused_delete() == 1

    assert not stored(unused.file_name)
    assert list(CourierPhoto.objects.all()) == [used]
    assert stored(used.file_name)
    # The one in use is marked, so later runs pass it by.
    used.refresh_from_db()
    assert used.seen_in_use_at == NOW + 24 * dt.timedelta(hours=1) + SECOND
    assert retention.photos_unused_delete() == 0


def test_an_event_naming_a_photo_that_went_is_refused(clock, courier, route_orders, settings):
    photo_id = upload(courier, image_bytes()).json()["photoId"]
    clock.shift(dt.timedelta(hours=25))
    assert retention.photos_unused_delete() == 1
    order = route_orders[0]
    walk(courier, order, "picked_up", "in_transit")

    response = send(courier, order, {"type": "delivered", "proof": {"photoIds": [photo_id]}})

    assert_error(response, 400, [f"photoIds has an unknown photo: {photo_id}"])


# ----- the trail -----


def test_the_trail_prune_goes_in_batches_and_follows_the_setting(clock, driver, settings):
    settings.COURIER_TRAIL_RETENTION_HOURS = 2
    for minutes in (121, 122, 123, 124, 125, 119):
        LocationPoint.objects.create(
            driver=driver, at=NOW - dt.timedelta(minutes=minutes), lat=52.5, lng=13.4
        )

    assert locations.trails_prune(batch_size=2) == 5
    assert list(LocationPoint.objects.values_list("at", flat=True)) == [
        NOW - dt.timedelta(minutes=119)
    ]


# ----- the tasks -----


def test_the_tasks_log_one_line_each_and_run_again_safely(
    clock, courier, driver, route_orders, caplog
):
    proof_row(route_orders[0], driver, created=NOW - 181 * DAY)
    upload(courier, image_bytes())
    clock.shift(dt.timedelta(hours=25))
    caplog.set_level(logging.INFO)

    assert tasks.delete_old_proof_files() == 1
    assert tasks.delete_unused_photos() == 1
    assert tasks.delete_old_proof_files() == 0
    assert tasks.delete_unused_photos() == 0

    assert [(r.getMessage(), r.fields) for r in caplog.records if r.name == "couriers.tasks"] == [
        (
            "couriers.delete_old_proof_files deleted 1 proof files",
            {"task": "couriers.delete_old_proof_files", "deleted": 1},
        ),
        (
            "couriers.delete_unused_photos deleted 1 unused photos",
            {"task": "couriers.delete_unused_photos", "deleted": 1},
        ),
    ]
