"""The in-flight limit at the door (contract "Rate limits": IN_FLIGHT_LIMIT): a request of an
organization that already has its limit of requests of the same kind running is refused with 429
before any view, serializer or DRF work, so a flooding tenant's extra requests cost little. The
same caller (organization and kind, or None for a request not counted) is what fair turns in
the instance and in the process are taken by (delivery/fairness.py; docs/faults.md "Noisy
neighbours").

Who is calling is resolved here only to be counted; authentication proper happens later, in the
view, as always. So the answer may be remembered per process for a few seconds: a key revoked
meanwhile is still refused by its view, only counted against its organization a little longer.
"""

import logging
import re
import time

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

from delivery import fairness, inflight
from delivery.errors import ServiceUnavailable, TooManyInFlight
from delivery.middleware import error_response, is_api_request
from tenants import selectors
from tenants.errors import ApiKeyInvalid
from tenants.services import secret_digest

logger = logging.getLogger(__name__)

# /api/manage/organizations/<org_id>/...: the organization a management request acts on.
_MANAGEMENT_PATH = re.compile(r"^/api/manage/organizations/(?P<org_id>[^/]+)")

REMEMBER_SECONDS = 10.0


class _Recent:
    """A per-process memo of who a credential is, for REMEMBER_SECONDS; bounded in size."""

    def __init__(self, size: int = 10_000) -> None:
        self.size = size
        self.entries: dict[tuple, tuple[float, object]] = {}

    def get(self, key: tuple) -> tuple[bool, object]:
        entry = self.entries.get(key)
        if entry is None or entry[0] < time.monotonic():
            return False, None
        return True, entry[1]

    def put(self, key: tuple, value: object) -> None:
        if len(self.entries) >= self.size:
            self.entries.clear()
        self.entries[key] = (time.monotonic() + REMEMBER_SECONDS, value)


_recent = _Recent()


def _api_key_organization(value: str) -> str | None:
    key = ("api-key", secret_digest(value))
    found, organization_id = _recent.get(key)
    if not found:
        try:
            organization_id = selectors.api_key_authenticate(value=value).organization_id
        except ApiKeyInvalid:
            organization_id = None  # the view answers 401; nothing to count
        _recent.put(key, organization_id)
    return organization_id


def _managed_organization(token: str, organization_id: str) -> str | None:
    key = ("management", secret_digest(token), organization_id)
    found, administers = _recent.get(key)
    if not found:
        administers = selectors.token_administers(value=token, organization_id=organization_id)
        _recent.put(key, administers)
    # Only a token of the organization's own admin counts against it: another tenant's
    # requests to its paths are refused by the view and must not use up its places.
    return organization_id if administers else None


def caller_scope(request) -> tuple[str, str] | None:
    """(organization id, kind of caller) a request is counted under, or None: not counted."""
    if not is_api_request(request):
        return None
    try:
        return _scope(request)
    except UnicodeEncodeError:
        # A credential no one holds (a lone surrogate): UnstorableTextMiddleware answers 400.
        return None
    except (OperationalError, InterfaceError) as exc:
        # Not counted, as when Redis is away; the view answers what the outage means.
        logger.warning("in-flight limit: caller not resolved: %s", exc.__class__.__name__)
        return None


def _scope(request) -> tuple[str, str] | None:
    api_key = request.headers.get("X-API-Key")
    if api_key:
        organization_id = _api_key_organization(api_key)
        return (organization_id, inflight.API_KEY) if organization_id else None
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    matched = _MANAGEMENT_PATH.match(request.path)
    if scheme.lower() == "bearer" and token.strip() and matched:
        organization_id = _managed_organization(token.strip(), matched["org_id"])
        return (organization_id, inflight.MANAGEMENT) if organization_id else None
    return None


def refusal_response(refusal: inflight.Refusal):
    """429 `too_many_in_flight`: retry in a second, with the RateLimit fields of a concurrency
    quota (draft-ietf-httpapi-ratelimit-headers: `qu="concurrent-requests"`, no window)."""
    error = TooManyInFlight(retry_after=1)
    response = error_response(error)
    policy = f'"in-flight:{refusal.kind}"'
    response["RateLimit-Policy"] = f'{policy};q={refusal.limit};qu="concurrent-requests"'
    response["RateLimit"] = f"{policy};r=0;t={error.retry_after}"
    return response


class InFlightLimitMiddleware:
    """Takes a place for the request in its organization's count (or refuses it at once), runs
    it in its fair turn (delivery/fairness.py: in the instance while another caller has requests
    in flight, then in this process; a 503 when none came free in time), and gives the place back
    when the response is made, whatever happened in between."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        resolves = inflight.limit() or settings.FAIR_RUNNING_PER_WORKER
        scope = caller_scope(request) if resolves else None
        place = inflight.acquire(organization_id=scope[0], kind=scope[1]) if scope else None
        if isinstance(place, inflight.Refusal):
            return refusal_response(place)
        if settings.DATABASE_POOL_MAX_SIZE:
            # Who calls may have been read from the database: the pooled connection goes back
            # while this request waits for its turn, so waiting requests never hold them all.
            connection.close()
        # A caller alone in flight is not capped across the instance: its requests then take
        # nothing from anyone, and a tenant alone keeps the whole web tier.
        alone = isinstance(place, inflight.Place) and not place.others
        try:
            return fairness.run(
                self.get_response, request, caller=scope, capped_in_instance=not alone
            )
        except fairness.TurnNotFree:
            logger.warning("no fair turn within %ss: 503", settings.FAIR_TURN_WAIT_SECONDS)
            return error_response(ServiceUnavailable(headers={"Retry-After": "1"}))
        finally:
            if place is not None:
                inflight.release(place)
