"""Gazetteer CSV imports (contract "Geocoding and resolve-zone"): all or nothing, every problem
reported by line, a size limit, `manage.py import_gazetteer` and the queued import task."""

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command
from django.db import connection

from tests import builders
from zones import services, tasks
from zones.geocoding import GeocodeResult, geocode
from zones.models import GazetteerImport, GazetteerImportStatus, Place

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
HEADER = "address,postal_code,locality,lat,lng\n"


def rows(count: int, start: int = 0) -> str:
    return "".join(
        f"Street {i},{10000 + i % 50},Town,{50 + i / 1e5:.5f},{10 + i / 1e5:.5f}\n"
        for i in range(start, start + count)
    )


def write_csv(tmp_path, content: str | bytes, encoding="utf-8") -> Path:
    path = tmp_path / "places.csv"
    path.write_bytes(content if isinstance(content, bytes) else content.encode(encoding))
    return path


def run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_gazetteer", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def refused(organization, tmp_path, content: str | bytes) -> list[str]:
    """The problems `manage.py import_gazetteer` prints for a file it refuses (nothing written)."""
    err = io.StringIO()
    with pytest.raises(CommandError, match="Import refused, nothing was imported"):
        call_command(
            "import_gazetteer",
            organization.slug,
            str(write_csv(tmp_path, content)),
            stdout=io.StringIO(),
            stderr=err,
        )
    assert not Place.objects.filter(organization=organization).exists()
    return err.getvalue().splitlines()


def import_bytes(organization, content: bytes) -> services.GazetteerImportReport:
    return services.gazetteer_import_csv(
        organization_id=organization.id, stream=io.BytesIO(content)
    )


# ----- a good file -----


def test_command_imports_and_prints_progress(tmp_path, organization, monkeypatch):
    monkeypatch.setattr(services, "IMPORT_BATCH_SIZE", 2)
    path = write_csv(
        tmp_path,
        "\ufeffAddress,Postcode,City,Latitude,Longitude\n"  # a BOM and header aliases
        "Alexanderplatz 1,10178,Berlin,52.5219,13.4132\n"
        "Oranienstraße 25,10999,Berlin,52.5010, 13.4190\n"
        "\n"  # a blank line is skipped
        "Bergmannstraße 10,10961,Berlin,52.4905,13.3930\n",
    )
    out, err = run(organization.slug, str(path))
    assert out.splitlines() == [
        "2 rows read",
        f"Done: 3 places imported from 3 rows into {organization.name}",
    ]
    assert err == ""
    assert Place.objects.filter(organization=organization).count() == 3
    assert geocode(organization_id=organization.id, address="oranienstrasse 25") == GeocodeResult(
        52.5010, 13.4190, precise=True
    )


def test_reimport_updates_instead_of_duplicating(tmp_path, organization):
    run(organization.slug, str(write_csv(tmp_path, "address,lat,lng\nAlex 1,52.0,13.0\n")))
    assert geocode(organization_id=organization.id, address="Alex 1").lat == 52.0
    run(organization.slug, str(write_csv(tmp_path, "address,lat,lng\nALEX 1,52.5,13.0\n")))
    place = Place.objects.get(organization=organization)
    assert (place.address, place.lat) == ("ALEX 1", 52.5)
    # The cached answer went with the re-import.
    assert geocode(organization_id=organization.id, address="Alex 1").lat == 52.5


def test_a_large_file_goes_in_one_transaction_of_several_batches(tmp_path, organization):
    out, _ = run(organization.slug, str(write_csv(tmp_path, HEADER + rows(2500))))
    assert out.splitlines() == [
        "1000 rows read",
        "2000 rows read",
        f"Done: 2500 places imported from 2500 rows into {organization.name}",
    ]
    assert Place.objects.filter(organization=organization).count() == 2500


# ----- all or nothing, every problem by line -----


