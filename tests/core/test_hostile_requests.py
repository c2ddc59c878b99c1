"""Hostile requests on every endpoint: oversized, deeply nested and non-UTF-8 bodies, non-UTF-8
query strings, header floods, and cross-tenant ids (contract "Errors", "Authentication and scope").

Endpoints come from the OpenAPI document and from the URL resolver, so a new one is covered
without editing this file (or, for cross-tenant ids, fails until its ids are known here).
"""

import json
import re
import uuid
from datetime import timedelta
from urllib.parse import quote

import pytest
from django.conf import settings
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from tenants.models import User
from tests import builders
from tests.conftest import assert_error
from tests.core.test_hostile_text import _schema, body_operations
from tests.core.world import (
    World,
    erp_order_body,
    next_weekday,
    partner_order_body,
)
from tests.gunicorn import HEALTHZ, gunicorn_server, raw_request, status_of

pytestmark = pytest.mark.django_db

MIB = 1024 * 1024
DOCUMENT = _schema()
BODY_OPERATIONS = sorted(body_operations(DOCUMENT))
GET_OPERATIONS = sorted(
    path for path, operations in DOCUMENT["paths"].items() if "get" in operations
)


def fill(path: str) -> str:
    """A path of the document with made-up values for its parameters."""
    return re.sub(r"\{[^}]+\}", lambda _: str(uuid.uuid4()), path)


def real(world: World, path: str) -> str:
    """A path of the document with the world's ids: the request gets past every lookup."""

    def value(match: re.Match) -> str:
        return quote(id_of(world, path, match.group(1)), safe="")

    return re.sub(r"\{([^}]+)\}", value, path)


def all_credentials() -> dict[str, str]:
    return {
        "X-Provisioning-Secret": settings.PROVISIONING_SECRET,
        "X-API-Key": "sk_partner_a_not-a-real-key-000000000000000000000",
        "Authorization": "Bearer not-a-real-token",
    }


def credentials_of(world: World, path: str) -> dict[str, str]:
    """The caller's real credentials for a path (the right platform's key for integrations)."""
    if path.startswith("/api/provisioning/"):
        return {"X-Provisioning-Secret": settings.PROVISIONING_SECRET}
    if path.startswith(("/api/manage/", "/api/auth/")):
        return {"Authorization": f"Bearer {world.token}"}
    if path.startswith("/api/courier/"):
        return {"Authorization": f"Bearer {world.courier_token}"}
    for family in ("partner-a", "partner-b", "partner-c", "erp"):
        if path.startswith(f"/api/integrations/{family}/"):
            return {"X-API-Key": world.keys[family.replace("-", "_")]}
    return {"X-API-Key": world.keys["standard"]}


# ----- bodies -----


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_body_over_one_mebibyte_is_413_on_every_body_endpoint(method, path):
    body = json.dumps({"name": "x" * MIB})
    response = getattr(Client(headers=all_credentials()), method)(
        fill(path), body, content_type="application/json"
    )
    assert_error(response, 413, "Request body must not exceed 1 MiB")


def test_body_of_exactly_one_mebibyte_is_read(world):
    path = "/api/promises/resolve-zone"
    head, tail = '{"address": "52.52,13.40", "padding": "', '"}'
    body = head + "x" * (MIB - len(head) - len(tail)) + tail
    assert len(body.encode()) == MIB
    client = Client(headers=credentials_of(world, path))
    assert client.post(path, body, content_type="application/json").status_code == 200
    response = client.post(path, body + " ", content_type="application/json")
    assert_error(response, 413, "Request body must not exceed 1 MiB")


@pytest.mark.parametrize("length", ["abc", "-1x", "1e9", "99999999999999999999999"])
def test_malformed_or_absurd_content_length_is_not_a_server_error(length):
    response = Client(headers=all_credentials()).post(
        "/api/provisioning/organizations",
        "{}",
        content_type="application/json",
        CONTENT_LENGTH=length,
    )
    assert response.status_code in (400, 413)
    assert_error(response, response.status_code)


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_deeply_nested_json_is_400_on_every_body_endpoint(world, method, path):
    client = Client(headers=credentials_of(world, path))
    url = real(world, path)
    for body in (
        "[" * 50_000 + "]" * 50_000,
        '{"a":' * 50_000 + "1" + "}" * 50_000,
        '{"name": ' + "[" * 50_000 + "]" * 50_000 + "}",
    ):
        response = getattr(client, method)(url, body, content_type="application/json")
        assert_error(response, 400, "Request body is not valid JSON")


