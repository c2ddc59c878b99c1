"""The published-document check (scripts/openapi_compat.py, docs/contract.md "Versioning and
compatibility"): every kind of narrowing is found with a stable identifier, widenings are not,
`$ref`s are followed, the changelog rule holds, and the published history is walked in git."""

import copy
import subprocess

import pytest
import yaml

from scripts.openapi_compat import (
    against_published,
    missing_from_changelog,
    narrowings,
    published_history,
    unexplained_history,
)


def json_content(schema: dict) -> dict:
    return {"content": {"application/json": {"schema": schema}}}


def base() -> dict:
    """A small document in drf-spectacular's shapes: components by $ref, an allOf-wrapped
    nullable reference, a oneOf with NullEnum, arrays of objects, parameters, headers."""
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1.0.0"},
        "paths": {
            "/api/orders": {
                "get": {
                    "parameters": [
                        {"in": "query", "name": "page", "schema": {"type": "integer"}},
                        {
                            "in": "query",
                            "name": "status",
                            "schema": {"type": "string", "enum": ["pending", "assigned"]},
                        },
                        {"in": "header", "name": "X-Trace", "schema": {"type": "string"}},
                    ],
                    "responses": {
                        "200": {
                            "headers": {"API-Version": {"$ref": "#/components/headers/V"}},
                            **json_content({"$ref": "#/components/schemas/OrderPage"}),
                        },
                        "401": json_content({"$ref": "#/components/schemas/Error"}),
                    },
                },
                "post": {
                    "requestBody": {
                        "required": False,
                        **json_content({"$ref": "#/components/schemas/OrderInputRequest"}),
                    },
                    "responses": {
                        "201": json_content({"$ref": "#/components/schemas/Order"}),
                        "400": json_content({"$ref": "#/components/schemas/Error"}),
                    },
                },
            },
            "/api/orders/{ref}": {
                "get": {
                    "parameters": [
                        {
                            "in": "path",
                            "name": "ref",
                            "required": True,
                            "schema": {"type": "string"},
                        }
                    ],
                    "responses": {
                        "200": json_content({"$ref": "#/components/schemas/Order"}),
                        "404": json_content({"$ref": "#/components/schemas/Error"}),
                    },
                },
                "delete": {"responses": {"204": {"description": "gone"}}},
            },
        },
        "components": {
            "headers": {"V": {"schema": {"type": "string"}}},
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {"statusCode": {"type": "integer"}, "message": {}},
                    "required": ["statusCode", "message"],
                },
                "OrderPage": {
                    "type": "object",
                    "properties": {
                        "total": {"type": "integer"},
                        "results": {
                            "type": "array",
                            "items": {"$ref": "#/components/schemas/Order"},
                        },
                    },
                    "required": ["total", "results"],
                },
                "Order": {
                    "type": "object",
                    "properties": {
                        "externalRef": {"type": "string"},
                        "createdAt": {"type": "string", "format": "date-time"},
                        "weightKg": {"type": "number"},
                        "status": {"$ref": "#/components/schemas/StatusEnum"},
                        "driver": {
                            "allOf": [{"$ref": "#/components/schemas/Driver"}],
                            "nullable": True,
                        },
                        "unbookableReason": {
                            "nullable": True,
                            "oneOf": [
                                {"$ref": "#/components/schemas/ReasonEnum"},
                                {"$ref": "#/components/schemas/NullEnum"},
                            ],
                        },
                        "notes": {"type": "string"},
                    },
                    "required": ["externalRef", "createdAt", "status", "driver"],
                },
                "Driver": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "phone": {"type": "string"}},
                    "required": ["name"],
                },
                "StatusEnum": {"enum": ["pending", "assigned", "delivered"], "type": "string"},
                "ReasonEnum": {"enum": ["full", "blackout"], "type": "string"},
                "NullEnum": {"enum": [None]},
                "OrderInputRequest": {
                    "type": "object",
                    "properties": {
                        "externalRef": {"type": "string", "minLength": 1, "maxLength": 100},
                        "notes": {"type": "string", "nullable": True, "maxLength": 500},
                        "quantity": {"type": "integer", "minimum": 1, "maximum": 50},
                        "phone": {"type": "string", "pattern": "^[0-9+ ]+$"},
                        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
                        "size": {"type": "string", "enum": ["small", "large"]},
                        "weightKg": {"type": "integer"},
                        "metadata": {"type": "object", "additionalProperties": {}},
                        "window": {"$ref": "#/components/schemas/WindowRequest"},
                    },
                    "required": ["externalRef"],
                },
                "WindowRequest": {
                    "type": "object",
                    "properties": {
                        "start": {"type": "string", "format": "date-time"},
                        "end": {"type": "string", "format": "date-time"},
                    },
                    "required": ["start"],
                },
            },
        },
    }


