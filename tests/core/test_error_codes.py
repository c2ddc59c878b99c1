"""Error codes (contract "Errors"): every error class names a stable code, docs/contract.md's
table lists exactly those codes with their statuses, the codes a client branches on most answer
through the real API, and a request with a Host the service does not serve gets the JSON body."""

import importlib
import pkgutil
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from delivery.errors import ApplicationError
from tests import builders
from tests.conftest import assert_error, is_snake_case
from tests.core.conftest import APP_PACKAGES

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = APP_PACKAGES


def _import_every_module() -> None:
    """Error classes live in each app's errors.py, and a few beside the code that raises them
    (delivery/netguard.py): import every module of the project so none is missed."""
    for package in PACKAGES:
        importlib.import_module(package)
        path = [str(ROOT / package)]
        for module in pkgutil.walk_packages(path, prefix=f"{package}."):
            if ".migrations" not in module.name and not module.name.endswith(".wsgi"):
                importlib.import_module(module.name)


def error_classes() -> list[type[ApplicationError]]:
    _import_every_module()
    found, pending = [], list(ApplicationError.__subclasses__())
    while pending:
        error = pending.pop()
        pending.extend(error.__subclasses__())
        if error.__module__.split(".")[0] in PACKAGES:  # not a test's own subclass
            found.append(error)
    return sorted(set(found), key=lambda error: (error.__module__, error.__name__))


def documented_codes() -> dict[str, int]:
    """The code → status table of docs/contract.md's "Errors" section."""
    text = (ROOT / "docs" / "contract.md").read_text()
    section = text.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    table: dict[str, int] = {}
    for code, status in re.findall(r"^\| `([^`]+)` \| (\d{3}) \|", section, flags=re.M):
        assert code not in table, f"{code} is listed twice"
        table[code] = int(status)
    return table


def test_every_error_class_names_its_own_snake_case_code():
    classes = error_classes()
    assert len(classes) > 60  # the walk found the apps' classes, not only the base ones
    unnamed = [error.__qualname__ for error in classes if "code" not in vars(error)]
    assert unnamed == [], "each error class states its code (delivery/errors.py)"
    assert [error.code for error in classes if not is_snake_case(error.code)] == []


def test_a_code_is_shared_only_by_a_class_and_subclasses_that_restate_it():
    """One meaning, one code: two classes share a code only when one refines the other
    (ZoneNameNotFound is a ZoneNotFound)."""
    by_code: dict[str, list[type[ApplicationError]]] = {}
    for error in error_classes():
        by_code.setdefault(error.code, []).append(error)
    for code, sharing in by_code.items():
        root = min(sharing, key=lambda error: len(error.__mro__))
        strays = [error.__qualname__ for error in sharing if not issubclass(error, root)]
        assert strays == [], f"{code} means two things: {root.__qualname__} and {strays}"
        assert len({int(error.status_code) for error in sharing}) == 1, code


def test_the_contract_table_lists_every_code_with_its_status_and_nothing_else():
    table = documented_codes()
    in_code = {error.code: int(error.status_code) for error in error_classes()}
    assert sorted(set(in_code) - set(table)) == [], "codes missing from docs/contract.md"
    assert sorted(set(table) - set(in_code)) == [], "documented codes no class has"
    assert {code: table[code] for code in in_code} == in_code


# ----- the codes clients branch on most, through the real API -----


@pytest.fixture
def erp(organization):
    return builders.erp_client(organization)


@pytest.fixture
def one_place_template(organization):
    """Sundays 08:00-12:00 in Berlin, one place, closing two hours before."""
    return builders.slot_template(builders.slot_zone(organization), capacity=1)


@pytest.mark.django_db
@pytest.mark.usefixtures("traveller")
def test_a_full_slot_is_slot_full(erp, one_place_template):
    assert builders.book(erp, one_place_template, builders.SUNDAY).status_code == 201

    response = builders.book(erp, one_place_template, builders.SUNDAY, ref="SO-1002")

    assert_error(response, 400, "Delivery slot is full", code="slot_full")


@pytest.mark.django_db
def test_a_booking_after_the_cutoff_is_cutoff_passed(erp, one_place_template, traveller):
    traveller.move_to("2030-01-06T05:00:00Z")  # 06:00 in Berlin: two hours before 08:00

    response = builders.book(erp, one_place_template, builders.SUNDAY)

    assert_error(response, 400, "Booking cutoff has passed for this slot", code="cutoff_passed")


@pytest.mark.django_db
def test_an_external_ref_used_twice_is_duplicate_external_ref(organization):
    builders.zone(organization)
    partner = builders.partner_client(organization)
    assert builders.create_order(partner).status_code == 201

    response = builders.create_order(partner, recipientName="Somebody Else")

    assert_error(
        response,
        409,
        "Order with externalRef PO-1001 already exists",
        code="duplicate_external_ref",
    )


