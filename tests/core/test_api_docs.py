"""The interactive API docs, Swagger UI at /api/docs/ and ReDoc at /api/redoc/, are served by the
service itself from the pinned drf-spectacular-sidecar package: they load nothing from another
address, so they work offline and run no unpinned code in an admin's browser."""

import os
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest
import requests
from django.contrib.staticfiles import finders
from django.test import Client
from playwright.sync_api import expect

from delivery import secret_policy
from tests.core.browser import Watched
from tests.gunicorn import ROOT, gunicorn_server

pytestmark = pytest.mark.django_db

PAGES = ("/api/docs/", "/api/redoc/")
#: an operation every reader of the docs looks for first
OPERATION = "/api/integrations/partner-a/orders"
RENDER_TIMEOUT_MS = 20_000
SWAGGER_SCREENSHOT = ROOT / "docs" / "swagger-ui.png"


class _References(HTMLParser):
    """Every address a page points at: src, href, and the spec-url of ReDoc's element."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.urls += [value for name, value in attrs if name in ("src", "href", "spec-url")]


def references(html: str) -> list[str]:
    parser = _References()
    parser.feed(html)
    return parser.urls


def operation_count() -> int:
    document = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    return sum(
        method in ("get", "post", "put", "patch", "delete")
        for operations in document.json()["paths"].values()
        for method in operations
    )


@pytest.mark.parametrize("path", PAGES)
def test_docs_page_references_no_external_host(path):
    response = Client().get(path)
    assert response.status_code == 200
    html = response.content.decode()
    urls = references(html)
    assert urls, "the page references nothing at all"
    for url in urls:
        assert url.startswith("/"), url
        assert not url.startswith("//"), url  # protocol-relative: another host
    # Nor in inline scripts and styles (Swagger UI's set-up script is inline).
    assert re.findall(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}", html) == []
    static = [url for url in urls if url.startswith("/static/")]
    assert static, "the docs assets are not the service's own"
    for url in static:
        assert finders.find(url.removeprefix("/static/")), f"{url} is not in any installed app"


@pytest.mark.parametrize("path", PAGES)
def test_docs_page_forbids_the_browser_any_other_address(path):
    policy = Client().get(path)["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["img-src"] == "'self' data:"
    assert directives["connect-src"] == "'self'"
    assert "http" not in policy


def test_docs_assets_are_served_by_gunicorn_with_debug_off(tmp_path):
    """Production as the Dockerfile runs it: collectstatic, then gunicorn with DEBUG=false
    serves the docs pages and every asset they reference (WhiteNoise, from STATIC_ROOT)."""
    production = {
        "DEBUG": "false",
        # DEBUG=false takes only strong secrets; this server reads no stored one.
        **secret_policy.generate(),
        # localhost for the health check the server is awaited with (tests/gunicorn.py)
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "false",
        "STATIC_ROOT": str(tmp_path / "static"),
    }
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env={**os.environ, **production},
        check=True,
        timeout=300,
    )
    with gunicorn_server(tmp_path, **production) as port:
        base = f"http://127.0.0.1:{port}"
        for path in PAGES:
            page = requests.get(f"{base}{path}", timeout=20)
            assert page.status_code == 200, path
            static = [url for url in references(page.text) if url.startswith("/static/")]
            assert static, path
            for url in static:
                asset = requests.get(f"{base}{url}", timeout=10)
                assert asset.status_code == 200, url
                assert asset.content, url
                assert "max-age" in asset.headers["Cache-Control"], url


def test_swagger_ui_lists_every_operation_in_a_real_browser(browser, live_server):
    page = browser.new_page()
    watched = Watched(page)

    page.goto(f"{live_server.url}/api/docs/")

    expect(page.locator(".opblock").first).to_be_visible(timeout=RENDER_TIMEOUT_MS)
    expect(page.locator(".opblock")).to_have_count(operation_count())
    create = page.locator(".opblock-post").filter(
        has=page.locator(f'.opblock-summary-path[data-path="{OPERATION}"]')
    )
    expect(create).to_be_visible()
    assert watched.errors == []
    assert watched.strangers(live_server.url) == []


def test_redoc_lists_every_operation_in_a_real_browser(browser, live_server):
    page = browser.new_page()
    watched = Watched(page)

    page.goto(f"{live_server.url}/api/redoc/")

    expect(page.get_by_role("heading", level=1)).to_contain_text(
        "Delivery orchestration service", timeout=RENDER_TIMEOUT_MS
    )
    # One menu entry per operation (inside the tags' folded menus) and one section each.
    expect(page.locator("li[data-item-id*='/operation/']")).to_have_count(operation_count())
    expect(page.get_by_text(OPERATION, exact=True).first).to_be_visible()
    assert watched.errors == []
    # ReDoc's bundle asks for its vendor's logo from a CDN; the page's Content Security Policy
    # stops that in the browser, before any network (without it the request would go out).
    strangers = watched.strangers(live_server.url)
    assert {url: watched.failed.get(url) for url in strangers} == dict.fromkeys(strangers, "csp")


def test_swagger_ui_shows_an_operation_expanded_in_a_real_browser(browser, live_server, tmp_path):
    """A reader opens the partner create: its body, example and answers render. With
    UPDATE_SCREENSHOTS=1 (`make screenshots`) it is saved to docs/swagger-ui.png (the README
    shows it)."""
    page = browser.new_page(viewport={"width": 1366, "height": 1000}, locale="en-GB")
    watched = Watched(page)
    page.goto(f"{live_server.url}/api/docs/")
    create = page.locator(".opblock-post").filter(
        has=page.locator(f'.opblock-summary-path[data-path="{OPERATION}"]')
    )
    expect(create).to_be_visible(timeout=RENDER_TIMEOUT_MS)

    create.locator(".opblock-summary").click()

    expect(create.locator(".opblock-body")).to_be_visible()
    expect(create.locator(".opblock-section-request-body")).to_be_visible()
    expect(create.locator(".responses-wrapper")).to_contain_text("201")
    expect(create.locator(".body-param__example, .example, .microlight").first).to_contain_text(
        "externalRef"
    )
    assert watched.errors == []
    screenshot = (
        SWAGGER_SCREENSHOT
        if os.environ.get("UPDATE_SCREENSHOTS") == "1"
        else tmp_path / SWAGGER_SCREENSHOT.name
    )
    # The operation from its summary line down to its first answer, as a reader's screen shows it.
    create.evaluate("operation => operation.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(screenshot))
    assert screenshot.stat().st_size > 10_000
