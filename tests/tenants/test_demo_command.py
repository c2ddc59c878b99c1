"""`manage.py demo` creates the demo tenant idempotently and prints working keys, and the steps
that show webhooks working (pasted in a shell against a live server)."""

import json
import os
import re
import signal
import socket
import subprocess
import time
from io import StringIO
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command
from shapely.geometry import Point

from couriers import selectors as couriers_selectors
from delivery.encryption import decrypt_text
from demo.management.commands.demo import DEMO_ADMIN_EMAIL, DEMO_ADMIN_PASSWORD
from demo.webhook_lines import base_url_from_bind
from dispatch.demo import DEMO_DRIVERS, ORDER_COUNT
from dispatch.models import DriverZone
from integrations.models import Order
from slots.models import SlotTemplate
from tenants import services as tenant_services
from tenants.models import ApiKey, Driver, Organization
from tests.conftest import assert_error
from tests.webhooks.conftest import celery_worker, test_broker  # noqa: F401 - fixtures
from webhooks import tasks
from webhooks.models import Delivery
from zones.geometry import polygon_from_geodata
from zones.models import DISPATCH_PURPOSES, Zone

pytestmark = pytest.mark.django_db


def run_demo() -> str:
    out = StringIO()
    call_command("demo", stdout=out)
    return out.getvalue()


def test_demo_is_idempotent_and_prints_working_keys(api_client, settings):
    settings.BENCH_ENDPOINTS = True
    first = run_demo()
    second = run_demo()

    assert Organization.objects.filter(slug="demo").count() == 1
    assert ApiKey.objects.filter(organization__slug="demo").count() == 5
    assert Zone.objects.filter(organization__slug="demo").count() == 3
    templates = SlotTemplate.objects.filter(zone__organization__slug="demo").count()
    assert templates > 0
    assert "curl -s -X POST" in second
    keys = dict(re.findall(r"API key (\w+)\s+(sk_\S+)", second))
    assert set(keys) == {"partner_a", "partner_b", "partner_c", "standard", "erp"}
    assert keys == dict(re.findall(r"API key (\w+)\s+(sk_\S+)", first))
    api_client.credentials(HTTP_X_API_KEY=keys["standard"])
    assert api_client.get("/api/bench/hello-auth").status_code == 200
    api_client.credentials(HTTP_X_API_KEY=keys["standard"] + "x")
    assert_error(api_client.get("/api/bench/hello-auth"), 401)


@pytest.mark.parametrize(
    ("bind", "base_url"),
    [
        (None, "http://127.0.0.1:8000"),
        ("127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("0.0.0.0:8150", "http://127.0.0.1:8150"),
        (":8151", "http://127.0.0.1:8151"),
        ("[::]:8152", "http://127.0.0.1:8152"),
        ("[::1]:8153", "http://[::1]:8153"),
        ("localhost", "http://localhost:8000"),
        ("demo.example:80", "http://demo.example:80"),
        ("unix:/run/delivery.sock", "http://127.0.0.1:8000"),
    ],
)
def test_the_printed_address_follows_bind(bind, base_url):
    assert base_url_from_bind(bind) == base_url


def test_demo_prints_addresses_from_bind_unless_given(monkeypatch):
    monkeypatch.setenv("BIND", "0.0.0.0:8150")
    from_bind = run_demo()
    given = StringIO()
    call_command("demo", base_url="http://demo.example:9999", stdout=given)

    assert "curl -s http://127.0.0.1:8150/readyz" in from_bind
    assert "http://127.0.0.1:8150/api/auth/token" in from_bind
    assert "0.0.0.0" not in from_bind  # noqa: S104 - a printed text, nothing is bound
    assert "curl -s http://demo.example:9999/readyz" in given.getvalue()
    assert "127.0.0.1:8150" not in given.getvalue()


def test_demo_prints_the_partner_keys_webhook_secret_the_same_on_every_run():
    first, second = run_demo(), run_demo()

    secret = re.search(r"Webhook secret of the partner_a key: (whsec_\S+)", second).group(1)
    assert secret in first
    stored = ApiKey.objects.get(organization__slug="demo", platform="partner_a", is_active=True)
    assert decrypt_text(stored.encrypted_webhook_secret) == secret
    assert f"WEBHOOK_SECRET={secret} python3 receiver.py 9000" in second


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


def _receiver_snippet() -> str:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "webhooks.md").read_text()
    section = guide.split("## A minimal receiver", 1)[1]
    return re.search(r"```python\n(.*?)```", section, flags=re.DOTALL).group(1)