def test_a_nul_byte_in_line_1001_commits_nothing_and_names_the_line(tmp_path, organization):
    lines = (HEADER + rows(1500)).splitlines(keepends=True)
    lines[1000] = "Street\x00 999,10049,Town,50.00999,10.00999\n"  # line 1001
    assert refused(organization, tmp_path, "".join(lines)) == [
        "line 1001: address contains a NUL character"
    ]


def test_a_bad_row_after_two_written_batches_rolls_them_back(organization):
    Place.objects.create(organization=organization, address="Kept 1", lat=1, lng=1)
    content = HEADER + rows(2100) + "Late row,,,1e1,13\n" + rows(10, start=5000)
    report = import_bytes(organization, content.encode())
    assert report.problems == ["line 2102: lat must be a number between -90 and 90"]
    assert (report.rows, report.imported) == (2111, 0)
    # What was there before the refused file is untouched; nothing of the file is.
    assert list(Place.objects.filter(organization=organization).values_list("address")) == [
        ("Kept 1",)
    ]


def test_a_field_of_200000_characters_is_a_reported_problem_not_an_abort(tmp_path, organization):
    content = (
        HEADER
        + rows(1)
        + f"{'x' * 200_000},10115,Berlin,52.5,13.4\n"
        + rows(1, start=1)
        + "Last,,,95,13\n"
    )
    assert refused(organization, tmp_path, content) == [
        "line 3: a field is longer than 4096 characters",
        "line 5: lat must be a number between -90 and 90",
    ]


def test_the_parser_reads_no_field_past_4096_characters(organization):
    """Far below csv's own limit (131,072): a 5,000-character field ends at the parser."""
    content = f"address,lat,lng\n{'a' * 4096},1,1\n{'b' * 5000},1,1\n".encode()
    assert import_bytes(organization, content).problems == [
        "line 2: address must be at most 500 characters",
        "line 3: a field is longer than 4096 characters",
    ]


@pytest.mark.parametrize(
    "text", ["1e1", "nan", "inf", "-inf", "1_0", "0x10", "+52.5", "52,5", "٥٢", "", "52.5.1"]
)
def test_coordinates_must_be_plain_decimal_numbers(organization, text):
    content = f'address,lat,lng\nA 1,"{text}",13\nA 2,52,"{text}"\n'.encode()
    report = import_bytes(organization, content)
    assert report.problems == [
        "line 2: lat must be a number between -90 and 90",
        "line 3: lng must be a number between -180 and 180",
    ]
    assert report.imported == 0
    assert not Place.objects.exists()


def test_coordinates_out_of_range_are_refused(organization):
    report = import_bytes(organization, b"address,lat,lng\nA,90.0001,0\nB,0,-180.5\nC,-90,180\n")
    assert report.problems == [
        "line 2: lat must be a number between -90 and 90",
        "line 3: lng must be a number between -180 and 180",
    ]


def test_fields_longer_than_their_column_are_refused(organization):
    content = (
        "address,postal_code,locality,lat,lng\n"
        f"{'a' * 501},1,x,1,1\n"
        f"A,{'1' * 21},{'b' * 201},1,1\n"
        f"{'a' * 500},{'1' * 20},{'b' * 200},1,1\n"
    ).encode()
    assert import_bytes(organization, content).problems == [
        "line 2: address must be at most 500 characters",
        "line 3: postal_code must be at most 20 characters",
        "line 3: locality must be at most 200 characters",
    ]


def test_wrong_column_counts_and_empty_addresses(organization):
    content = b"address,lat,lng\nA,1\nB,1,2,3\n,1,2\n   ,1,2\n!!!,1,2\n"
    assert import_bytes(organization, content).problems == [
        "line 2: has 2 fields, the header has 3",
        "line 3: has 4 fields, the header has 3",
        "line 4: address must not be empty",
        "line 5: address must not be empty",
        "line 6: address has no letters or digits",
    ]


