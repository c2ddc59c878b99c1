"""The dispatcher's page in Django admin (contract "Dispatch", "Django admin"): a day and zone
drawn as an inline SVG map, each route's stops with ETAs in the zone's time, the unassigned and
the excluded; Plan, moves and Commit through the page; another organization's plans and zones
out of reach; bad input answered with a message, never a 500."""

import re
from datetime import date, timedelta

import pytest
from django.contrib.messages import get_messages
from django.test import Client

from dispatch import tasks
from dispatch.models import Plan, PlanLeftOut, PlanRoute, PlanStatus, PlanStop
from integrations.models import Order
from tests import builders
from tests.dispatch import committed_world as world
from tests.dispatch.seeded_day import DAY, MITTE_ORDERS, seed_day

PAGE = "/admin/dispatch/plan/dispatcher/"
PLAN_BUTTON = "/admin/dispatch/plan/dispatcher/plan/"


def move_url(plan) -> str:
    return f"/admin/dispatch/plan/{plan.id}/dispatcher/move/"


def commit_url(plan) -> str:
    return f"/admin/dispatch/plan/{plan.id}/dispatcher/commit/"


def texts_of(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


@pytest.fixture
def ada(organization, fast_password_hashing):
    return builders.admin_site_client(organization, "ada@acme.example")


@pytest.fixture
def day(organization):
    return seed_day(organization)


@pytest.fixture
def solved_plan(ada, day, test_broker):
    """Mitte's day planned with the page's Plan button and solved as the worker would."""
    mitte = day["zones"]["Mitte"]
    response = ada.post(PLAN_BUTTON, {"date": DAY.isoformat(), "zone": str(mitte.id)})
    assert response.status_code == 302
    plan = Plan.objects.get(organization=mitte.organization, date=DAY)
    assert response["Location"] == f"{PAGE}?date={DAY}&zone={mitte.id}&plan={plan.id}"
    assert tasks.solve_plan(str(plan.id)) == PlanStatus.READY
    return plan


def test_page_draws_the_plan_as_a_map_with_every_stop_and_lists_the_left_out(ada, day, solved_plan):
    mitte = day["zones"]["Mitte"]
    response = ada.get(PAGE, {"date": DAY.isoformat(), "zone": str(mitte.id)})

    assert response.status_code == 200
    html = response.content.decode()
    svg = re.search(r"<svg class=\"dispatch-map\".*?</svg>", html, re.S).group(0)
    stops = PlanStop.objects.filter(plan=solved_plan).select_related("order")
    assert stops.count() == MITTE_ORDERS
    assert svg.count('<path class="zone"') == 1  # the plan's one zone
    assert svg.count('<g class="stop">') == MITTE_ORDERS
    assert svg.count("<circle") == MITTE_ORDERS + 1  # and SO-FROZEN, unassigned, in grey
    assert (
        svg.count('<polyline class="route"')
        == PlanRoute.objects.filter(plan=solved_plan).exclude(stops=None).count()
    )
    assert svg.count('<g class="depot">') == 1
    # Each stop's number, and each route's colour on its stops.
    for stop in stops:
        assert f">{stop.sequence}</text>" in svg
        assert stop.order.external_ref in html
    colours = {route.id: None for route in PlanRoute.objects.filter(plan=solved_plan)}
    assert len(set(re.findall(r'<g class="stop"><circle [^>]*fill="(#[0-9a-f]{6})"', svg))) == len(
        colours
    )
    # ETAs in the zone's time with its name; the left-out with their reasons.
    assert "2031-01-08 08:" in html and "Europe/Berlin" in html
    unassigned = re.search(r'id="unassigned".*?</table>', html, re.S).group(0)
    assert "SO-FROZEN" in unassigned and "No fitting vehicle" in unassigned
    assert "SO-NOWHERE" in unassigned and "No coordinates" in unassigned
    excluded = re.search(r'id="excluded".*?</table>', html, re.S).group(0)
    assert "SO-COLLECT" in excluded and "click_collect" in excluded
    # Nothing from elsewhere: the only absolute address is the SVG namespace.
    assert set(re.findall(r"https?://[^\"' ]+", html)) == {"http://www.w3.org/2000/svg"}
    assert "<strong>ready</strong>" in html and 'value="Commit"' in html


def test_page_of_a_plan_being_solved_refreshes_itself(ada, day, test_broker):
    mitte = day["zones"]["Mitte"]
    response = ada.post(PLAN_BUTTON, {"date": DAY.isoformat(), "zone": str(mitte.id)}, follow=True)

    html = response.content.decode()
    assert "<strong>planning</strong>" in html
    assert '<meta http-equiv="refresh" content="2">' in html
    assert f"Planning Mitte on {DAY.isoformat()} Wednesday." in texts_of(response)
    assert 'value="Commit"' not in html


def test_page_opens_on_today_and_the_first_zone(ada, day):
    response = ada.get(PAGE)

    assert response.status_code == 200
    assert response.context["zone"] == day["zones"]["Mitte"]
    assert response.context["plan"] is None
    html = response.content.decode()
    assert "No plan for Mitte on" in html
    assert html.count('<path class="zone"') == 1  # the zone alone, before any plan


def test_a_stop_moves_to_another_route_through_the_page_with_the_rules_it_breaks(ada, organization):
    mitte = world.depot_zone(organization)
    samira, tom = builders.driver(organization, "Samira"), builders.driver(organization, "Tom")
    a1, a2, b1 = (world.window_order(organization, mitte, ref) for ref in ("A-1", "A-2", "B-1"))
    plan = world.ready_plan(organization, [mitte], {samira: [a1, a2], tom: [b1]})
    toms_route = PlanRoute.objects.get(plan=plan, driver=tom)
    PlanRoute.objects.filter(pk=toms_route.pk).update(capacity=1)

    response = ada.post(
        move_url(plan),
        {"order": str(a2.id), "route": str(toms_route.id), "position": "1", "zone": str(mitte.id)},
        follow=True,
    )

    assert response.status_code == 200
    assert response.redirect_chain == [
        (f"{PAGE}?date={plan.date}&zone={mitte.id}&plan={plan.id}", 302)
    ]
    assert texts_of(response) == [
        "Order A-2 is now stop 1 of Tom's route; the routes it left and joined are re-timed.",
        "The route carries 2 orders, over the capacity of 1",
    ]
    assert [s.order.external_ref for s in toms_route.stops.order_by("sequence")] == ["A-2", "B-1"]
    assert PlanStop.objects.get(order=a1).sequence == 1
    html = response.content.decode()
    assert html.index("A-2") < html.index("B-1")
    assert "<strong>late</strong>" not in html


def test_a_stop_reached_after_its_window_is_marked_late(ada, organization):
    mitte = world.depot_zone(organization)
    samira = builders.driver(organization, "Samira")
    a1, a2 = (world.window_order(organization, mitte, ref) for ref in ("A-1", "A-2"))
    plan = world.ready_plan(organization, [mitte], {samira: [a1, a2]})
    PlanStop.objects.filter(order=a2).update(eta=world.WINDOW[1] + timedelta(minutes=5))

    html = ada.get(PAGE, {"plan": str(plan.id)}).content.decode()

    assert html.count("<strong>late</strong>") == 1
    late_row = re.search(r'<tr class="stop">(?:(?!</tr>).)*A-2.*?</tr>', html, re.S).group(0)
    assert "2030-01-06 12:05 Europe/Berlin <strong>late</strong>" in late_row


def test_an_unassigned_order_moves_onto_a_route(ada, organization):
    mitte = world.depot_zone(organization)
    samira = builders.driver(organization, "Samira")
    a1, late = (world.window_order(organization, mitte, ref) for ref in ("A-1", "LATE-1"))
    plan = world.ready_plan(organization, [mitte], {samira: [a1]}, unassigned=[late])
    route = PlanRoute.objects.get(plan=plan)

    response = ada.post(
        move_url(plan), {"order": str(late.id), "route": str(route.id), "position": "2"}
    )

    assert response.status_code == 302
    assert not PlanLeftOut.objects.filter(plan=plan).exists()
    assert PlanStop.objects.get(order=late).sequence == 2


def test_commit_through_the_page_says_what_was_assigned_and_skipped(ada, organization):
    mitte = world.depot_zone(organization)
    samira, tom = builders.driver(organization, "Samira"), builders.driver(organization, "Tom")
    a1, a2, b1 = (world.window_order(organization, mitte, ref) for ref in ("A-1", "A-2", "B-1"))
    plan = world.ready_plan(organization, [mitte], {samira: [a1, a2], tom: [b1]})
    builders.order_cancel(b1)

    response = ada.post(commit_url(plan), {"zone": str(mitte.id)}, follow=True)

    assert response.status_code == 200
    assert texts_of(response) == [
        "Plan committed: 2 orders assigned, 1 skipped.",
        "Skipped: B-1 (cancelled)",
    ]
    assert Order.objects.get(pk=a1.pk).driver_id == samira.id
    html = response.content.decode()
    assert "<strong>committed</strong>" in html
    assert 'value="Commit"' not in html and 'value="Move"' not in html

    again = ada.post(commit_url(plan), follow=True)
    assert texts_of(again) == ["Plan is committed"]
    moved = ada.post(
        move_url(plan),
        {"order": str(a1.id), "route": str(plan.routes.first().id), "position": 1},
        follow=True,
    )
    assert texts_of(moved) == ["Plan is committed"]


def test_another_organizations_plan_is_not_found(ada, organization, other_organization):
    theirs = world.depot_zone(other_organization, "Globex Central")
    driver = builders.driver(other_organization, "Globex Driver")
    order = world.window_order(other_organization, theirs, "GX-1")
    plan = world.ready_plan(other_organization, [theirs], {driver: [order]})
    world.depot_zone(organization)

    assert ada.get(PAGE, {"plan": str(plan.id)}).status_code == 404
    assert ada.get(PAGE, {"plan": "not-a-uuid"}).status_code == 404
    route = plan.routes.get()
    body = {"order": str(order.id), "route": str(route.id), "position": "1"}
    assert ada.post(move_url(plan), body).status_code == 404
    assert ada.post(commit_url(plan)).status_code == 404
    assert Plan.objects.get(pk=plan.pk).status == PlanStatus.READY

    # Their zone is neither offered nor shown when asked for by id.
    response = ada.get(PAGE, {"zone": str(theirs.id), "date": "2030-01-06"})
    assert response.status_code == 200
    assert texts_of(response) == ["Zone not found"]
    assert "Globex" not in response.content.decode()
    refused = ada.post(PLAN_BUTTON, {"zone": str(theirs.id), "date": "2030-01-06"}, follow=True)
    assert texts_of(refused) == ["Zone not found"]
    assert not Plan.objects.filter(organization=other_organization).exclude(pk=plan.pk).exists()


@pytest.mark.parametrize("date_text", ["2031-02-30", "tomorrow", "08.01.2031"])
def test_a_date_that_is_not_one_is_a_message(ada, organization, date_text):
    mitte = world.depot_zone(organization)

    response = ada.get(PAGE, {"date": date_text, "zone": str(mitte.id)})

    assert response.status_code == 200
    assert texts_of(response) == ["date must be a valid date (format: YYYY-MM-DD)"]
    refused = ada.post(PLAN_BUTTON, {"date": date_text, "zone": str(mitte.id)}, follow=True)
    assert texts_of(refused) == ["date must be a valid date (format: YYYY-MM-DD)"]
    assert not Plan.objects.exists()


def test_an_unknown_zone_is_a_message(ada, organization):
    world.depot_zone(organization)

    response = ada.get(PAGE, {"zone": "no-such-zone"})

    assert response.status_code == 200
    assert texts_of(response) == ["Zone not found"]
    assert response.context["zone"].name == "Mitte"


def test_what_the_services_refuse_is_a_message(ada, organization, test_broker):
    mitte = world.depot_zone(organization)
    empty_day = date(2031, 3, 3)

    response = ada.post(
        PLAN_BUTTON, {"date": empty_day.isoformat(), "zone": str(mitte.id)}, follow=True
    )
    assert texts_of(response) == ["No orders to plan on 2031-03-03"]

    samira = builders.driver(organization, "Samira")
    a1 = world.window_order(organization, mitte, "A-1")
    plan = world.ready_plan(organization, [mitte], {samira: [a1]})
    route = plan.routes.get()
    for body, message in (
        (
            {"order": str(a1.id), "route": str(route.id), "position": "x"},
            "position must be a whole number",
        ),
        (
            {"order": str(a1.id), "route": str(route.id), "position": "9"},
            "position must be between 1 and 1",
        ),
        ({"order": str(a1.id), "route": "nope", "position": "1"}, "Route not found"),
        ({"order": "nope", "route": str(route.id), "position": "1"}, "Order not found"),
    ):
        response = ada.post(move_url(plan), body, follow=True)
        assert response.status_code == 200
        assert texts_of(response) == [message]


def test_every_button_needs_its_csrf_token_and_a_post(organization, fast_password_hashing):
    mitte = world.depot_zone(organization)
    samira = builders.driver(organization, "Samira")
    plan = world.ready_plan(
        organization, [mitte], {samira: [world.window_order(organization, mitte, "A-1")]}
    )
    builders.admin(organization, "ada@acme.example")
    client = Client(enforce_csrf_checks=True)
    assert client.login(username="ada@acme.example", password=builders.PASSWORD)

    for url in (PLAN_BUTTON, move_url(plan), commit_url(plan)):
        assert client.post(url, {"zone": str(mitte.id)}).status_code == 403
        assert client.get(url).status_code == 405
    assert Plan.objects.get(pk=plan.pk).status == PlanStatus.READY
    page = client.get(PAGE, {"plan": str(plan.id)}).content.decode()
    # Plan, Commit, a move per stop (and admin's own log out): each form carries the token.
    assert 'value="Commit"' in page and page.count('value="Move"') == 1
    assert page.count('name="csrfmiddlewaretoken"') == page.count('method="post"') == 4


def test_a_user_without_an_organization_cannot_open_the_page(organization, fast_password_hashing):
    builders.admin(None, "nobody@example.com")
    client = builders.admin_site_login("nobody@example.com")

    response = client.get(PAGE)

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_plans_list_shows_only_our_plans_each_linking_to_its_page(
    ada, organization, other_organization
):
    mitte = world.depot_zone(organization)
    ours = world.ready_plan(
        organization,
        [mitte],
        {builders.driver(organization, "Samira"): [world.window_order(organization, mitte, "A-1")]},
    )
    theirs_zone = world.depot_zone(other_organization, "Globex Central")
    theirs = world.ready_plan(
        other_organization,
        [theirs_zone],
        {
            builders.driver(other_organization, "Gus"): [
                world.window_order(other_organization, theirs_zone, "GX-1")
            ]
        },
    )

    html = ada.get("/admin/dispatch/plan/").content.decode()

    assert f'href="{PAGE}?plan={ours.id}"' in html
    assert str(theirs.id) not in html
    assert f'href="{PAGE}"' in html  # the object tool: the dispatcher's page
    assert ada.get(f"/admin/dispatch/plan/{theirs.id}/change/").status_code == 302


def test_hostile_text_in_every_field_is_a_message_or_a_404(ada, organization):
    mitte = world.depot_zone(organization)
    samira = builders.driver(organization, "Samira")
    a1 = world.window_order(organization, mitte, "A-1")
    plan = world.ready_plan(organization, [mitte], {samira: [a1]})
    route = plan.routes.get()
    hostile = ("\x00", "9" * 40, "' OR 1=1 --", "<script>", "2031-01-08\x00")

    for text in hostile:
        page = ada.get(PAGE, {"date": text, "zone": text})
        # A NUL in the query string is refused by the service's middleware before any view.
        refused_early = "\x00" in text
        assert page.status_code == (400 if refused_early else 200)
        if not refused_early:
            assert "<script>" not in page.content.decode().split("</h1>", 1)[1]
        assert ada.get(PAGE, {"plan": text}).status_code == (400 if refused_early else 404)
        for body in (
            {"order": text, "route": str(route.id), "position": "1"},
            {"order": str(a1.id), "route": text, "position": "1"},
            {"order": str(a1.id), "route": str(route.id), "position": text},
        ):
            moved = ada.post(move_url(plan), body, follow=True)
            assert moved.status_code == 200
            assert len(texts_of(moved)) == 1
        planned = ada.post(PLAN_BUTTON, {"date": text, "zone": text}, follow=True)
        assert planned.status_code == 200
    assert [s.order_id for s in PlanStop.objects.filter(plan=plan)] == [a1.id]