def changed(edit) -> list[str]:
    """The narrowings from base() to base() edited in place by `edit`."""
    new = base()
    edit(new)
    return narrowings(base(), new)


def schemas(document: dict) -> dict:
    return document["components"]["schemas"]


def order_props(document: dict) -> dict:
    return schemas(document)["Order"]["properties"]


def input_props(document: dict) -> dict:
    return schemas(document)["OrderInputRequest"]["properties"]


def get_orders(document: dict) -> dict:
    return document["paths"]["/api/orders"]["get"]


def test_an_unchanged_document_has_no_narrowing():
    assert narrowings(base(), base()) == []


# --- what is dropped ------------------------------------------------------------------------------


def test_a_path_and_an_operation_removed():
    assert changed(lambda d: d["paths"].pop("/api/orders/{ref}")) == [
        "/api/orders/{ref}: path removed"
    ]
    assert changed(lambda d: d["paths"]["/api/orders/{ref}"].pop("delete")) == [
        "DELETE /api/orders/{ref}: operation removed"
    ]


def test_an_answer_status_media_type_and_header_removed():
    assert changed(lambda d: get_orders(d)["responses"].pop("401")) == [
        "GET /api/orders: answer 401 removed"
    ]
    assert changed(lambda d: get_orders(d)["responses"]["200"].pop("headers")) == [
        "GET /api/orders: answer 200 header API-Version removed"
    ]

    def csv_instead(d):
        answer = get_orders(d)["responses"]["200"]
        answer["content"] = {"text/csv": answer["content"].pop("application/json")}

    assert changed(csv_instead) == ["GET /api/orders: answer 200 application/json removed"]


def test_an_answer_field_removed_is_found_through_every_reference_that_reaches_it():
    found = changed(lambda d: order_props(d).pop("notes"))
    # Order is used by three answers, one of them as the items of OrderPage.results
    assert found == [
        "GET /api/orders: answer 200 field results[].notes removed",
        "POST /api/orders: answer 201 field notes removed",
        "GET /api/orders/{ref}: answer 200 field notes removed",
    ]


def test_a_field_of_an_allof_wrapped_reference_removed():
    found = changed(lambda d: schemas(d)["Driver"]["properties"].pop("phone"))
    assert "GET /api/orders/{ref}: answer 200 field driver.phone removed" in found
    assert "GET /api/orders: answer 200 field results[].driver.phone removed" in found


def test_an_answer_field_made_optional_or_nullable():
    def optional(d):
        schemas(d)["Order"]["required"].remove("createdAt")

    assert "POST /api/orders: answer 201 field createdAt made optional" in changed(optional)

    def nullable(d):
        order_props(d)["externalRef"]["nullable"] = True

    assert "POST /api/orders: answer 201 field externalRef may now be null" in changed(nullable)