def test_undecodable_utf8_is_reported_by_line(tmp_path, organization):
    content = "address,lat,lng\nKöln 1,50,7\n".encode() + "Köln 2,50,7\n".encode("latin-1")
    assert refused(organization, tmp_path, content) == ["line 3: is not UTF-8 text"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"street,x,y\na,1,2\n", "missing: address, lat, lng"),
        (b"address,latitude\na,1\n", "missing: lng"),
        (b"", "line 1: the file is empty: the first line must be the header"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00", "line 1: the file is not CSV text in UTF-8"),
        (b"address,lat,lng,Lat\na,1,2,3\n", "line 1: CSV header names lat more than once"),
    ],
)
def test_a_header_that_cannot_be_used_is_one_problem(tmp_path, organization, content, problem):
    problems = refused(organization, tmp_path, content)
    assert len(problems) == 1
    assert problem in problems[0]
    assert problems[0].startswith("line 1: ")


def test_the_report_lists_the_first_100_problems_and_counts_them_all(organization):
    content = ("address,lat,lng\n" + "x,north,1\n" * 150 + "ok,1,1\n").encode()
    report = import_bytes(organization, content)
    assert report.problem_count == 150
    assert len(report.problems) == 100
    assert report.problems[99] == "line 101: lat must be a number between -90 and 90"
    assert report.rows == 151
    assert report.summary() == (
        "Import refused, nothing was imported: 150 problems in 151 rows (the first 100 are listed)"
    )


# ----- limits -----


def test_more_rows_than_the_row_limit_are_refused(settings, organization):
    settings.GAZETTEER_IMPORT_MAX_ROWS = 10
    report = import_bytes(organization, (HEADER + rows(11)).encode())
    assert report.problems == [
        "line 12: the file has more than 10 rows (GAZETTEER_IMPORT_MAX_ROWS): split it into "
        "smaller files"
    ]
    assert not Place.objects.exists()
    assert import_bytes(organization, (HEADER + rows(10)).encode()).imported == 10


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(settings, tmp_path, organization):
    settings.GAZETTEER_IMPORT_MAX_BYTES = 1000
    content = HEADER + rows(40)
    assert len(content) > 1000
    with pytest.raises(CommandError, match="larger than the limit of 1,000 bytes"):
        run(organization.slug, str(write_csv(tmp_path, content)))
    assert not Place.objects.exists()
    settings.GAZETTEER_IMPORT_MAX_BYTES = len(content)
    run(organization.slug, str(write_csv(tmp_path, content)))
    assert Place.objects.count() == 40


def test_standard_input_over_the_size_limit_is_refused(settings, organization, monkeypatch):
    settings.GAZETTEER_IMPORT_MAX_BYTES = 1000
    stdin = io.BytesIO((HEADER + rows(400)).encode())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stdin))
    with pytest.raises(CommandError, match="larger than the limit of 1,000 bytes"):
        run(organization.slug, "-")
    assert stdin.tell() == 1001  # one byte past the limit was read, not the rest
    assert not Place.objects.exists()


# ----- the command's exit code -----


def test_the_command_exits_non_zero_and_prints_every_problem(transactional_db, tmp_path):
    organization = builders.organization("Exit Code Org")
    path = write_csv(tmp_path, HEADER + rows(3) + "Bad,,,91,0\nWorse,,,0,x\n")
    database = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/"
        f"{database['NAME']}",
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "import_gazetteer", organization.slug, str(path)],
        cwd=ROOT,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "line 5: lat must be a number between -90 and 90",
        "line 6: lng must be a number between -180 and 180",
        "CommandError: Import refused, nothing was imported: 2 problems in 5 rows",
    ]
    assert not Place.objects.exists()


def test_unknown_organization(tmp_path):
    with pytest.raises(CommandError, match="Organization nope not found"):
        run("nope", str(write_csv(tmp_path, "address,lat,lng\n")))


