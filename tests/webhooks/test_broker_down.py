"""Redis (the broker) down at commit: the web request that committed does not wait for it.

Found by tests/faults/test_redis_down.py: each failed publish retried the connection for about
6 s inside the request (kombu's default), so with Redis down an order took 6 s once per worker
every broker back-off period. Publishing now fails at once; the sweep queues the delivery later.
"""

import time
import uuid

import pytest

from tests import builders
from webhooks import queueing
from webhooks.models import Delivery

pytestmark = pytest.mark.django_db


def test_a_publish_with_the_broker_down_fails_at_once(
    organization, dead_broker, django_capture_on_commit_callbacks, caplog
):
    builders.api_key(organization, "partner_a", webhook_url="http://127.0.0.1:9/a")
    queueing.broker_breaker.reset()  # no earlier failure spares us the attempt

    started = time.monotonic()
    with django_capture_on_commit_callbacks(execute=True):
        builders.order_event(organization, order_id=str(uuid.uuid4()))
    elapsed = time.monotonic() - started

    delivery = Delivery.objects.get(organization=organization)
    assert f"webhook delivery {delivery.id} not queued" in caplog.text
    assert elapsed < 1.0