def nested(depth: int) -> str:
    """`depth` objects inside each other, as JSON text (json.dumps would need the recursion)."""
    return '{"a": ' * (depth - 1) + '{"leaf": "x"}' + "}" * (depth - 1)


TOO_DEEP = "Request body must not nest deeper than 64 levels"
NOT_JSON = "Request body is not valid JSON"


def deep_outcome(depth: int) -> tuple[int, tuple[str, ...]]:
    """What a zone with `depth` levels in `metadata` gets: the body object is level 1, so the
    innermost object of `metadata` is level depth + 1 and MAX_JSON_DEPTH (64) admits 63. Past
    ~900 the decoder's own recursion limit is reached first; where exactly depends on how deep
    the call stack already is when it runs (~909 here), so depths near it accept either."""
    if depth <= 63:
        return 201, ()
    if depth <= 800:
        return 400, (TOO_DEEP,)
    if depth < 990:
        return 400, (TOO_DEEP, NOT_JSON)
    return 400, (NOT_JSON,)


@pytest.mark.parametrize("depth", [20, 62, 63, 64, 65, 100, 500, 800, 900, 990, 5000])
def test_deep_json_inside_a_free_form_field_is_stored_or_refused(world, depth):
    """Zone metadata is free-form JSON: deep but parseable values must not reach a 5xx in the
    database (jsonb) or when the answer is rendered (a RecursionError once, at depth 900).
    Bodies nest at most 64 levels: the body object and 63 in `metadata`."""
    manager = Client(headers={"Authorization": f"Bearer {world.token}"})
    body = json.dumps(
        {"name": f"Deep {depth}", "geodata": builders.MITTE_GEODATA, "metadata": None}
    )
    body = body.replace('"metadata": null', f'"metadata": {nested(depth)}')
    response = manager.post(f"{world.manage}/zones", body, content_type="application/json")
    status, messages = deep_outcome(depth)
    assert response.status_code in (201, 400), response.content[:300]
    assert response.status_code == status, response.content[:300]
    if response.status_code == 201:
        assert json.dumps(response.json()["metadata"]).replace(" ", "") == nested(depth).replace(
            " ", ""
        )
        export = Client(headers={"X-API-Key": world.keys["partner_a"]}).get(
            "/api/integrations/partner-a/zones/export"
        )
        assert export.status_code == 200
    else:
        assert depth > 63
        # Past the decoder's own recursion limit the text is refused as JSON it cannot read.
        message = assert_error(response, 400)["message"]
        assert message in (TOO_DEEP, NOT_JSON)
        assert message in messages, (depth, message)


@pytest.mark.parametrize(("method", "path"), BODY_OPERATIONS)
def test_invalid_utf8_body_is_400_on_every_body_endpoint(world, method, path):
    client = Client(headers=credentials_of(world, path))
    url = real(world, path)
    for body in (b'{"name": "\xff\xfe"}', b"\xc3\x28", b'{"name": "\xed\xa0\x80"}'):
        response = getattr(client, method)(url, body, content_type="application/json")
        assert_error(response, 400, "Request body is not valid JSON")


@pytest.mark.parametrize("path", GET_OPERATIONS)
def test_invalid_utf8_query_string_is_400_on_every_get_endpoint(world, path):
    url = real(world, path)
    client = Client(headers=credentials_of(world, path))
    for query in ("date=%ff%fe", "zone=%c3%28&date=2030-01-01", "x=%ed%a0%80"):
        response = client.get(f"{url}?{query}")
        assert_error(response, 400, "Query string is not valid UTF-8")


def test_valid_utf8_query_strings_still_work(world):
    client = Client(headers={"X-API-Key": world.keys["partner_a"]})
    zone = quote(world.ids["zone_name"])
    response = client.get(
        f"/api/integrations/partner-a/delivery-windows?zone={zone}&date=2030-01-07"
    )
    assert response.status_code == 200, response.content
    response = client.get(
        "/api/integrations/partner-a/delivery-windows?zone=Z%C3%BCrich%20%F0%9F%9A%9A&date=2030-01-07"
    )
    assert_error(response, 404, "Zone Zürich 🚚 not found")


# ----- headers -----