def test_answer_type_and_format_changes():
    def retyped(d):
        order_props(d)["externalRef"]["type"] = "integer"

    assert "POST /api/orders: answer 201 field externalRef type string -> integer" in changed(
        retyped
    )

    def widened_number(d):
        schemas(d)["OrderPage"]["properties"]["total"]["type"] = "number"

    # a client parsing an integer may now get 1.5
    assert changed(widened_number) == [
        "GET /api/orders: answer 200 field total type integer -> number"
    ]

    def date_only(d):
        order_props(d)["createdAt"]["format"] = "date"

    assert (
        "POST /api/orders: answer 201 field createdAt type string(date-time) -> string(date)"
        in changed(date_only)
    )

    def object_to_array(d):
        schemas(d)["Error"] = {"type": "array", "items": {"type": "string"}}

    assert "GET /api/orders: answer 401 body type object -> array" in changed(object_to_array)


def test_an_enum_value_removed_answer_and_request_and_behind_one_of():
    assert changed(lambda d: schemas(d)["StatusEnum"]["enum"].remove("delivered")) == [
        'GET /api/orders: answer 200 field results[].status enum value "delivered" removed',
        'POST /api/orders: answer 201 field status enum value "delivered" removed',
        'GET /api/orders/{ref}: answer 200 field status enum value "delivered" removed',
    ]
    found = changed(lambda d: schemas(d)["ReasonEnum"]["enum"].remove("full"))
    assert 'POST /api/orders: answer 201 field unbookableReason enum value "full" removed' in found
    assert changed(lambda d: input_props(d)["size"]["enum"].remove("large")) == [
        'POST /api/orders: request field size enum value "large" removed'
    ]
    assert changed(
        lambda d: get_orders(d)["parameters"][1]["schema"]["enum"].remove("pending")
    ) == ['GET /api/orders: query parameter status enum value "pending" removed']


def test_a_nullable_answer_loses_its_null_branch_without_a_report_but_gains_one_with():
    def not_null(d):
        order_props(d)["unbookableReason"] = {"$ref": "#/components/schemas/ReasonEnum"}

    assert changed(not_null) == []  # never null any more: a client handling null still works
    old, new = base(), base()
    old_order, new_order = order_props(old), order_props(new)
    old_order["unbookableReason"] = {"$ref": "#/components/schemas/ReasonEnum"}
    new_order["unbookableReason"] = base()["components"]["schemas"]["Order"]["properties"][
        "unbookableReason"
    ]
    assert "POST /api/orders: answer 201 field unbookableReason may now be null" in narrowings(
        old, new
    )


# --- what is made stricter on the request side --------------------------------------------------


def test_request_fields_removed_made_required_and_added_as_required():
    assert changed(lambda d: input_props(d).pop("notes")) == [
        "POST /api/orders: request field notes removed"
    ]

    def required(d):
        schemas(d)["OrderInputRequest"]["required"].append("quantity")

    assert changed(required) == ["POST /api/orders: request field quantity made required"]

    def new_required(d):
        input_props(d)["priority"] = {"type": "integer"}
        schemas(d)["OrderInputRequest"]["required"].append("priority")

    assert changed(new_required) == ["POST /api/orders: request field priority added as required"]

    def nested_required(d):
        schemas(d)["WindowRequest"]["required"].append("end")

    assert changed(nested_required) == ["POST /api/orders: request field window.end made required"]


def test_request_types_nullability_and_enums_imposed():
    def retyped(d):
        input_props(d)["externalRef"]["type"] = "integer"

    assert changed(retyped) == [
        "POST /api/orders: request field externalRef type string -> integer"
    ]

    def narrowed_number(d):
        schemas(d)["OrderInputRequest"]["properties"]["weightKg"]["type"] = "boolean"

    assert changed(narrowed_number) == [
        "POST /api/orders: request field weightKg type integer -> boolean"
    ]

    def formatted(d):
        input_props(d)["phone"]["format"] = "uuid"

    assert changed(formatted) == [
        "POST /api/orders: request field phone type string -> string(uuid)"
    ]

    def typed(d):
        input_props(d)["metadata"]["additionalProperties"] = {"type": "string"}

    assert changed(typed) == ["POST /api/orders: request field metadata.* type any -> string"]

    def no_null(d):
        input_props(d)["notes"].pop("nullable")

    assert changed(no_null) == ["POST /api/orders: request field notes no longer takes null"]

    def enum_imposed(d):
        input_props(d)["externalRef"]["enum"] = ["a", "b"]

    assert changed(enum_imposed) == [
        'POST /api/orders: request field externalRef limited to enum ["a", "b"]'
    ]

    def closed(d):
        input_props(d)["metadata"]["additionalProperties"] = False

    assert changed(closed) == [
        "POST /api/orders: request field metadata no longer takes extra keys"
    ]


