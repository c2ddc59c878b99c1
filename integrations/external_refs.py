"""What an `externalRef` may be: text a caller can put in the order's path and read back
(docs/contract.md "Orders"). The route is `.../orders/<path:external_ref>` and an optional action,
so a ref reads back when its `/`-separated segments are non-empty, allowed characters, none `.` or
`..` (HTTP clients remove those), and its last segment after a `/` is no action
(tests/integrations/test_external_ref_routing.py checks this against the URLconf)."""

import re

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
    return None