def test_missing_file(organization):
    with pytest.raises(CommandError, match=r"Cannot read /nonexistent\.csv"):
        run(organization.slug, "/nonexistent.csv")


# ----- the queued import's task -----


@pytest.fixture
def import_storage(settings, tmp_path):
    """The gazetteer imports' storage in a directory of the test's own."""
    settings.STORAGES = {
        **settings.STORAGES,
        services.IMPORT_STORAGE: {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "imports")},
        },
    }
    return tmp_path / "imports"


def queued(organization, content: str) -> GazetteerImport:
    record = services.gazetteer_import_queue(
        organization_id=organization.id,
        upload=ContentFile(content.encode()),
        file_name="places.csv",
        size_bytes=len(content),
        requested_by="admin@example.com",
    )
    assert record.status == GazetteerImportStatus.QUEUED
    return record


def test_the_task_imports_a_queued_file_once(
    organization, import_storage, test_broker, django_capture_on_commit_callbacks
):
    record = queued(organization, HEADER + rows(30))
    stored = import_storage / record.stored_name
    assert stored.exists()
    with test_broker.connection_for_write() as conn:
        assert conn.default_channel.client.llen("celery") == 1  # the task's message

    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.import_gazetteer(str(record.id)) == GazetteerImportStatus.IMPORTED
    record.refresh_from_db()
    assert (record.status, record.rows, record.imported, record.problems) == (
        GazetteerImportStatus.IMPORTED,
        30,
        30,
        [],
    )
    assert record.finished_at is not None and record.stored_name == ""
    assert not stored.exists()
    assert Place.objects.filter(organization=organization).count() == 30

    # The same message again (a redelivery): nothing runs twice.
    Place.objects.filter(organization=organization).delete()
    assert tasks.import_gazetteer(str(record.id)) is None
    assert not Place.objects.exists()


def test_the_task_records_a_refused_file(organization, import_storage, test_broker):
    record = queued(organization, HEADER + rows(5) + "x,,,nan,1\n")
    assert tasks.import_gazetteer(str(record.id)) == GazetteerImportStatus.REFUSED
    record.refresh_from_db()
    assert record.status == GazetteerImportStatus.REFUSED
    assert (record.rows, record.imported, record.problem_count) == (6, 0, 1)
    assert record.problems == ["line 7: lat must be a number between -90 and 90"]
    assert not Place.objects.exists()


def test_a_run_that_raises_is_failed_not_left_queued(organization, import_storage, test_broker):
    record = queued(organization, HEADER + rows(5))
    (import_storage / record.stored_name).write_bytes(b"changed underneath")
    GazetteerImport.objects.filter(pk=record.pk).update(stored_name="../../outside.csv")
    with pytest.raises(Exception):  # noqa: B017 - the storage refuses a path outside itself
        tasks.import_gazetteer(str(record.id))
    record.refresh_from_db()
    assert record.status == GazetteerImportStatus.FAILED
    assert record.problems == ["the import failed unexpectedly (the service's log has the details)"]


def test_a_queued_import_whose_file_is_gone_fails(organization, import_storage, test_broker):
    record = queued(organization, HEADER + rows(5))
    (import_storage / record.stored_name).unlink()
    assert tasks.import_gazetteer(str(record.id)) == GazetteerImportStatus.FAILED
    record.refresh_from_db()
    assert record.problems == ["the uploaded file is gone; upload it again"]


def test_a_broker_that_cannot_be_reached_fails_the_import_at_once(
    organization, import_storage, dead_broker
):
    record = services.gazetteer_import_queue(
        organization_id=organization.id,
        upload=ContentFile((HEADER + rows(3)).encode()),
        file_name="places.csv",
        size_bytes=100,
    )
    assert record.status == GazetteerImportStatus.FAILED
    assert record.problems == ["the import could not be queued (task broker unavailable)"]
    assert list(import_storage.rglob("*.csv")) == []