@pytest.mark.parametrize(
    ("field", "key", "value", "identifier"),
    [
        ("externalRef", "maxLength", 99, "externalRef maxLength lowered from 100 to 99"),
        ("externalRef", "minLength", 2, "externalRef minLength raised from 1 to 2"),
        ("quantity", "maximum", 49, "quantity maximum lowered from 50 to 49"),
        ("quantity", "minimum", 2, "quantity minimum raised from 1 to 2"),
        ("tags", "maxItems", 5, "tags maxItems lowered from 10 to 5"),
        ("tags", "minItems", 1, "tags minItems 1 added"),
        ("phone", "pattern", "^[0-9]+$", "phone pattern changed: ^[0-9]+$"),
        ("phone", "maxLength", 20, "phone maxLength 20 added"),
        ("quantity", "multipleOf", 5, "quantity multipleOf added: 5"),
        ("tags", "uniqueItems", True, "tags uniqueItems added"),
    ],
)
def test_each_tighter_request_constraint(field, key, value, identifier):
    def tighten(d):
        input_props(d)[field][key] = value

    assert changed(tighten) == [f"POST /api/orders: request field {identifier}"]


def test_a_constraint_on_an_array_item_is_named_by_its_field():
    def item_limit(d):
        input_props(d)["tags"]["items"]["maxLength"] = 30

    assert changed(item_limit) == ["POST /api/orders: request field tags[] maxLength 30 added"]


def test_parameters_removed_made_required_added_as_required_and_tightened():
    assert changed(lambda d: get_orders(d)["parameters"].pop(0)) == [
        "GET /api/orders: query parameter page removed"
    ]

    def required(d):
        get_orders(d)["parameters"][0]["required"] = True

    assert changed(required) == ["GET /api/orders: query parameter page made required"]

    def new_required(d):
        get_orders(d)["parameters"].append(
            {"in": "query", "name": "zone", "required": True, "schema": {"type": "string"}}
        )

    assert changed(new_required) == ["GET /api/orders: required query parameter zone added"]

    def tightened(d):
        get_orders(d)["parameters"][0]["schema"]["maximum"] = 100

    assert changed(tightened) == ["GET /api/orders: query parameter page maximum 100 added"]

    def header_case(d):
        get_orders(d)["parameters"][2]["name"] = "x-trace"

    assert changed(header_case) == []  # header names are case-insensitive


def test_request_body_made_required_added_as_required_removed_and_media_type_removed():
    def post(d):
        return d["paths"]["/api/orders"]["post"]

    def required(d):
        post(d)["requestBody"]["required"] = True

    assert changed(required) == ["POST /api/orders: request body made required"]
    assert changed(lambda d: post(d).pop("requestBody")) == [
        "POST /api/orders: request body removed"
    ]

    def new_body(d):
        d["paths"]["/api/orders/{ref}"]["delete"]["requestBody"] = {
            "required": True,
            **json_content({"type": "object"}),
        }

    assert changed(new_body) == ["DELETE /api/orders/{ref}: request body added as required"]

    def form_only(d):
        content = post(d)["requestBody"]["content"]
        content["multipart/form-data"] = content.pop("application/json")

    assert changed(form_only) == ["POST /api/orders: request body application/json removed"]


# --- what is compatible ---------------------------------------------------------------------------


