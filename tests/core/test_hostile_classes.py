"""Property-based: the classes of hostile input, sent to every operation of the OpenAPI document.

Each operation gets an otherwise valid request (the body recipes of test_hostile_text.py, the
ids of real objects, real credentials) with one place made hostile: a path parameter, a query
parameter, a header, a body field, or an object key inside the body. The values are the classes
that once gave 500s: NUL characters and lone surrogates anywhere in text, control characters
and line separators (a name with one made the invite e-mail fail), dates and date-times
at the edges of the calendar, integers beyond what the database holds, files of the time zone
database that are no time zones. Whatever the place: never a 5xx, always the contract's JSON
error body on a 4xx, and text no field can hold is refused (404 in a path, 400 elsewhere).
"""

import json
import re
from urllib.parse import quote

import pytest
from django.conf import settings
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.conftest import assert_error
from tests.core.test_hostile_text import BODY_OPERATIONS, _resolve, _schema, set_field
from tests.core.test_openapi_fuzz import credentials_for, real_value

pytestmark = pytest.mark.django_db

#: per operation; about 65 operations in all, the whole module stays well under a minute
MAX_EXAMPLES = 8

UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
UNSTORABLE_CHARACTERS = ["\x00", "\ud800", "\udbff", "\udc00", "\udfff"]
unstorable_text = st.builds(
    lambda before, character, after: before + character + after,
    st.text(alphabet="abcXYZ019-/:", max_size=6),
    st.sampled_from(UNSTORABLE_CHARACTERS),
    st.text(alphabet="abcXYZ019-/:", max_size=6),
)
EDGE_TEXT = [
    "0001-01-01",
    "9999-12-31",
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "9999-12-31T23:59:59.999999",
    "2030-1-6",
    " 2030-01-06",
    str(2**63),
    str(-(2**63) - 1),
    "9" * 40,
    "1e400",
    "localtime",
    "Factory",
    "posixrules",
]
EDGE_JSON = [2**63, -(2**63) - 1, 10**40, 1e308, -1e308]
#: The control-character class: every character that breaks a line (Unicode Cc, the line and
#: paragraph separators), anywhere in a text.
LINE_BREAKING_CHARACTERS = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))] + [
    "\u2028",
    "\u2029",
]
# Inside the text: at either end, trimming takes a whitespace one away before it is stored.
line_breaking_text = st.builds(
    lambda before, character, after: before + character + after,
    st.text(alphabet="abcXYZ019-.", min_size=1, max_size=6),
    st.sampled_from(LINE_BREAKING_CHARACTERS),
    st.text(alphabet="abcXYZ019-.", min_size=1, max_size=6),
)
text_values = st.one_of(unstorable_text, line_breaking_text, st.sampled_from(EDGE_TEXT))
json_values = st.one_of(text_values, st.sampled_from(EDGE_JSON))


def _operations():
    document = _schema()
    for path, operations in sorted(document["paths"].items()):
        for method, operation in sorted(operations.items()):
            params = operation.get("parameters", [])
            content = operation.get("requestBody", {}).get("content", {})
            body_schema = content.get("application/json", {}).get("schema")
            fields = []
            if body_schema is not None:
                fields = sorted(_resolve(document, body_schema).get("properties", {}))
            yield pytest.param(
                method,
                path,
                [p["name"] for p in params if p["in"] == "path"],
                [p["name"] for p in params if p["in"] == "query"],
                [p["name"] for p in params if p["in"] == "header"],
                fields,
                id=f"{method.upper()} {path}",
            )


def _encode(value: str) -> str:
    """As a client would put text on the wire: UTF-8, percent-encoded (a lone surrogate as the
    bytes of its code point, which are not UTF-8)."""
    return quote(value, safe="", errors="surrogatepass")


