"""GET /courier/ (docs/contract.md "Couriers", "The courier web app"): one self-contained page
held to its Content Security Policy; its data come from the courier API only."""

import json
import re

import pytest

from couriers.admin import SIGN_IN_PATH
from integrations.models import FailureReason
from tests.tracking.html import Page, assert_self_contained

pytestmark = pytest.mark.django_db


def test_page_renders_for_a_phone(client):
    response = client.get("/courier/")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/html; charset=utf-8"
    html = response.content.decode()
    page = Page(html)
    assert page.find("html", lang="en")
    assert page.find("meta", name="viewport")
    assert page.find("input", id="token-input")
    assert page.find("canvas", id="signature-pad")
    assert page.find("input", id="photo-input", type="file", accept="image/*")
    assert page.find("input", id="photo-input")[0]["capture"] == "environment"
    assert client.get("/courier")["Content-Type"] == "text/html; charset=utf-8"


def test_page_holds_no_data_and_names_the_failure_reasons(client):
    html = client.get("/courier/").content.decode()

    config = json.loads(re.search(r'id="courier-config"[^>]*>(.*?)</script>', html, re.S)[1])
    assert config["apiBase"] == "/api/courier"
    assert config["serviceWorker"] == "/courier/service-worker.js"
    assert [reason["value"] for reason in config["failureReasons"]] == list(FailureReason.values)
    assert "Bearer drv_" not in html


def test_admin_sign_in_link_opens_this_page():
    assert SIGN_IN_PATH == "/courier/#token="


def test_inline_script_and_style_carry_the_policy_nonce(client):
    response = client.get("/courier/")
    page = Page(response.content.decode())

    policy = response["Content-Security-Policy"]
    nonce = re.search(r"script-src 'nonce-([^']+)'", policy)[1]
    assert policy.split("; ") == [
        "default-src 'none'",
        f"script-src 'nonce-{nonce}'",
        f"style-src 'nonce-{nonce}'",
        "connect-src 'self'",
        "worker-src 'self'",
        "manifest-src 'none'",
        "img-src 'self' data:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
    executable = [attrs for attrs in page.find("script") if attrs.get("type") is None]
    assert [attrs["nonce"] for attrs in executable] == [nonce]
    assert [attrs["nonce"] for attrs in page.find("style")] == [nonce]
    assert client.get("/courier/")["Content-Security-Policy"] != policy
    assert response["Referrer-Policy"] == "no-referrer"
    assert response["X-Robots-Tag"] == "noindex, nofollow"


def test_nothing_is_loaded_from_or_linked_at_another_address(client):
    html = client.get("/courier/").content.decode()
    # Canvas's toDataURL is the one `url(` of the page, and it reads no address.
    script = re.search(r"<script nonce=[^>]*>(.*?)</script>", html, re.S)[1]

    assert_self_contained(html.replace("toDataURL(", "toImage("))
    assert script.count("toDataURL(") == 3
    assert "fetch(" in script and script.count("fetch(") == 1
    assert "fetch(config.apiBase + path" in script
    # The script builds links of two schemes only, which the phone hands to its own apps.
    assert sorted(set(re.findall(r'"([a-z]+):"', script))) == ["geo", "tel"]


def test_no_style_attribute_or_inline_handler_that_the_policy_would_block(client):
    page = Page(client.get("/courier/").content.decode())

    for tag, attributes in page.tags:
        assert "style" not in attributes, tag
        assert not [name for name in attributes if name.startswith("on")], tag


def test_only_reading_methods_are_answered(client):
    assert client.post("/courier/").status_code == 405
    assert client.head("/courier/").status_code == 200


def test_service_worker_keeps_only_the_page(client):
    response = client.get("/courier/service-worker.js")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/javascript; charset=utf-8"
    assert response["Cache-Control"] == "no-cache"
    script = response.content.decode()
    assert 'const PAGE = "/courier/";' in script
    for needle in ("http:", "https:", "//", "importScripts"):
        assert needle not in script