def test_widenings_are_not_narrowings():
    def widen(d):
        d["paths"]["/api/new"] = {"get": {"responses": {"200": {"description": "ok"}}}}
        d["paths"]["/api/orders/{ref}"]["patch"] = {"responses": {"200": {"description": "ok"}}}
        get_orders(d)["responses"]["429"] = json_content({"$ref": "#/components/schemas/Error"})
        get_orders(d)["responses"]["200"]["headers"]["RateLimit"] = {"schema": {"type": "string"}}
        get_orders(d)["parameters"].append(
            {"in": "query", "name": "zone", "schema": {"type": "string"}}
        )
        get_orders(d)["parameters"][0]["schema"]["type"] = "number"  # integer -> number, sent
        order_props(d)["trackingUrl"] = {"type": "string", "format": "uri"}  # new answer field
        schemas(d)["Order"]["required"].append("notes")  # promised more often
        schemas(d)["StatusEnum"]["enum"].append("cancelled")  # new value (clients ignore)
        schemas(d)["Error"]["properties"]["code"] = {"type": "string"}
        schemas(d)["Error"]["properties"]["message"] = {"type": "string"}  # typed answer: refined
        input_props(d)["priority"] = {"type": "integer"}  # new optional request field
        input_props(d)["size"]["enum"].append("medium")
        input_props(d)["externalRef"]["maxLength"] = 200  # looser
        input_props(d)["externalRef"].pop("minLength")
        input_props(d)["quantity"]["maximum"] = 99
        input_props(d)["phone"].pop("pattern")
        input_props(d)["weightKg"]["type"] = "number"  # takes every integer still
        input_props(d)["externalRef"]["nullable"] = True
        input_props(d)["window"] = {"allOf": [{"$ref": "#/components/schemas/WindowRequest"}]}
        schemas(d)["WindowRequest"]["properties"]["start"].pop("format")  # takes more
        schemas(d)["WindowRequest"]["required"] = []
        d["paths"]["/api/orders/{ref}"]["get"]["responses"]["200"]["description"] = "other words"
        d["info"]["version"] = "1.1.0"

    assert changed(widen) == []


def test_answer_side_constraints_and_request_side_renamed_components_are_not_reported():
    def tighter_answer(d):
        order_props(d)["externalRef"]["maxLength"] = 10  # the service sends less: harmless

    assert changed(tighter_answer) == []

    def renamed(d):
        schemas(d)["OrderCreateRequest"] = schemas(d).pop("OrderInputRequest")
        d["paths"]["/api/orders"]["post"]["requestBody"]["content"]["application/json"][
            "schema"
        ] = {"$ref": "#/components/schemas/OrderCreateRequest"}

    assert changed(renamed) == []


def test_recursive_schemas_end_and_a_change_deep_inside_is_found():
    def tree(document, leaf_type):
        schemas(document)["Node"] = {
            "type": "object",
            "properties": {
                "value": {"type": leaf_type},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
            },
        }
        get_orders(document)["responses"]["200"] = json_content(
            {"$ref": "#/components/schemas/Node"}
        )
        return document

    assert narrowings(tree(base(), "string"), tree(base(), "string")) == []
    assert narrowings(tree(base(), "string"), tree(base(), "integer")) == [
        "GET /api/orders: answer 200 field value type string -> integer"
    ]


# --- the changelog rule ---------------------------------------------------------------------------

ID = "GET /api/orders: answer 200 field total removed"


@pytest.mark.parametrize(
    ("changelog", "named"),
    [
        (f"- `{ID}`: the count was always the length of results.", True),
        (f"* `{ID}` - replaced by `count` in 2.0", True),
        (f"- `{ID}`", False),  # no reason
        (f"- `{ID}`:  .", False),
        (f"- {ID}: no backticks", False),
        ("- `GET /api/orders: answer 200 field totals removed`: another field", False),
        ("", False),
    ],
)
def test_a_narrowing_is_named_by_its_identifier_in_backticks_with_a_reason(changelog, named):
    assert missing_from_changelog([ID], changelog) == ([] if named else [ID])


