"""An externalRef is checked against the URLconf (contract "Orders"): the shortcut for one-segment
refs must answer exactly as resolving every order path does, and must step aside as soon as a
route could tell such a ref from `x`."""

import pytest
from django.urls import clear_url_caches, include, path, re_path
from hypothesis import given, settings
from hypothesis import strategies as st

from integrations import external_refs

ALLOWED_CHARS = "ABCXYZabcxyz0189-_.:#"


@pytest.fixture
def fresh_routing():
    external_refs._routing.cache_clear()
    external_refs._probes.cache_clear()
    yield
    clear_url_caches()
    external_refs._routing.cache_clear()
    external_refs._probes.cache_clear()


def test_the_service_urlconf_lets_one_segment_refs_take_the_shortcut(fresh_routing):
    routing = external_refs._routing()

    assert routing.plain is True
    assert routing.words == frozenset()


@settings(max_examples=300, deadline=None)
@given(ref=st.text(alphabet=ALLOWED_CHARS, min_size=1, max_size=30))
def test_the_shortcut_agrees_with_resolving_every_order_path(ref):
    if ref in (".", ".."):
        return  # refused before the URLconf is asked
    assert external_refs._addressable(ref) is external_refs._addressable_by_resolving(ref)


def _view(request, **kwargs):  # pragma: no cover - only resolved, never called
    raise AssertionError


def _urlconf_with(*extra):
    """The service's own patterns, with `extra` in front of them."""

    class Urlconf:
        urlpatterns = [*extra, path("", include("delivery.urls"))]

    return Urlconf


ERP = "api/integrations/erp/orders"


@pytest.mark.parametrize(
    ("extra", "words", "plain"),
    [
        ([path(f"{ERP}/export", _view)], {"export"}, True),
        ([path(f"{ERP}/<int:number>", _view)], set(), False),
        ([re_path(rf"^{ERP}/(?P<external_ref>\d+)$", _view)], set(), False),
        ([path("api/integrations/<str:family>/orders/<path:ref>", _view)], set(), False),
        ([path(f"{ERP}/<path:external_ref>.json", _view)], set(), False),
    ],
    ids=["literal word", "int converter", "regex route", "converter above", "suffix in segment"],
)
def test_a_route_that_could_tell_a_ref_from_x_disables_the_shortcut(
    settings, fresh_routing, extra, words, plain
):
    settings.ROOT_URLCONF = _urlconf_with(*extra)
    clear_url_caches()

    routing = external_refs._routing()

    assert routing.words == frozenset(words)
    assert routing.plain is plain


def test_a_ref_equal_to_a_route_word_is_refused(settings, fresh_routing):
    settings.ROOT_URLCONF = _urlconf_with(path(f"{ERP}/export", _view))
    clear_url_caches()

    assert external_refs.external_ref_problem("export") == (
        "externalRef is not addressable by the order's path"
    )
    assert external_refs.external_ref_problem("exports") is None
