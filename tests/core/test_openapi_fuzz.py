"""Schemathesis against the OpenAPI document (/api/schema/): every operation, in process.

Each operation gets a bounded number of generated requests (valid and invalid) with real
credentials (provisioning secret, an API key of the operation's family, a management bearer
token) and, half the time, the ids of real objects of the caller's organization, so requests get
past authentication and lookups. Every check schemathesis has runs: no 5xx, answers and status
codes as documented, credentials enforced, invalid data refused, and valid data accepted - the
document states every limit the service enforces, so a request it calls valid is refused only
for one of the rules OpenAPI cannot state (RULES_OPENAPI_CANNOT_STATE, docs/contract.md).
"""

import json
import re
import zlib

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase
from hypothesis import settings as hypothesis_settings
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import (
    AcceptedNegativeData,
    RejectedPositiveData,
    negative_data_rejection,
    positive_data_acceptance,
)

MAX_EXAMPLES = 15
APP = WSGIHandler()
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", APP)
# The service refuses NUL in any text, object keys included (PostgreSQL text cannot hold it):
# a rule of the whole body, listed in docs/contract.md "Rules OpenAPI cannot state".
schema.config.generation.update(allow_x00=False)

#: What a request the document calls valid may still be refused for (400): rules OpenAPI cannot
#: state, by the message that names each, and why (docs/contract.md "Rules OpenAPI cannot
#: state" lists the same). A full slot, a passed cutoff, a taken ref answer 409, which the
#: positive-data check accepts.
RULES_OPENAPI_CANNOT_STATE = {
    r"zone or address query parameter is required": "one of two query parameters",
    r"Provide either zone or address, not both": "one of two query parameters",
    r"Either \(lat, lng\) or zoneId must be provided": "one of two query parameters",
    r"(pickup|dropoff)Lat(/| and )(pickup|dropoff)Lng (required unless geocodeOnIngest is true|"
    r"must be given together)": "fields given together",
    r"packageSize or weightKg required": "one of two fields",
    r"startDate must be before endDate": "a range across two fields",
    r"Date range must not exceed \d+ days": "a range across two fields",
    r"until must be after since": "a range across two fields",
    r"deliveryWindowEnd must be after deliveryWindowStart": "a range across two fields",
    r"endTime must be after startTime": "a range across two fields",
    r"driverId is required for status \w+": "a field required by another's value",
    r"timezone .* is not an IANA time zone name": "the host's time zone database",
    r"password: .*": "password strength (common, like the user, ...)",
    r"webhookUrl (host cannot be resolved|must not point to .*)": "where a host resolves",
    r"[Ss]lug \S+ is already taken": "the state of the service",
    r"Invite has already been accepted": "the state of the service",
    r"driverId must name an active driver": "the state of the service",
    r"No orders to plan on \S+": "the state of the service",
    r"zoneId: slot templates can only be assigned to zones of purpose slot or both": (
        "the state of the service"
    ),
    r"dropoffLat and dropoffLng required: the order has no dropoff location": (
        "the state of the service"
    ),
    r"Could not geocode \w+": "the outside geocoder's answer",
    r"Zone .* has no depot": "the state of the service",
    r"deliverySlotTemplateId and deliverySlotDate, or deliveryWindowStart, are required": (
        "one of two bookings"
    ),
    r"deliverySlotTemplateId and deliverySlotDate must be given together": "fields given together",
    r"Give either a slot \(deliverySlotTemplateId, deliverySlotDate\) or a window "
    r"\(deliveryWindowStart\), not both": "one of two bookings",
    r"An? (ERP|partner) order is re-attempted on a (slot|window).*": "the order's family",
    r"Provide either cutoffMinutes or cutoffDayBeforeAt, not both": "one of two fields",
    r"durationMinutes must equal the minutes from startTime to endTime when both are given": (
        "fields that depend on each other"
    ),
    r"durationMinutes: a slot must end by midnight of its day": "a range across two fields",
    r"firstStart must be before lastEnd": "a range across two fields",
    r"geodata.*": "polygon geometry (a valid, simple ring)",
    r"name .* is already taken": "the state of the service",
    r"(codAmount|weightKg) must have at most \d decimal places": "a binary number's decimal "
    "places: the document states multipleOf, which validators check with a tolerance",
    r"(lat|lng) must be a number between -\d+ and \d+": "a query number is written in decimals "
    "(no exponent), which a number's schema cannot say",
    r"failureReason is required for status failed": "a field required by another's value",
    r"(Signature|Photo|Cash collected) is required": "the dispatch policy and the order",
    r"Barcode does not match": "the order's expected barcode",
    r"photoIds has an unknown photo: \S+": "the state of the service",
    r"proof\.signature must be a PNG data URL of at most 200 KB": "a file's content",
    r"photo must be a JPEG or PNG image": "a file's content",
    r"photo is required \(a multipart file field\)": "a file's content",
    r"(points\[\d+\]\.)?at must not be more than (24 hours ago|2 minutes ahead)": (
        "the service's clock"
    ),
    r"since must not be more than \d+ days ago: failed deliveries are kept \d+ days": (
        "the service's clock and its retention"
    ),
    r"(points\[\d+\]\.)?at: at must carry a UTC offset \(Z or \+01:00\)": (
        "a date-time's offset, which the format leaves optional"
    ),
}
_UNSTATEABLE = re.compile("|".join(f"(?:{rule})" for rule in RULES_OPENAPI_CANNOT_STATE))

#: path parameter -> the world's id of that name (by path where one name means two things)
REAL_IDS = {
    "org_id": "org_id",
    "driver_id": "driver_id",
    "order_id": "order_id",
    "template_id": "template_id",
    "zone_id": "zone_id",
    "delivery_id": "delivery_id",
    "user_id": "user_id",
    "plan_id": "plan_id",
}


