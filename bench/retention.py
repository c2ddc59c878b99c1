"""Every retention task's service, run after run until its backlog is gone: under load in
bench/maintenance.py, and before the rounds of bench/history.py's loaded database (the steady
state a service in its second year is in). Django must be set up before `services()`."""

from __future__ import annotations

import time


def services() -> dict:
    """Every retention task of CELERY_BEAT_SCHEDULE: its service (the task's body less the log
    line), by task name."""
    # Imported here: the benchmarks set Django up from their own environment first.
    from couriers.services import locations as courier_locations  # noqa: PLC0415
    from couriers.services import retention as courier_retention  # noqa: PLC0415
    from couriers.services.events import DRIVER_KEYS  # noqa: PLC0415
    from integrations.services import idempotency  # noqa: PLC0415
    from provisioning import services as provisioning_services  # noqa: PLC0415
    from slots.services import holds as hold_services  # noqa: PLC0415
    from tenants import services as tenant_services  # noqa: PLC0415
    from webhooks import retention as webhook_retention  # noqa: PLC0415

    return {
        "integrations.expire_idempotency_keys": idempotency.idempotency_keys_expire,
        "couriers.expire_idempotency_keys": lambda **kw: idempotency.idempotency_keys_expire(
            scope=DRIVER_KEYS, **kw
        ),
        "couriers.prune_trails": courier_locations.trails_prune,
        "webhooks.delete_old_deliveries": webhook_retention.deliveries_expired_delete,
        "webhooks.delete_old_events": webhook_retention.events_unreferenced_delete,
        "tenants.delete_expired_auth_tokens": tenant_services.auth_tokens_expired_delete,
        "provisioning.delete_old_invites": provisioning_services.invites_ended_delete,
        "couriers.delete_old_proof_files": courier_retention.proof_files_expired_delete,
        "couriers.delete_unused_photos": courier_retention.photos_unused_delete,
        "slots.delete_expired_holds": hold_services.slot_holds_expired_delete,
    }


def until_done(service, until: float) -> tuple[int, int, bool]:
    """Runs a retention service run after run (as the beat would, back to back) until one finds
    nothing or the time is up; what it removed, along (the events that went with deliveries),
    and whether it saw the end."""
    from webhooks import retention as webhook_retention  # noqa: PLC0415 - Django set up first

    removed = along = 0
    while time.monotonic() < until:
        result = service(until=until)
        if isinstance(result, webhook_retention.OutboxPruned):
            count, along = result.run.removed, along + result.events
        else:
            count = result
        removed += count
        if not count:
            return removed, along, True
    return removed, along, False
