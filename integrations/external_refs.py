"""What an `externalRef` may be: text a caller can put in the order's path and read back.

The order is addressed as `.../orders/<externalRef>` (and `/release`, `/cancel`,
`/delivery-slot` after it), and `externalRef` may hold `/`. A ref that those paths cannot
give back (one ending in `/cancel` reads as the cancel action of another ref, one ending in
`/` as the ref without it, a `..` segment is removed by HTTP clients before sending) would
make an order nobody can read, cancel or release: it is refused at create
(docs/contract.md "Orders").
"""

import re

from django.urls import Resolver404, resolve

MAX_LENGTH = 100
ALLOWED = re.compile(r"[A-Za-z0-9\-_.:/#]+")
ALLOWED_MESSAGE = "externalRef may contain only letters, digits and -_.:/#"
#: the actions addressed after the ref, in any family
ACTIONS = ("release", "cancel", "delivery-slot")
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
    for base in _BASES:
        for suffix in ("", *(f"/{action}" for action in ACTIONS)):
            probe = _match(f"{base}/x{suffix}")
            if probe is None or probe.kwargs.get("external_ref") != "x":
                continue  # not a route of this family
            match = _match(f"{base}/{external_ref}{suffix}")
            if (
                match is None
                or match.func != probe.func
                or match.kwargs.get("external_ref") != external_ref
            ):
                return False
    return True


def _match(path: str):
    try:
        return resolve(path)
    except Resolver404:
        return None
