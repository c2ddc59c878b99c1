"""The OpenAPI document is something a client can code from (Swagger UI at /api/docs/, ReDoc at
/api/redoc/): every operation has a summary, a description of its own, an example of its
request body and of its success answer, and every example fits the schema it illustrates."""

import re
import uuid
from collections import defaultdict
from datetime import date, datetime

import pytest
from jsonschema import Draft202012Validator, FormatChecker

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")


def operations(document: dict) -> dict[str, dict]:
    """Every operation of the document by `METHOD path`."""
    return {
        f"{method.upper()} {path}": operation
        for path, path_item in document["paths"].items()
        for method, operation in path_item.items()
        if method in METHODS
    }


def examples_of(content: dict) -> list:
    """The example values of a request body's or an answer's `content`, every media type."""
    values = []
    for media in content.values():
        values += [example["value"] for example in media.get("examples", {}).values()]
        if "example" in media:
            values.append(media["example"])
    return values


def documentation_problems(operation: dict) -> list[str]:
    problems = []
    if not operation.get("summary", "").strip():
        problems.append("no summary")
    if not operation.get("description", "").strip():
        problems.append("no description")
    body = operation.get("requestBody")
    if body is not None and not examples_of(body["content"]):
        problems.append("no example of its request body")
    answers = {
        status: answer
        for status, answer in operation["responses"].items()
        if status.startswith("2") and answer.get("content")
    }
    for status, answer in answers.items():
        if not examples_of(answer["content"]):
            problems.append(f"no example of its {status} answer")
    return problems


def test_every_operation_has_a_summary_a_description_and_examples(document):
    problems = {
        name: found
        for name, operation in operations(document).items()
        if (found := documentation_problems(operation))
    }

    assert problems == {}


#: the partner family is one set of views served for three platforms (docs/contract.md "Partner
#: family"): its operations at partner-a, partner-b and partner-c are one operation thrice
PARTNER_FAMILY_PATH = re.compile(r"/integrations/partner-[abc]/")


def test_no_two_operations_share_a_description(document):
    by_description = defaultdict(set)
    for name, operation in operations(document).items():
        description = " ".join(operation.get("description", "").split())
        if description:
            by_description[description].add(
                PARTNER_FAMILY_PATH.sub("/integrations/partner-*/", name)
            )

    shared = [sorted(names) for names in by_description.values() if len(names) > 1]
    assert shared == []


def test_the_check_names_what_an_operation_lacks():
    """The check above reports each missing piece (it would pass on a document it cannot read)."""
    bare = {
        "requestBody": {"content": {"application/json": {"schema": {}}}},
        "responses": {"201": {"content": {"application/json": {"schema": {}}}}, "204": {}},
    }
    documented = {
        "summary": "Create a thing",
        "description": "Creates a thing.",
        "requestBody": {"content": {"application/json": {"examples": {"R": {"value": {}}}}}},
        "responses": {
            "201": {"content": {"application/json": {"examples": {"A": {"value": {"id": 1}}}}}},
            "204": {},
        },
    }

    assert documentation_problems(bare) == [
        "no summary",
        "no description",
        "no example of its request body",
        "no example of its 201 answer",
    ]
    assert documentation_problems(documented) == []


# --- every example fits its schema --------------------------------------------------------------


def json_schema(openapi_schema):
    """An OpenAPI 3.0 schema as JSON Schema: `nullable` becomes a null alternative, and an object
    with declared properties takes no other key (an example with a misspelt field fails)."""
    if isinstance(openapi_schema, list):
        return [json_schema(item) for item in openapi_schema]
    if not isinstance(openapi_schema, dict):
        return openapi_schema
    schema = {key: json_schema(value) for key, value in openapi_schema.items()}
    if "properties" in schema and "additionalProperties" not in schema:
        schema["additionalProperties"] = False
    if schema.pop("nullable", False):
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
        if isinstance(schema.get("type"), str):
            schema["type"] = [schema["type"], "null"]
        else:
            schema = {"anyOf": [schema, {"type": "null"}]}
    return schema


def _is_datetime(value: str) -> bool:
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT.+", value):
        return False
    return datetime.fromisoformat(value.replace("Z", "+00:00")).tzinfo is not None


def _format(name: str, is_valid) -> None:
    # a format speaks of strings only: a null where the schema allows one is not its business
    FORMATS.checks(name, raises=ValueError)(
        lambda value: not isinstance(value, str) or bool(is_valid(value))
    )


FORMATS = FormatChecker()
_format("uuid", uuid.UUID)
_format("date", date.fromisoformat)
_format("date-time", _is_datetime)


def example_errors(document: dict, schema: dict, value) -> list[str]:
    root = {**json_schema(schema), "components": json_schema(document["components"])}
    validator = Draft202012Validator(root, format_checker=FORMATS)
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
        for error in validator.iter_errors(value)
    ]


def examples_against_schemas(operation: dict):
    """(where, schema, value) for every example of the operation's request body and answers."""
    parts = [("request", operation.get("requestBody") or {})]
    parts += [(status, answer) for status, answer in operation["responses"].items()]
    for where, part in parts:
        for media in part.get("content", {}).values():
            for name, example in media.get("examples", {}).items():
                yield f"{where} {name}", media.get("schema", {}), example["value"]


def test_every_example_fits_the_schema_it_illustrates(document):
    misfits = {}
    for name, operation in operations(document).items():
        for where, schema, value in examples_against_schemas(operation):
            if errors := example_errors(document, schema, value):
                misfits[f"{name}: {where}"] = errors

    assert misfits == {}


def test_an_example_with_an_unknown_field_or_a_malformed_id_does_not_fit(document):
    """The fit check above catches what it is for (it would pass if it checked nothing)."""
    driver = {"$ref": "#/components/schemas/DispatchDriverOutput"}
    fitting = {
        "id": "1fe1c9c4-f693-484c-a8c9-473a2cc2204d",
        "name": "Marta Nowak",
        "phone": "+48601234567",
        "vehicleType": "van",
        "isActive": True,
        "capacity": None,
        "effectiveCapacity": 10,
        "shiftStart": "08:00",
        "shiftEnd": "20:00",
        "zoneIds": [],
    }

    assert example_errors(document, driver, fitting) == []
    assert example_errors(document, driver, {**fitting, "vehicle": "van"}) != []
    assert example_errors(document, driver, {**fitting, "id": "driver-1"}) != []
    assert example_errors(document, {"type": "string", "format": "date-time"}, "yesterday") != []
    assert example_errors(document, {"type": "string", "nullable": True}, None) == []