@pytest.mark.parametrize("path", GET_OPERATIONS)
def test_header_floods_are_not_server_errors(world, path):
    url = real(world, path)
    flood = {f"HTTP_X_FLOOD_{n}": "v" * 100 for n in range(500)}
    long_value = "A" * 64 * 1024
    credentials = credentials_of(world, path)
    cases = [
        flood,
        {"HTTP_X_API_KEY": long_value},
        {"HTTP_AUTHORIZATION": f"Bearer {long_value}"},
        {"HTTP_X_PROVISIONING_SECRET": long_value},
        {"HTTP_X_REQUEST_ID": long_value},
        {"HTTP_ACCEPT_LANGUAGE": long_value},
        {"HTTP_COOKIE": "; ".join(f"c{n}={'v' * 50}" for n in range(1000))},
        {"HTTP_X_FORWARDED_FOR": ", ".join(["10.0.0.1"] * 5000)},
        {"HTTP_IDEMPOTENCY_KEY": long_value},
    ]
    for extra in cases:
        response = Client(headers=credentials).get(url, **extra)
        assert response.status_code < 500, (list(extra)[:1], response.content[:300])
        if response.status_code >= 400 and path.startswith("/api/"):
            assert_error(response, response.status_code)
        assert len(response["X-Request-Id"]) <= 128


def _raw_request(port: int, request: bytes) -> bytes:
    """tests/gunicorn.py's raw request, where a server that neither answers nor closes within
    10 s (one that hangs) fails the test."""
    try:
        return raw_request(port, request)
    except TimeoutError:
        pytest.fail(f"the server neither answered nor closed within 10 s: {request[:80]!r}")


def test_header_floods_and_chunked_bodies_against_a_real_gunicorn(tmp_path):
    """What the WSGI server itself does with hundreds of headers, huge header values and a
    chunked body over 1 MiB: a 4xx (or a closed connection), never a 5xx, and it keeps serving."""
    with gunicorn_server(tmp_path) as port:
        head = b"GET /api/provisioning/organizations HTTP/1.1\r\nHost: localhost\r\n"
        many = b"".join(b"X-Flood-%d: %s\r\n" % (n, b"v" * 50) for n in range(500))
        long_value = b"X-API-Key: " + b"A" * 100_000 + b"\r\n"
        chunk = b"x" * 65536
        chunked_body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(20))
        chunked = (
            b"POST /api/provisioning/organizations HTTP/1.1\r\nHost: localhost\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            b"Connection: close\r\n\r\n" + chunked_body + b"0\r\n\r\n"
        )
        for request in (
            head + many + b"Connection: close\r\n\r\n",
            head + long_value + b"Connection: close\r\n\r\n",
            head + b"X-Long: " + b"B" * 1_000_000 + b"\r\nConnection: close\r\n\r\n",
            chunked,
        ):
            raw = _raw_request(port, request)
            status = status_of(raw)
            assert status == 0 or 400 <= status < 500, status
            # 0 only for a connection closed or reset without an answer (a timeout has failed)
            assert raw == b"" or 400 <= status < 500, raw[:300]
            assert status_of(_raw_request(port, HEALTHZ)) == 200


# ----- cross-tenant ids -----

#: routes whose ids are not tenant-scoped, and why
NOT_TENANT_SCOPED = {
    # The provisioning secret is the platform operator's: it sees every organization.
    "api/provisioning/",
    # Capability tokens: whoever holds the link may read it, whatever their organization.
    "api/provisioning/invite/",
    "api/track/",
    "track/",
}
MADE_UP = {"external_ref": "REF-made-up-404"}


