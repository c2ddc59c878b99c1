"""The broker's transport (delivery/broker.py) keeps one redis-py client per channel: publishing
through it builds none after the first, and every message still arrives."""

import uuid

import redis

from delivery.broker import Channel
from delivery.celery import app


def test_the_celery_app_uses_the_transport_of_kept_clients():
    with app.connection_for_write() as connection:
        assert isinstance(connection.default_channel, Channel)


def test_a_channel_builds_one_client_of_its_own_pool(monkeypatch):
    built = []
    original = redis.Redis.__init__

    def counting_init(self, *args, **kwargs):
        built.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(redis.Redis, "__init__", counting_init)
    with (
        app.connection_for_write() as connection,
        connection.SimpleQueue(f"test-broker-{uuid.uuid4().hex}") as queue,
    ):
        for n in range(5):
            queue.put({"n": n})
        assert queue.qsize() == 5
        assert [queue.get(timeout=1).payload["n"] for _ in range(5)] == [0, 1, 2, 3, 4]
        queue.clear()
        clients = {id(client) for client in built if client.connection_pool is queue.channel.pool}
        assert len(clients) == 1, len(clients)
        with queue.channel.conn_or_acquire() as client:
            assert id(client) in clients
