"""Property-based: control characters (the hostile-class test's line-breaking class) in every
text that reaches a CSV file. Read from one (the gazetteer import): refused, by line and column,
with nothing written. Written into one (the zones export): refused when sent, or read back from
the export exactly as sent."""

import csv
import io
import json

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests import builders
from tests.core.test_hostile_classes import LINE_BREAKING_CHARACTERS, line_breaking_text
from zones import gazetteer_csv, services
from zones.models import Place, Zone

pytestmark = pytest.mark.django_db

PROPERTY_SETTINGS = hypothesis_settings(
    max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
GOOD_ROW = {"address": "Alexanderplatz 1", "postal_code": "10178", "locality": "Berlin"}


def csv_file(rows: list[dict]) -> bytes:
    """A CSV file as a spreadsheet writes it (quoted where needed, CRLF line ends)."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=gazetteer_csv.PLACE_COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    return text.getvalue().encode("utf-8", errors="surrogatepass")


def test_the_class_holds_every_control_character():
    assert len(LINE_BREAKING_CHARACTERS) == 32 + 33 + 2
    assert {"\x00", "\t", "\n", "\r", "\x7f", "\x85", "\u2028"} <= set(LINE_BREAKING_CHARACTERS)


@pytest.mark.parametrize("column", gazetteer_csv.TEXT_COLUMNS)
@PROPERTY_SETTINGS
@given(value=line_breaking_text, good_before=st.integers(min_value=0, max_value=3))
def test_control_characters_in_every_gazetteer_csv_text_column_are_refused(
    organization, column, value, good_before
):
    good = [
        {**GOOD_ROW, "address": f"Street {i}", "lat": "52.5", "lng": "13.4"}
        for i in range(good_before)
    ]
    hostile = {**GOOD_ROW, column: value, "lat": "52.5", "lng": "13.4"}
    report = services.gazetteer_import_csv(
        organization_id=organization.id, stream=io.BytesIO(csv_file([*good, hostile]))
    )
    line = 2 + good_before  # the hostile row's first line (a quoted line break spans two)
    problem = (
        "contains a NUL character"
        if "\x00" in value
        else "must not contain control characters or line breaks"
    )
    assert report.problems == [f"line {line}: {column} {problem}"], (value, report.problems)
    assert report.imported == 0
    assert not Place.objects.filter(organization=organization).exists()


@pytest.fixture
def manager(organization):
    return builders.manager_client(organization, "zones-admin@example.com")


@pytest.fixture
def partner(organization):
    return builders.key_client(builders.api_key(organization, "partner_a"))


@PROPERTY_SETTINGS
@given(name=line_breaking_text, note=line_breaking_text)
def test_control_characters_in_zone_text_written_to_the_csv_export_read_back_or_are_refused(
    organization, manager, partner, name, note
):
    square = builders.box(*builders.BERLIN, width_m=1000, height_m=1000)
    created = manager.post(
        f"/api/manage/organizations/{organization.id}/zones",
        {"name": name, "geodata": square, "metadata": {"note": note}},
        format="json",
    )
    try:
        if created.status_code == 400:  # refused when sent, naming the field it is in
            assert any(
                text.startswith(("name", "metadata")) for text in created.json()["message"]
            ), (
                name,
                note,
                created.json(),
            )
            return
        assert created.status_code == 201, created.content
        exported = partner.get("/api/integrations/partner-a/zones/export", {"format": "csv"})
        text = b"".join(exported.streaming_content).decode()
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        assert [row["name"] for row in rows] == [created.json()["name"]], (name, text)
        assert json.loads(rows[0]["metadata"]) == {"note": note}
    finally:
        Zone.objects.filter(organization=organization).delete()