def _walk(patterns, prefix=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry


def _parameters(route: str) -> list[str]:
    return re.findall(r"<(?:\w+:)?(\w+)>", route)


def _methods(entry: URLPattern) -> list[str]:
    view = getattr(entry.callback, "view_class", None) or getattr(entry.callback, "cls", None)
    if view is None:
        return ["get"]
    return [m for m in ("get", "post", "put", "patch", "delete") if hasattr(view, m)]


def id_routes():
    """Every API route that takes an id in its path, with each of its methods."""
    for route, entry in _walk(get_resolver().url_patterns):
        if route.endswith("/") or route.startswith("admin/"):
            continue  # slashed twins answer the same; the admin has its own test below
        names = _parameters(route)
        if not names:
            continue
        if any(route.startswith(prefix) for prefix in NOT_TENANT_SCOPED):
            continue
        for method in _methods(entry):
            for name in names:
                yield pytest.param(route, method, name, id=f"{method.upper()} {route} [{name}]")


def id_of(world: World, route: str, name: str) -> str:
    if name == "org_id":
        return world.org_id
    if name == "key_id":
        return world.key_ids["standard"]
    if name == "token":
        return world.ids["tracking_token" if "track/" in route else "invite_token"]
    if name == "external_ref":
        return world.ids["erp_ref" if "/erp/" in route else "partner_ref"]
    if name in world.ids:
        return world.ids[name]
    raise AssertionError(f"no id of the world for <{name}> in {route}: add it to id_of()")


def body_for(world: World, route: str, method: str) -> dict | None:
    if method in ("get", "delete"):
        return None
    if route.endswith("/transition"):
        return {"status": "cancelled"}
    if route.endswith("/simulate"):
        return {"outcome": "delivered"}
    if route.endswith("/delivery-slot"):
        return {
            "deliverySlotTemplateId": world.ids["template_id"],
            "deliverySlotDate": next_weekday(1).isoformat(),
        }
    if "/drivers" in route:
        return {"name": "Mallory"}
    if "/zones" in route:
        return {"name": "Mallory zone"}
    if "slot-templates/seed" in route:
        return {}
    if "/slot-templates" in route:
        return {"startTime": "09:00"}
    if route.endswith("/slot-policy"):
        return {"timezone": "UTC"}
    if route.endswith("/api-keys"):
        return {"name": "Mallory key", "platform": "partner_b"}
    return {}


def call(client: Client, method: str, url: str, body: dict | None):
    if body is None:
        return getattr(client, method)(url)
    return getattr(client, method)(url, json.dumps(body), content_type="application/json")


def snapshot(world: World) -> dict:
    """What the organization's admin sees of its objects."""
    manager = Client(headers={"Authorization": f"Bearer {world.token}"})
    paths = [
        f"{world.manage}/zones/{world.ids['zone_id']}",
        f"{world.manage}/drivers/{world.ids['driver_id']}",
        f"{world.manage}/slot-templates/{world.ids['template_id']}",
        f"{world.manage}/orders/{world.ids['order_id']}",
        f"{world.manage}/orders/{world.ids['erp_order_id']}",
        f"{world.manage}/slot-policy",
        f"{world.manage}/api-keys",
        f"{world.manage}/webhook-deliveries",
    ]
    return {path: manager.get(path).json() for path in paths}


def test_every_route_with_an_id_is_known():
    assert len(list(id_routes())) >= 30


@pytest.mark.parametrize(("route", "method", "name"), list(id_routes()))
def test_another_organizations_id_answers_like_a_made_up_one(two_worlds, route, method, name):
    ours, theirs = two_worlds
    before = snapshot(theirs)
    names = _parameters(route)
    made_up = MADE_UP.get(name, str(uuid.uuid4()))

    def url(value: str) -> str:
        result = "/" + route
        for param in names:
            if param == name:
                replacement = value
            elif name == "org_id":
                replacement = id_of(theirs, route, param)  # their org with their objects
            else:
                replacement = id_of(ours, route, param)
            result = re.sub(rf"<(?:\w+:)?{param}>", quote(replacement, safe=""), result)
        return result

    client = Client(headers=credentials_of(ours, "/" + route))
    body = body_for(ours, route, method)
    theirs_value = id_of(theirs, route, name)
    cross = call(client, method, url(theirs_value), body)
    invented = call(client, method, url(made_up), body)

    assert invented.status_code == 404, invented.content
    assert cross.status_code == 404, cross.content
    assert answer_without(cross, theirs_value) == answer_without(invented, made_up)
    assert snapshot(theirs) == before


def answer_without(response, value: str) -> str:
    """The answer's text with `value` and its own request id (errors carry it) left out."""
    text = response.content.decode().replace(value, "<id>")
    return text.replace(response["X-Request-Id"], "<request id>")


def test_ids_in_bodies_and_queries_of_another_organization_answer_like_made_up_ones(two_worlds):
    ours, theirs = two_worlds
    before = snapshot(theirs)
    monday_date = next_weekday(1)
    monday = monday_date.isoformat()
    # the Wednesday after that Monday, whatever weekday today is
    wednesday = (monday_date + timedelta(days=2)).isoformat()
    standard = Client(headers={"X-API-Key": ours.keys["standard"]})
    erp = Client(headers={"X-API-Key": ours.keys["erp"]})
    partner = Client(headers={"X-API-Key": ours.keys["partner_a"]})
    manager = Client(headers={"Authorization": f"Bearer {ours.token}"})
    cases = [
        (
            "zone_id",
            lambda v: standard.get(
                "/api/public/delivery-slots/availability/bulk",
                {"zoneId": v, "startDate": monday, "endDate": wednesday},
            ),
        ),
        (
            "zone_id",
            lambda v: standard.get(
                "/api/public/delivery-slots/availability", {"zoneId": v, "date": monday}
            ),
        ),
        (
            "template_id",
            lambda v: erp.post(
                "/api/integrations/erp/orders",
                json.dumps(erp_order_body("SO-cross", v, monday)),
                content_type="application/json",
            ),
        ),
        (
            "template_id",
            lambda v: erp.put(
                f"/api/integrations/erp/orders/{ours.ids['erp_ref']}/delivery-slot",
                json.dumps({"deliverySlotTemplateId": v, "deliverySlotDate": monday}),
                content_type="application/json",
            ),
        ),
        (
            "zone_name",
            lambda v: partner.post(
                "/api/integrations/partner-a/orders",
                json.dumps(partner_order_body("PO-cross", deliveryZone=v)),
                content_type="application/json",
            ),
        ),
        (
            "zone_name",
            lambda v: partner.get(
                "/api/integrations/partner-a/delivery-windows", {"zone": v, "date": monday}
            ),
        ),
        (
            "zone_id",
            lambda v: manager.post(
                f"{ours.manage}/slot-templates",
                json.dumps({"zoneId": v, "dayOfWeek": 2, "startTime": "10:00"}),
                content_type="application/json",
            ),
        ),
        (
            "zone_id",
            lambda v: manager.post(
                f"{ours.manage}/slot-templates/seed",
                json.dumps({"zoneIds": [v]}),
                content_type="application/json",
            ),
        ),
        (
            "driver_id",
            lambda v: manager.post(
                f"{ours.manage}/orders/{ours.ids['order_id']}/transition",
                json.dumps({"status": "assigned", "driverId": v}),
                content_type="application/json",
            ),
        ),
        ("zone_id", lambda v: manager.get(f"{ours.manage}/orders", {"zoneId": v})),
        (
            "zone_id",
            lambda v: manager.post(
                f"{ours.manage}/dispatch/plans",
                json.dumps({"date": ours.ids["slot_date"], "zoneIds": [v]}),
                content_type="application/json",
            ),
        ),
        (
            "driver_id",
            lambda v: manager.post(
                f"{ours.manage}/dispatch/plans",
                json.dumps({"date": ours.ids["slot_date"], "driverIds": [v]}),
                content_type="application/json",
            ),
        ),
        (
            "zone_id",
            lambda v: manager.post(
                f"{ours.manage}/drivers",
                json.dumps({"name": "Zed", "zoneIds": [v]}),
                content_type="application/json",
            ),
        ),
    ]
    for name, request in cases:
        theirs_value = theirs.ids[name]
        made_up = "Nowhere zone" if name == "zone_name" else str(uuid.uuid4())
        cross, invented = request(theirs_value), request(made_up)
        assert cross.status_code == invented.status_code, (name, cross.content, invented.content)
        assert cross.status_code in (200, 404), cross.content
        assert answer_without(cross, theirs_value) == answer_without(invented, made_up)
    assert snapshot(theirs) == before


def admin_id_routes():
    for route, entry in _walk(get_resolver().url_patterns):
        if route.startswith("admin/") and "object_id" in route:
            model_admin = getattr(entry.callback, "model_admin", None)
            if model_admin is not None:
                label = f"{model_admin.model._meta.label} {route.split('>', 1)[-1] or '/'}"
                yield pytest.param(route, model_admin, id=label)


@pytest.mark.parametrize(("route", "model_admin"), list(admin_id_routes()))
def test_admin_hides_another_organizations_objects_like_made_up_ones(
    two_worlds, route, model_admin
):
    ours, theirs = two_worlds
    model = model_admin.model
    lookup = getattr(model_admin, "organization_lookup", None)
    if model is User:
        theirs_object = theirs.admin  # users are not a tenant model, but theirs stay hidden
    elif lookup is None:
        pytest.skip(f"{model._meta.label} is not a tenant model")
    else:
        theirs_object = model._default_manager.filter(**{lookup: theirs.organization.id}).first()
    assert theirs_object is not None, f"the world has no {model._meta.label}: extend build_world"
    client = Client()
    client.force_login(ours.admin)

    def url(value: str) -> str:
        return "/" + re.sub(r"<(?:\w+:)?object_id>", quote(value, safe=""), route)

    theirs_value = str(theirs_object.pk)
    made_up = str(uuid.uuid4()) if isinstance(theirs_object.pk, uuid.UUID) else "987654321"
    cross, invented = client.get(url(theirs_value)), client.get(url(made_up))
    assert cross.status_code == invented.status_code, (cross.status_code, invented.status_code)
    # 302 to the admin index ("does not exist"), or 403 where the model allows no such action
    assert cross.status_code in (302, 403, 404)
    assert cross.get("Location", "").replace(theirs_value, "<id>") == invented.get(
        "Location", ""
    ).replace(made_up, "<id>")
    assert model._default_manager.filter(pk=theirs_object.pk).exists()