def _bash(script: str) -> str:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


@pytest.mark.usefixtures("celery_worker")
def test_the_printed_webhook_steps_pasted_in_a_shell_deliver_verified_events(live_server, tmp_path):
    """Steps 1-5 as printed, run by bash against a live server, with the receiver of
    docs/webhooks.md saved as receiver.py: the test event and an order.created arrive and
    verify, and the deliveries list shows both delivered. A real worker sends them, as under
    `make run`: the test event is sent by the worker too (the web process waits for it)."""
    port = _free_port()
    out = StringIO()
    call_command(
        "demo",
        base_url=live_server.url,
        webhook_url=f"http://127.0.0.1:{port}/hook",
        stdout=out,
    )
    printed = out.getvalue().splitlines()
    steps = [printed[n + 1].strip() for n, line in enumerate(printed) if re.match(r"  \d\. ", line)]
    partner_create = next(
        line.strip()
        for line in printed
        if line.strip().startswith(f"curl -s -X POST {live_server.url}/api/integrations/")
    )
    (tmp_path / "receiver.py").write_text(_receiver_snippet())
    receiver = subprocess.Popen(  # noqa: S602 - the printed line, as a person pastes it
        steps[0],
        shell=True,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_for_port(port)
        answers = _bash("\n".join([steps[1], steps[2], "echo", steps[3], "echo", partner_create]))
        for delivery in Delivery.objects.filter(status="pending"):
            tasks.deliver(str(delivery.id))
        listed = json.loads(_bash("\n".join([steps[1], steps[4]])))
    finally:
        os.killpg(receiver.pid, signal.SIGTERM)
        received = receiver.communicate(timeout=10)[0]

    updated, tested, created = (json.loads(line) for line in answers.splitlines())
    assert updated["webhookUrl"] == f"http://127.0.0.1:{port}/hook"
    assert tested == {
        "delivered": True,
        "statusCode": 204,
        "latencyMs": tested["latencyMs"],
        "error": None,
    }
    assert created["trackingUrl"] == f"{live_server.url}/track/{created['trackingToken']}"
    assert sorted(item["event"] for item in listed["items"]) == ["order.created", "webhook.test"]
    assert {item["status"] for item in listed["items"]} == {"delivered"}
    assert "webhook.test verified" in received
    assert "order.created verified" in received
    assert "BAD SIGNATURE" not in received


def test_during_a_roll_the_receiver_step_uses_the_secret_x_service_signature_still_has():
    run_demo()
    partner_key = ApiKey.objects.get(
        organization__slug="demo", platform="partner_a", is_active=True
    )
    replaced = decrypt_text(partner_key.encrypted_webhook_secret)
    rolled = tenant_services.api_key_webhook_secret_roll(api_key=partner_key, overlap_hours=24)

    printed = run_demo()

    assert f"Webhook secret of the partner_a key: {rolled.webhook_secret}" in printed
    assert f"X-Service-Signature is still keyed with {replaced}" in printed
    assert f"WEBHOOK_SECRET={replaced} python3 receiver.py 9000" in printed


def _dispatch_zones():
    return list(
        Zone.objects.filter(organization__slug="demo", purpose__in=DISPATCH_PURPOSES).order_by(
            "name"
        )
    )


def test_demo_sets_up_a_day_to_dispatch_once_however_often_it_runs():
    run_demo()
    second = run_demo()

    zones = _dispatch_zones()
    assert [zone.name for zone in zones] == ["Berlin Mitte", "Kreuzberg"]
    for zone in zones:
        assert zone.depot_address
        polygon = polygon_from_geodata(zone.geodata)
        assert polygon.contains(Point(zone.depot_lng, zone.depot_lat))
    drivers = Driver.objects.filter(organization__slug="demo")
    assert sorted(driver.name for driver in drivers) == [spec["name"] for spec in DEMO_DRIVERS]
    for driver in drivers:
        served = set(DriverZone.objects.filter(driver=driver).values_list("zone_id", flat=True))
        assert served == {zone.id for zone in zones}
    day = re.search(r"Orders to plan on (\d{4}-\d{2}-\d{2}): (\d+)", second)
    assert day.group(2) == str(ORDER_COUNT)
    refs = [f"DEMO-{day.group(1).replace('-', '')}-{number:02d}" for number in range(1, 13)]
    orders = Order.objects.filter(organization__slug="demo", external_ref__startswith="DEMO-")
    assert sorted(order.external_ref for order in orders) == refs
    for order in orders:
        assert order.zone in zones
        polygon = polygon_from_geodata(order.zone.geodata)
        assert polygon.contains(Point(order.dropoff_lng, order.dropoff_lat))
        zone_day = order.delivery_window_start.astimezone(ZoneInfo("Europe/Berlin")).date()
        assert zone_day.isoformat() == day.group(1)


@pytest.mark.usefixtures("fast_password_hashing")
def test_the_printed_dispatch_lines_open_the_dispatcher_plan_the_day_and_sign_a_courier_in(
    api_client,
):
    run_demo()
    printed = run_demo()

    block = printed.split("Dispatch and couriers:", 1)[1]
    mitte = Zone.objects.get(organization__slug="demo", slug="berlin-mitte")
    day = re.search(r"Orders to plan on (\S+):", block).group(1)
    dispatcher = f"http://127.0.0.1:8000/admin/dispatch/plan/dispatcher/?zone={mitte.id}&date={day}"
    assert dispatcher in block
    organization = Organization.objects.get(slug="demo")
    plans = f"http://127.0.0.1:8000/api/manage/organizations/{organization.id}/dispatch/plans"
    plan_line = next(line.strip() for line in block.splitlines() if plans in line)
    assert plan_line == (
        f'curl -s -X POST {plans} -H "Authorization: Bearer $TOKEN" '
        f"-H 'Content-Type: application/json' -d '{{\"date\": \"{day}\"}}'"
    )
    assert "TOKEN=$(curl -s -X POST http://127.0.0.1:8000/api/auth/token" in block
    token = re.search(r"http://127\.0\.0\.1:8000/courier/  token: (drv_\S+)", block).group(1)
    assert "a new token on every demo run" in block
    assert f"http://127.0.0.1:8000/courier/#token={token}" in block
    # The app shows the driver's today: a later delivery day says when its stops appear there.
    driver = Driver.objects.get(organization=organization, name=DEMO_DRIVERS[0]["name"])
    today = couriers_selectors.driver_today(driver=driver).isoformat()
    route_label = (
        "route of today (stops once a plan is committed):"
        if day == today
        else f"route of {day} (stops once a plan is committed; the courier app shows them on"
        " that day, this curl at once):"
    )
    assert route_label in block

    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api_client.get(f"/api/courier/route?date={day}").status_code == 200
    # The token printed by the run before ended with this run's.
    earlier = re.search(r"/courier/  token: (drv_\S+)", run_demo()).group(1)
    assert api_client.get("/api/courier/route").status_code == 401
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {earlier}")
    assert api_client.get("/api/courier/route").status_code == 200

    # The plan curl, through the test client: the printed day has orders, depots and drivers.
    login = api_client.post(
        "/api/auth/token",
        {"email": DEMO_ADMIN_EMAIL, "password": DEMO_ADMIN_PASSWORD},
        format="json",
    )
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {login.json()['token']}")
    answer = api_client.post(
        f"/api/manage/organizations/{organization.id}/dispatch/plans", {"date": day}, format="json"
    )
    assert answer.status_code == 202, answer.content
    assert answer.json()["status"] == "planning"
