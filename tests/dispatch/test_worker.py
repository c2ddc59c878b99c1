"""Plans solved by a real Celery worker, and racing requests (contract "Dispatch")."""

import threading
import time

from django.db import connections

from dispatch.models import Plan
from tests import builders
from tests.dispatch.conftest import DAY, assert_route_keeps_the_rules, at, order, plans_url


def test_a_real_worker_solves_the_plan(celery_worker, organization, mitte):
    client = builders.manager_client(organization)
    ana = builders.driver(organization, "Ana", capacity=5)
    for n in range(6):
        order(organization, mitte, window=(at(9), at(13)), north_m=250 * n, east_m=-150 * n)

    created = client.post(plans_url(organization), {"date": DAY.isoformat()}, format="json")
    assert created.status_code == 202
    deadline = time.monotonic() + 60
    while True:
        plan = client.get(f"{plans_url(organization)}/{created.json()['id']}").json()
        if plan["status"] != "planning" or time.monotonic() > deadline:
            break
        time.sleep(0.2)

    assert plan["status"] == "ready", plan
    assert plan["summary"] == {**plan["summary"], "routes": 1, "assigned": 5, "unassigned": 1}
    assert plan["unassigned"][0]["reason"] == "capacity"
    assert_route_keeps_the_rules(plan["routes"][0], capacity=5, shift=(at(8), at(20)))
    assert plan["routes"][0]["driver"]["id"] == str(ana.id)


def test_racing_identical_requests_make_one_plan(
    transactional_db, test_broker, organization, mitte
):
    builders.admin(organization, "ops@example.com")
    builders.driver(organization)
    order(organization, mitte, window=(at(9), at(12)))
    body = {"date": DAY.isoformat(), "zoneIds": [str(mitte.id)]}
    start = threading.Barrier(4)
    answers = []

    def request():
        client, _ = builders.bearer_login("ops@example.com")
        start.wait()
        response = client.post(plans_url(organization), body, format="json")
        answers.append((response.status_code, response.json()["id"]))
        connections.close_all()

    threads = [threading.Thread(target=request) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(status for status, _ in answers) == [200, 200, 200, 202]
    assert len({plan_id for _, plan_id in answers}) == 1
    assert Plan.objects.count() == 1
