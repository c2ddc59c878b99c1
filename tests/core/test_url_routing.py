"""Every route answers for its own paths: no pattern is shadowed by another, so the order of the
includes (hot families first, service/urls.py) changes what a request costs, never where it
goes."""

import re
import uuid

import pytest
from django.urls import Resolver404, get_resolver, resolve
from django.urls.resolvers import RoutePattern, URLResolver

SAMPLES = {"int": "1", "uuid": str(uuid.UUID(int=1)), "path": "p0/p1"}


def _routes(patterns, prefix=""):
    for pattern in patterns:
        if not isinstance(pattern.pattern, RoutePattern):
            continue  # admin's own regular expressions
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route)
        else:
            yield route


def _sample_path(route: str) -> str:
    return "/" + re.sub(r"<(?:(\w+):)?\w+>", lambda m: SAMPLES.get(m.group(1), "s0"), route)


ROUTES = sorted(set(_routes(get_resolver().url_patterns)))


def test_the_service_has_its_routes():
    assert "api/integrations/partner-a/orders/<path:external_ref>" in ROUTES
    assert "api/integrations/erp/orders/<path:external_ref>/delivery-slot" in ROUTES
    assert len(ROUTES) > 200


@pytest.mark.parametrize("route", ROUTES)
def test_a_route_is_reached_by_its_own_paths(route):
    try:
        match = resolve(_sample_path(route))
    except Resolver404:
        pytest.fail(f"{route} answers 404 for {_sample_path(route)}")

    assert match.route == route