@pytest.mark.django_db
def test_field_problems_are_validation_failed_with_every_problem(organization):
    partner = builders.partner_client(organization)

    response = builders.create_order(partner, externalRef=None, recipientName=7)

    body = assert_error(response, 400, code="validation_failed")
    assert len(body["message"]) >= 2, body  # every problem of the body at once


@pytest.mark.django_db
def test_the_request_id_in_the_body_is_the_one_the_client_sent():
    response = Client(headers={"X-Request-Id": "client-id-42"}).get("/api/no/such/thing")

    body = assert_error(response, 404, "Not found", code="not_found")
    assert body["requestId"] == "client-id-42"


@pytest.mark.django_db
def test_a_refused_api_key_names_why(organization):
    missing = Client().get("/api/integrations/partner-a/orders/PO-1")
    assert_error(missing, 401, "Missing X-API-Key header", code="api_key_missing")
    wrong = Client(headers={"X-API-Key": "sk_live_nothing"}).get(
        "/api/integrations/partner-a/orders/PO-1"
    )
    assert_error(wrong, 401, "Invalid API key", code="api_key_invalid")


@pytest.mark.django_db
def test_a_wrong_provisioning_secret_is_its_own_code():
    client = Client(headers={"X-Provisioning-Secret": "wrong"})

    response = client.get("/api/provisioning/organizations")

    assert_error(response, 401, "Invalid provisioning secret", code="provisioning_secret_invalid")


@pytest.mark.django_db
def test_an_accept_header_without_json_is_not_acceptable():
    response = Client(headers={"Accept": "text/html"}).get("/api/no/such/thing/at/all")
    assert_error(response, 404, code="not_found")  # no view: nothing to negotiate

    refused = Client(
        headers={
            "Accept": "text/html",
            "X-Provisioning-Secret": settings.PROVISIONING_SECRET,
        }
    ).get("/api/provisioning/organizations")

    assert_error(refused, 406, code="not_acceptable")


# ----- a Host the service does not serve -----

PATHS = ["/api/provisioning/organizations", "/healthz", "/track/abc", "/admin/login/", "/"]


@pytest.fixture
def served_host(settings):
    settings.ALLOWED_HOSTS = ["api.example.com"]


@pytest.mark.django_db
@pytest.mark.usefixtures("served_host")
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("debug", [False, True], ids=["debug-off", "debug-on"])
def test_a_host_the_service_does_not_serve_is_a_json_400_on_every_path(settings, path, debug):
    settings.DEBUG = debug  # with DEBUG on, Django would answer its HTML debug page
    client = Client(HTTP_HOST="evil.example")

    for response in (client.get(path), client.post(path, "{}", content_type="application/json")):
        assert response["Content-Type"] == "application/json"
        assert_error(response, 400, "Invalid Host header", code="bad_host")

    assert Client(HTTP_HOST="api.example.com").get("/healthz").status_code == 200


@pytest.mark.django_db
@pytest.mark.usefixtures("served_host")
def test_a_bad_host_met_above_the_error_layer_gets_the_json_body_from_handler400(settings):
    """A middleware above ApiErrorMiddleware that asks for the host (Django's CommonMiddleware
    placed first, say) makes Django answer through handler400, outside the request id: the
    handler makes one for the header and the body alike."""
    settings.MIDDLEWARE = ["django.middleware.common.CommonMiddleware", *settings.MIDDLEWARE]

    response = Client(HTTP_HOST="evil.example").get("/track/abc")

    body = assert_error(response, 400, "Invalid Host header", code="bad_host")
    assert len(body["requestId"]) == 32


# ----- the OpenAPI document -----


def test_the_error_schema_has_code_and_request_id(document):
    error = document["components"]["schemas"]["Error"]
    assert set(error["required"]) == {"statusCode", "message", "error", "code", "requestId"}
    code = error["properties"]["code"]
    # Not an enum: a new code within a status is a compatible change (contract "Errors").
    assert code["type"] == "string" and "enum" not in code
    assert 'docs/contract.md "Errors"' in code["description"]
    assert error["properties"]["requestId"]["type"] == "string"


def test_every_error_answer_of_every_operation_shows_a_body_with_a_documented_code(document):
    table = documented_codes()
    checked = 0
    for path, entries in document["paths"].items():
        for method, operation in entries.items():
            for status, answer in operation.get("responses", {}).items():
                if int(status) < 400:
                    continue
                content = answer["content"]["application/json"]
                assert content["schema"] == {"$ref": "#/components/schemas/Error"}
                examples = list(content.get("examples", {}).values())
                assert examples, f"{method.upper()} {path} {status} has no example"
                for example in examples:
                    body = example["value"]
                    assert set(body) == {"statusCode", "message", "error", "code", "requestId"}
                    assert body["statusCode"] == int(status), (path, method, body)
                    assert table.get(body["code"]) == int(status), (path, method, body)
                    assert body["requestId"]
                checked += 1
    assert checked > 200
