"""An accepted externalRef reads back by every order path (contract "Orders"): the character rule
of integrations/external_refs.py, checked against the URLconf it relies on."""

from django.urls import Resolver404, get_resolver, resolve
from django.urls.resolvers import URLResolver
from hypothesis import example, given, settings
from hypothesis import strategies as st

from integrations import external_refs
from integrations.partner.urls import PARTNER_INTEGRATIONS

ALLOWED_CHARS = "ABCXYZabcxyz0189-_.:#/"
BASES = (
    *(f"api/integrations/{integration}/orders" for integration in PARTNER_INTEGRATIONS),
    "api/integrations/erp/orders",
)


def _match(path: str):
    try:
        return resolve(path)
    except Resolver404:
        return None


def _routes(patterns, prefix: str = ""):
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        yield route
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route)


def test_every_route_after_orders_starts_with_the_ref():
    """What external_refs relies on: no route could tell a ref from another after `orders/`."""
    after_orders = [
        (base, route)
        for route in _routes(get_resolver().url_patterns)
        for base in BASES
        if route.startswith(f"{base}/") and route != f"{base}/"
    ]

    assert after_orders
    for base, route in after_orders:
        assert route.startswith(f"{base}/<path:external_ref>"), route


@settings(max_examples=500, deadline=None)
@given(ref=st.text(alphabet=ALLOWED_CHARS, min_size=1, max_size=30))
@example(ref="release")
@example(ref="cancel/x")
@example(ref="x/delivery-slot/y")
@example(ref="orders")
@example(ref="...")
@example(ref="a.json")
def test_an_accepted_ref_reads_back_by_every_order_path(ref):
    if external_refs.external_ref_problem(ref) is not None:
        return
    for base in BASES:
        for suffix in ("", *(f"/{action}" for action in external_refs.ACTIONS)):
            plain = _match(f"/{base}/x{suffix}")
            if plain is None or plain.kwargs.get("external_ref") != "x":
                continue  # not an action of this family
            match = _match(f"/{base}/{ref}{suffix}")
            assert match is not None, (base, ref, suffix)
            assert match.func == plain.func, (base, ref, suffix)
            assert match.kwargs["external_ref"] == ref, (base, ref, suffix)
