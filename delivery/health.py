"""Liveness and readiness probes (contract "Conventions")."""

import redis
from django.conf import settings
from django.db import connection
from django.http import JsonResponse


def healthz(request):
    return JsonResponse({"status": "ok"})


def _database_ready() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception:  # any failure means "not ready"; the probe must never raise
        connection.close_if_unusable_or_obsolete()
        return False


def _redis_ready() -> bool:
    try:
        client = redis.Redis.from_url(
            settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1
        )
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False


def readyz(request):
    checks = {"database": _database_ready(), "redis": _redis_ready()}
    failing = [name for name, ok in checks.items() if not ok]
    if failing:
        return JsonResponse(
            {"status": "unavailable", "failing": failing, "checks": checks}, status=503
        )
    return JsonResponse({"status": "ok", "checks": checks})