def test_against_published_lists_narrowings_then_asks_for_any_difference():
    published = yaml.safe_dump(base())
    assert against_published(published, published) == []
    narrower = base()
    order_props(narrower).pop("notes")
    [failure] = against_published(published, yaml.safe_dump(narrower))
    assert "  POST /api/orders: answer 201 field notes removed\n" in failure
    assert "make openapi" in failure
    assert "docs/changelog.md" in failure
    wider = base()
    order_props(wider)["trackingUrl"] = {"type": "string"}
    [failure] = against_published(published, yaml.safe_dump(wider))
    assert "differs from the published docs/openapi.yaml" in failure
    assert "run `make openapi`" in failure


# --- the published history, read from git ---------------------------------------------------------


def git(repository, *arguments):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *arguments],
        cwd=repository,
        check=True,
        capture_output=True,
    )


def publish(repository, document: dict, message: str) -> None:
    (repository / "docs" / "openapi.yaml").write_text(yaml.safe_dump(document))
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", message)


def test_every_narrowing_in_the_published_history_must_be_in_the_changelog(tmp_path):
    (tmp_path / "docs").mkdir()
    git(tmp_path, "init", "-q")
    first = base()
    publish(tmp_path, first, "first")
    second = copy.deepcopy(first)
    order_props(second).pop("notes")  # a narrowing, published
    publish(tmp_path, second, "second")
    (tmp_path / "README").write_text("unrelated")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "unrelated")
    third = copy.deepcopy(second)
    order_props(third)["trackingUrl"] = {"type": "string"}  # a widening, published
    publish(tmp_path, third, "third")

    versions = published_history(tmp_path)
    assert [text for _, text in versions] == [yaml.safe_dump(d) for d in (first, second, third)]
    problems = unexplained_history(versions, changelog="")
    assert [problem.split("   (")[0] for problem in problems] == [
        "GET /api/orders: answer 200 field results[].notes removed",
        "POST /api/orders: answer 201 field notes removed",
        "GET /api/orders/{ref}: answer 200 field notes removed",
    ]
    first_commit, second_commit = versions[0][0], versions[1][0]
    assert problems[0].endswith(f"({first_commit} -> {second_commit})")
    changelog = "\n".join(
        f"- `{problem.split('   (')[0]}`: notes moved to the order's events."
        for problem in problems
    )
    assert unexplained_history(versions, changelog) == []

    # an uncommitted edit of the published document is checked too
    fourth = copy.deepcopy(third)
    order_props(fourth).pop("trackingUrl")
    (tmp_path / "docs" / "openapi.yaml").write_text(yaml.safe_dump(fourth))
    versions = published_history(tmp_path)
    assert versions[-1][0] == "working tree"
    assert [p.split("   (")[0] for p in unexplained_history(versions, changelog)] == [
        "GET /api/orders: answer 200 field results[].trackingUrl removed",
        "POST /api/orders: answer 201 field trackingUrl removed",
        "GET /api/orders/{ref}: answer 200 field trackingUrl removed",
    ]


def test_the_history_follows_the_first_parent_line_so_a_merged_branch_is_one_step(tmp_path):
    # main and a branch each widen the same base; compared in commit order they would look like
    # narrowings of each other, along the first-parent line they are not
    (tmp_path / "docs").mkdir()
    git(tmp_path, "init", "-q", "-b", "main")
    publish(tmp_path, base(), "base")
    git(tmp_path, "checkout", "-q", "-b", "side")
    side = base()
    order_props(side)["sideField"] = {"type": "string"}
    publish(tmp_path, side, "side widens")
    git(tmp_path, "checkout", "-q", "main")
    main = base()
    order_props(main)["mainField"] = {"type": "string"}
    publish(tmp_path, main, "main widens")
    git(tmp_path, "merge", "-q", "--no-edit", "side")  # the two additions merge cleanly
    both = copy.deepcopy(main)
    order_props(both)["sideField"] = {"type": "string"}
    assert (tmp_path / "docs" / "openapi.yaml").read_text() == yaml.safe_dump(both)
    versions = published_history(tmp_path)
    assert [text for _, text in versions] == [yaml.safe_dump(d) for d in (base(), main, both)]
    assert unexplained_history(versions, changelog="") == []