@pytest.mark.parametrize(
    ("method", "path", "path_params", "query", "headers", "fields"), list(_operations())
)
@hypothesis_settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_hostile_classes_never_give_a_5xx(
    world, method, path, path_params, query, headers, fields, data
):
    recipe = BODY_OPERATIONS.get((method, path))
    targets = [("path", name) for name in path_params]
    targets += [("query", name) for name in query] + [("query", "unknownParameter")]
    targets += [("header", name) for name in (*headers, "X-Request-Id", "X-API-Key")]
    if recipe is not None:
        targets += [("body", name) for name in fields] + [("key", name) for name in fields]
        targets += [("key", "")]
    kind, name = data.draw(st.sampled_from(targets), label="target")
    value = data.draw(json_values if kind == "body" else text_values, label="value")

    if recipe is not None and recipe.before:
        recipe.before(world)
    n = data.draw(st.integers(min_value=1000, max_value=3000), label="n")
    url = _url(world, recipe, path, path_params, n, (kind, name, value))

    request_headers = dict(credentials_for(path, world, settings.PROVISIONING_SECRET))
    if recipe is not None:
        request_headers = _auth_headers(world, recipe.auth)
    if kind == "header":
        request_headers[name] = value

    body = recipe.body(world, n) if recipe is not None else None
    if kind == "body":
        set_field(body, name, value)
    elif kind == "key":
        hostile_key = data.draw(unstorable_text, label="key")
        target = body.setdefault(name, {}) if name else body
        if isinstance(target, dict):
            target[hostile_key] = "x"
        else:
            body[name] = {hostile_key: "x"}

    response = Client().generic(
        method.upper(),
        url,
        json.dumps(body) if body is not None else "",
        content_type="application/json",
        headers=request_headers,
    )

    _assert_answer(response, kind, value)


def _url(world, recipe, path: str, path_params: list[str], n: int, hostile: tuple) -> str:
    """The operation's path with real ids (the hostile value in the targeted place)."""
    kind, name, value = hostile
    url = path
    for param in path_params:
        if kind == "path" and param == name:
            made = _encode(value)
        elif recipe is not None and param in recipe.path:
            made = recipe.path[param](world, n)
        else:
            made = real_value(world, path, param) or "unknown"
        url = url.replace(f"{{{param}}}", made)
    if kind == "query":
        url += f"?{_encode(name)}={_encode(value)}"
    return url


def _assert_answer(response, kind: str, value) -> None:
    status = response.status_code
    seen = (kind, value, status, response.content[:300])
    assert status < 500, seen
    if status == 204:
        return
    assert response["Content-Type"] == "application/json", response["Content-Type"]
    if status >= 400:
        assert_error(response, status)
    hostile_text = isinstance(value, str) and UNSTORABLE.search(value) is not None
    if kind == "key" or (hostile_text and kind != "path"):
        assert status == 400, seen
    elif hostile_text:
        assert status == 404, seen


def _auth_headers(world, auth: str) -> dict[str, str]:
    if auth == "provisioning":
        return {"X-Provisioning-Secret": settings.PROVISIONING_SECRET}
    if auth == "manager":
        return {"Authorization": f"Bearer {world.token}"}
    if auth == "courier":
        return {"Authorization": f"Bearer {world.courier_token}"}
    if auth.startswith("key:"):
        return {"X-API-Key": world.keys[auth[4:]]}
    return {}


#: Every body field whose text reaches the invite e-mail: the organization's name (its subject),
#: the admin's name (its greeting) and e-mail (its To header).
MAIL_TEXT_FIELDS = [
    ("post", "/api/provisioning/organizations", "name"),
    ("post", "/api/provisioning/organizations", "admin.name"),
    ("post", "/api/provisioning/organizations", "admin.email"),
    ("patch", "/api/provisioning/organizations/{org_id}", "name"),
    ("post", "/api/provisioning/organizations/{org_id}/admins", "name"),
    ("post", "/api/provisioning/organizations/{org_id}/admins", "email"),
]


@pytest.mark.parametrize(("method", "path", "name"), MAIL_TEXT_FIELDS)
@hypothesis_settings(
    max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
@given(value=line_breaking_text, n=st.integers(min_value=1000, max_value=3000))
def test_line_breaks_in_text_that_reaches_an_e_mail_are_refused(
    world, method, path, name, value, n
):
    recipe = BODY_OPERATIONS[(method, path)]
    body = recipe.body(world, n)
    if name.endswith("email"):
        value = f"{value}@example.com"
    set_field(body, name, value)

    response = Client().generic(
        method.upper(),
        _url(world, recipe, path, [], n, ("body", name, value)).replace(
            "{org_id}", str(world.org_id)
        ),
        json.dumps(body),
        content_type="application/json",
        headers=_auth_headers(world, recipe.auth),
    )

    assert response.status_code == 400, (name, value, response.content[:300])
    message = response.json()["message"]
    assert any(text.startswith(name) for text in message), message
