"""What an `externalRef` may be: text a caller can put in the order's path and read back.

The order is addressed as `.../orders/<externalRef>` (and `/release`, `/cancel`,
`/delivery-slot`, `/proof` after it), and `externalRef` may hold `/`. A ref that those paths cannot
give back (one ending in `/cancel` reads as the cancel action of another ref, one ending in
`/` as the ref without it, a `..` segment is removed by HTTP clients before sending) would
make an order nobody can read, cancel or release: it is refused at create
(docs/contract.md "Orders").
"""

import functools
import re
from dataclasses import dataclass

from django.urls import Resolver404, get_resolver, resolve
from django.urls.resolvers import RoutePattern, URLResolver

MAX_LENGTH = 100
ALLOWED = re.compile(r"[A-Za-z0-9\-_.:/#]+")
ALLOWED_MESSAGE = "externalRef may contain only letters, digits and -_.:/#"
#: the actions addressed after the ref, in any family
ACTIONS = ("release", "cancel", "delivery-slot", "proof")
#: external_ref_problem's rules as one OpenAPI pattern: ALLOWED characters in non-empty
#: segments, no `.` or `..` segment, no action as the last segment after a `/`
PATTERN = (
    r"^(?!(?:.*/)?\.{1,2}(?:/|$))"
    rf"(?!.*/(?:{'|'.join(ACTIONS)})$)"
    r"[A-Za-z0-9\-_.:#]+(?:/[A-Za-z0-9\-_.:#]+)*$"
)
#: one base per URL family (the partner families share one set of patterns)
_BASES = ("/api/integrations/partner-a/orders", "/api/integrations/erp/orders")


def could_be_stored(external_ref) -> bool:
    """False for text no order can have as its ref (so a lookup can answer 404 at once)."""
    return (
        isinstance(external_ref, str)
        and len(external_ref) <= MAX_LENGTH
        and ALLOWED.fullmatch(external_ref) is not None
    )


def external_ref_problem(external_ref: str) -> str | None:
    """Why `external_ref` cannot be an order's ref, or None when it can."""
    if not ALLOWED.fullmatch(external_ref):
        return ALLOWED_MESSAGE
    segments = external_ref.split("/")
    if "" in segments:
        return (
            "externalRef must not begin or end with / or contain //: "
            "the order's path could not be read back"
        )
    if any(segment in (".", "..") for segment in segments):
        return (
            "externalRef must not have . or .. between slashes: "
            "HTTP clients remove such segments from the order's path"
        )
    if len(segments) > 1 and segments[-1] in ACTIONS:
        return (
            f"externalRef must not end with /{segments[-1]}: "
            f"the order's path would name the {segments[-1]} action"
        )
    if not _addressable(external_ref):
        return "externalRef is not addressable by the order's path"
    return None


def _addressable(external_ref: str) -> bool:
    """Whether each path of an order (detail and actions) with this ref resolves to the same
    view as with a plain ref (`x`), carrying exactly this ref."""
    if "/" not in external_ref and external_ref not in _routing().words and _routing().plain:
        # A single segment that no route names routes exactly as `x` does (see _Routing): the
        # answer is known without resolving eight paths, which cost a third of a create's CPU.
        return True
    return _addressable_by_resolving(external_ref)


def _addressable_by_resolving(external_ref: str) -> bool:
    for path_of, probe in _probes():
        match = _match(path_of(external_ref))
        if (
            match is None
            or match.func != probe.func
            or match.kwargs.get("external_ref") != external_ref
        ):
            return False
    return True


@functools.cache
def _probes() -> tuple:
    """(path builder, the resolution of its path with `x`) for every order path that exists;
    the URLconf does not change while the process runs."""
    found = []
    for base in _BASES:
        for suffix in ("", *(f"/{action}" for action in ACTIONS)):
            probe = _match(f"{base}/x{suffix}")
            if probe is None or probe.kwargs.get("external_ref") != "x":
                continue  # not a route of this family

            def path_of(ref, base=base, suffix=suffix):
                return f"{base}/{ref}{suffix}"

            found.append((path_of, probe))
    return tuple(found)


@dataclass(frozen=True)
class _Routing:
    """What the URLconf says about the segment after each family's `orders/`.

    `words`: the literal segments routes put there (a ref equal to one would reach that route).
    `plain`: every route under `orders/` starts there with `<path:external_ref>` followed by
    nothing or `/`, or with a literal word, and is a `path()` route. Then a one-segment ref that
    is not a word matches the same routes, with the same ref, as `x` does: `path` is `.+`, and no
    other converter or regular expression could tell the two apart.
    """

    words: frozenset
    plain: bool


@functools.cache
def _routing() -> _Routing:
    words: set[str] = set()
    plain = True
    prefixes = tuple(f"{base.lstrip('/')}/" for base in _BASES)
    for route, regex_head in _routes(get_resolver().url_patterns, ""):
        for prefix in prefixes:
            if regex_head is not None:
                # a regular expression after `regex_head`: only resolving could tell
                if prefix.startswith(regex_head) or regex_head.startswith(prefix):
                    plain = False
                continue
            head = route.split("<", 1)[0]
            if head != route and len(head) < len(prefix) and prefix.startswith(head):
                plain = False  # a converter above `orders/` could take the order's paths
                continue
            if not route.startswith(prefix):
                continue
            first = route[len(prefix) :].split("/", 1)[0]
            if not first or first == "<path:external_ref>":
                continue
            if "<" in first or ">" in first:
                plain = False
            else:
                words.add(first)
    return _Routing(words=frozenset(words), plain=plain)


def _routes(patterns, prefix: str, regex_head: str | None = None):
    """(full route, None) for each `path()` pattern and resolver; (text, the path before the
    first regular expression) for one that has a regular expression in it."""
    for pattern in patterns:
        part = pattern.pattern
        if isinstance(part, RoutePattern) or regex_head is not None:
            route = prefix + str(part)
            head = regex_head
        else:
            route = prefix + part.regex.pattern
            head = prefix
        yield route, head
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route, head)


def _match(path: str):
    try:
        return resolve(path)
    except Resolver404:
        return None