@pytest.fixture
def world(module_worlds, fast, db):
    world = module_worlds[0]
    # Requests run in this thread, inside the test's transaction; Django's handler would close
    # the connection at each request (the test client disconnects the same signals per request).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield world
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def api_key_platform(path: str) -> str:
    for family, platform in (
        ("/integrations/partner-a/", "partner_a"),
        ("/integrations/partner-b/", "partner_b"),
        ("/integrations/partner-c/", "partner_c"),
        ("/integrations/erp/", "erp"),
    ):
        if path.startswith(f"/api{family}"):
            return platform
    return "standard"


def real_value(world, path: str, name: str) -> str | None:
    if name == "key_id":
        return world.key_ids["standard"]
    if name == "external_ref":
        return world.ids["erp_ref" if "/erp/" in path else "partner_ref"]
    if name == "token":
        return world.ids["tracking_token" if path.startswith("/api/track/") else "invite_token"]
    if name == "org_id":
        return world.org_id
    key = REAL_IDS.get(name)
    return world.ids[key] if key else None


def aim_at_real_objects(case, world) -> None:
    """Replaces about half of the generated path ids with the ids of real objects (which half
    depends on the generated value, so a failing example replays the same way)."""
    for name, value in (case.path_parameters or {}).items():
        if zlib.crc32(repr(value).encode()) % 2:
            real = real_value(world, case.operation.path, name)
            if real is not None:
                case.path_parameters[name] = real


def credentials(case, world, django_settings) -> dict[str, str]:
    return credentials_for(case.operation.path, world, django_settings.PROVISIONING_SECRET)


def credentials_for(path: str, world, provisioning_secret: str) -> dict[str, str]:
    """The headers that let a request of the operation at `path` past authentication."""
    if path.startswith("/api/provisioning/"):
        return {"X-Provisioning-Secret": provisioning_secret}
    if path.startswith("/api/manage/") or path == "/api/auth/token":
        return {"Authorization": f"Bearer {world.token}"}
    if path.startswith(("/api/integrations/", "/api/public/", "/api/promises/")):
        return {"X-API-Key": world.keys[api_key_platform(path)]}
    if path.startswith("/api/courier/"):
        return {"Authorization": f"Bearer {world.courier_token}"}
    return {}


def refused_only_for_unstateable_rules(response) -> bool:
    try:
        message = json.loads(response.content)["message"]
    except (ValueError, KeyError, TypeError):
        return False
    messages = message if isinstance(message, list) else [message]
    return all(_UNSTATEABLE.fullmatch(text) for text in messages)


def valid_data_accepted(ctx, response, case):
    """schemathesis' positive_data_acceptance, except a refusal for a rule OpenAPI cannot
    state."""
    try:
        return positive_data_acceptance(ctx, response, case)
    except RejectedPositiveData:
        if response.status_code == 400 and refused_only_for_unstateable_rules(response):
            return None
        raise


#: Invalid data the service takes on purpose (docs/contract.md "Rules OpenAPI cannot state")
ACCEPTED_ON_PURPOSE = (
    # unknown query parameters are ignored, as HTTP caches and proxies add their own
    "query: violates `additionalProperties`",
    # an absent body of an operation whose body is optional reads as {}
    "in body - incorrect type",
    # a phone's 32 characters are counted without its separators (spaces, dashes, parentheses)
    "phone: String larger than maxLength",
)


def invalid_data_refused(ctx, response, case):
    """schemathesis' negative_data_rejection, except invalid data the service takes on
    purpose."""
    try:
        return negative_data_rejection(ctx, response, case)
    except AcceptedNegativeData as failure:
        if any(reason in str(failure.message) for reason in ACCEPTED_ON_PURPOSE):
            return None
        if "query" in str(failure.message) and "" in (case.query or {}).values():
            return None  # an empty optional query parameter (`status=`) reads as absent
        raise


def one_key_per_body(case) -> None:
    """Makes a valid generated Idempotency-Key unique to the body: hypothesis draws the same few
    keys again and again, and a key reused with another body is refused (422), which says
    nothing of the body."""
    key = (case.headers or {}).get("Idempotency-Key")
    if key and case.meta is not None and case.meta.generation.mode.is_positive:
        digest = zlib.crc32(repr(case.body).encode())
        case.headers["Idempotency-Key"] = f"{key[:240]}{digest:08x}"


def left_out_on_purpose(case) -> set[str]:
    """The header a coverage case leaves out to see it refused (then not supplied here)."""
    data = case.meta.phase.data if case.meta is not None else None
    scenario = getattr(data, "scenario", None)
    if scenario is not None and scenario.name == "MISSING_PARAMETER" and data.parameter:
        return {data.parameter.lower()}
    return set()


@schema.parametrize()
@hypothesis_settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_api_conforms_to_its_openapi_document(case, world, settings):
    negative_at = case.meta.is_negative_at if case.meta is not None else lambda _: False
    # invalid ids and missing credentials stay as generated: they are what is being tested
    if not negative_at(ParameterLocation.PATH):
        aim_at_real_objects(case, world)
    left_out = left_out_on_purpose(case)
    if negative_at(ParameterLocation.HEADER):
        # the invalid header may be a credential (missing, malformed): send what was generated
        left_out |= {name.lower() for name in credentials(case, world, settings)}
    headers = {
        name: value
        for name, value in credentials(case, world, settings).items()
        if name.lower() not in left_out
    }
    one_key_per_body(case)
    # every check, with the positive-data one aware of what OpenAPI cannot state
    case.call_and_validate(
        headers=headers,
        excluded_checks=[positive_data_acceptance, negative_data_rejection],
        additional_checks=[valid_data_accepted, invalid_data_refused],
    )
