"""Requests sent all at once to the live server of the concurrency tests (`parallel_server`)."""

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta

import requests
from django.utils import timezone

from tests import builders

ORDERS = "/api/integrations/erp/orders"


def erp_tenant(name: str) -> tuple:
    """A new organization `name`, its ERP key's value, a slot zone, and a date a week ahead."""
    organization = builders.organization(name)
    key = builders.api_key(organization, "erp").value
    return organization, key, builders.slot_zone(organization), timezone.now().date() + timedelta(7)


def json_request(url: str, key: str, method: str, body: dict | None = None) -> tuple[int, dict]:
    """The status and JSON body of a request with the ERP key (an empty body, as of a 204, is
    {})."""
    response = requests.request(method, url, json=body, headers={"X-API-Key": key}, timeout=60)
    return response.status_code, response.json() if response.content else {}


def booking(url: str, key: str, template, day: date, ref: str) -> Callable[[], tuple[int, dict]]:
    """A call that books the slot of `template` on `day` as the ERP order `ref`."""
    return lambda: json_request(
        url, key, "POST", builders.erp_order(template, day, externalRef=ref)
    )


def all_at_once(calls: list) -> list[tuple[int, dict]]:
    """Runs the calls in as many threads, released together by a barrier."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait(timeout=30)
        return call()

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(run, calls))
