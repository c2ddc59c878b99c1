"""Prometheus metrics at /metrics (issue 8): requests, latency, bookings, webhook attempts and
the due-delivery queue depth; loopback-only or token access; several gunicorn workers."""

import os
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from django.db import connection
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from delivery.metrics import webhook_attempt_recorded
from tests import builders
from tests.core.world import build_world, erp_order_body, next_weekday, partner_order_body
from tests.gunicorn import gunicorn_server
from tests.webhooks.conftest import Receiver
from webhooks import tasks
from webhooks.metrics import DueDeliveriesCollector
from webhooks.models import Delivery

pytestmark = pytest.mark.django_db


def scrape(client: Client | None = None) -> str:
    response = (client or Client()).get("/metrics")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return response.content.decode()


def value(text: str, name: str, *, default: float | None = None, **labels) -> float:
    """The sample `name{labels}` of an exposition. A missing sample fails the test unless a
    `default` is given: pass one only for a counter that may not have been touched yet."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    if default is None:
        raise AssertionError(f"no sample {name}{labels} in the exposition:\n{text}")
    return default


@pytest.fixture
def _no_limits(settings):
    settings.RATELIMIT_ENABLE = False
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_requests_are_counted_by_method_route_and_status():
    before = scrape()
    client = Client()
    client.get("/healthz")
    client.get("/healthz/")
    client.get("/api/provisioning/organizations/not-a-uuid/api-keys")
    client.get("/api/no/such/route/42")
    client.generic("BREW", "/healthz")
    after = scrape()

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, default=0.0, **labels)

    assert delta("http_requests_total", method="GET", route="/healthz", status="200") == 2
    keys_route = "/api/provisioning/organizations/<str:org_id>/api-keys"
    assert delta("http_requests_total", method="GET", route=keys_route, status="401") == 1
    assert delta("http_requests_total", method="GET", route="unmatched", status="404") == 1
    assert delta("http_requests_total", method="other", route="/healthz") == 1
    assert delta("http_request_duration_seconds_count", method="GET", route="/healthz") == 2
    bucket = "http_request_duration_seconds_bucket"
    assert delta(bucket, method="GET", route="/healthz", le="+Inf") == 2
    assert "/api/no/such/route/42" not in after  # raw paths never become labels


def test_metrics_answer_only_loopback_without_a_token():
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="::1").get("/metrics").status_code == 200
    remote = Client(REMOTE_ADDR="203.0.113.7").get("/metrics")
    assert remote.status_code == 403
    assert b"http_requests" not in remote.content


def test_metrics_token_is_required_from_anywhere_when_set(settings):
    settings.METRICS_TOKEN = "scrape-secret-0123456789"
    remote = Client(REMOTE_ADDR="203.0.113.7")
    assert remote.get("/metrics").status_code == 401
    assert Client().get("/metrics").status_code == 401  # loopback needs it too
    wrong = remote.get("/metrics", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    right = remote.get("/metrics", headers={"Authorization": "Bearer scrape-secret-0123456789"})
    assert right.status_code == 200
    assert b"http_requests_total" in right.content


def test_metrics_take_only_get():
    assert Client().post("/metrics").status_code == 405


def test_due_deliveries_gauge_counts_due_pending_deliveries_in_one_query(
    _no_limits, django_assert_num_queries
):
    build_world()
    build_world()
    now = timezone.now()
    deliveries = list(Delivery.objects.order_by("id"))
    assert len(deliveries) >= 4
    Delivery.objects.filter(pk=deliveries[0].pk).update(next_attempt_at=now - timedelta(hours=1))
    Delivery.objects.filter(pk=deliveries[1].pk).update(next_attempt_at=now - timedelta(hours=2))
    Delivery.objects.filter(pk=deliveries[2].pk).update(next_attempt_at=now + timedelta(hours=1))
    Delivery.objects.filter(pk=deliveries[3].pk).update(status="delivered", next_attempt_at=None)
    Delivery.objects.exclude(pk__in=[d.pk for d in deliveries[:4]]).update(
        next_attempt_at=now + timedelta(days=1)
    )

    with django_assert_num_queries(1):
        families = list(DueDeliveriesCollector().collect())
    assert [(s.name, s.value) for s in families[0].samples] == [("webhook_deliveries_due", 2)]
    assert value(scrape(), "webhook_deliveries_due") == 2


def test_due_deliveries_query_uses_the_partial_index():
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        queryset = Delivery.objects.filter(status="pending", next_attempt_at__lte=timezone.now())
        plan = queryset.explain()
    assert "webhook_delivery_due" in plan, plan


def test_bookings_count_slots_booked_and_refused_full(
    _no_limits, django_capture_on_commit_callbacks
):
    world = build_world()
    manager = world.manager()
    small = manager.post(
        f"{world.manage}/slot-templates",
        {
            "zoneId": world.ids["zone_id"],
            "dayOfWeek": 2,
            "startTime": "08:00",
            "durationMinutes": 120,
            "vehicleCapacity": [{"vehicleType": "van", "count": 1, "maxOrdersPerVehicle": 1}],
        },
        format="json",
    )
    assert small.status_code == 201, small.content
    day = next_weekday(2).isoformat()
    before = scrape()
    erp = world.key_client("erp")
    with django_capture_on_commit_callbacks(execute=True):
        first = erp.post(
            "/api/integrations/erp/orders",
            erp_order_body("SO-M-1", small.json()["id"], day),
            format="json",
        )
        second = erp.post(
            "/api/integrations/erp/orders",
            erp_order_body("SO-M-2", small.json()["id"], day),
            format="json",
        )
    assert (first.status_code, second.status_code) == (201, 400), second.content
    after = scrape()
    booked = value(after, "bookings_total", kind="slot", outcome="booked")
    full = value(after, "bookings_total", kind="slot", outcome="full")
    booked_before = value(before, "bookings_total", default=0.0, kind="slot", outcome="booked")
    full_before = value(before, "bookings_total", default=0.0, kind="slot", outcome="full")
    assert booked - booked_before == 1
    assert full - full_before == 1


def test_bookings_count_partner_windows_booked_and_refused_full(
    _no_limits, django_capture_on_commit_callbacks
):
    world = build_world()
    patched = world.manager().patch(
        f"{world.manage}/zones/{world.ids['zone_id']}", {"windowCapacity": 1}, format="json"
    )
    assert patched.status_code == 200, patched.content
    start = f"{world.ids['slot_date']}T09:00:00+01:00"  # a Monday, 08:00-12:00 window
    partner = world.key_client("partner_a")
    before = scrape()
    with django_capture_on_commit_callbacks(execute=True):
        statuses = [
            partner.post(
                "/api/integrations/partner-a/orders",
                partner_order_body(f"PO-W-{n}", deliveryWindowStart=start),
                format="json",
            ).status_code
            for n in (1, 2)
        ]
    assert statuses == [201, 400]
    after = scrape()
    for outcome in ("booked", "full"):
        labels = {"kind": "window", "outcome": outcome}
        assert (
            value(after, "bookings_total", **labels)
            - value(before, "bookings_total", default=0.0, **labels)
            == 1
        )


def test_webhook_attempts_are_counted_by_outcome(organization, httpserver, settings):
    settings.WEBHOOK_RETRY_SCHEDULE = [0, 0]
    receiver = Receiver(url=httpserver.url_for("/hook"), statuses=[500, 500, 200])
    httpserver.expect_request("/hook", method="POST").respond_with_handler(receiver.handle)
    builders.api_key(organization, "partner_a", webhook_url=receiver.url)
    before = scrape()
    for ref in ("SO-1", "SO-2"):
        builders.order_event(organization, ref)
    first, second = Delivery.objects.filter(organization=organization).order_by("created_at")
    tasks.deliver(str(first.id))  # 500: a retry is scheduled
    tasks.deliver(str(first.id))  # 500 on the last attempt of the schedule: failed
    tasks.deliver(str(second.id))  # 200: delivered
    after = scrape()
    for outcome in ("retry", "failed", "delivered"):
        counted = value(after, "webhook_attempts_total", outcome=outcome)
        earlier = value(before, "webhook_attempts_total", default=0.0, outcome=outcome)
        assert counted - earlier == 1, outcome


def test_redis_down_neither_breaks_a_scrape_nor_a_webhook_attempt(settings, caplog):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    webhook_attempt_recorded("delivered")  # logs, does not raise
    text = scrape()
    assert "webhook_attempts_total" not in text
    assert value(text, "webhook_deliveries_due") == 0
    assert "webhook attempt not counted: ConnectionError" in caplog.text


def _pids_with_files(directory: Path) -> set[str]:
    return {name.rsplit("_", 1)[-1] for name in os.listdir(directory) if name.endswith(".db")}


def test_gunicorn_workers_share_their_counts_in_multiprocess_mode(tmp_path):
    """Two sync workers: every scrape shows the requests all of them served."""
    log = tmp_path / "gunicorn.log"  # written by gunicorn_server
    metrics_dir = tmp_path / "prometheus"
    metrics_dir.mkdir()
    stale = metrics_dir / "counter_999999999.db"  # left by a process of an earlier run
    stale.write_bytes(b"\0" * 16)
    with gunicorn_server(
        tmp_path, WEB_CONCURRENCY="2", PROMETHEUS_MULTIPROC_DIR=str(metrics_dir)
    ) as port:  # one /healthz answered: it is up
        base = f"http://127.0.0.1:{port}"
        assert not stale.exists()
        sent = 1
        # A new connection per request: until both workers have served some (files of two pids).
        while len(_pids_with_files(metrics_dir)) < 2:
            assert sent < 500, (os.listdir(metrics_dir), log.read_text(errors="replace"))
            requests.get(f"{base}/healthz", timeout=5)
            sent += 1
        for _ in range(20):
            requests.get(f"{base}/healthz", timeout=5)
        sent += 20
        for _ in range(4):  # whichever worker answers the scrape shows every worker's count
            text = requests.get(f"{base}/metrics", timeout=5).text
            labels = {"method": "GET", "route": "/healthz", "status": "200"}
            assert value(text, "http_requests_total", **labels) == sent
        assert value(text, "webhook_deliveries_due") == 0
