"""What a recipient reads on the tracking page: statuses in plain words, times in the zone's time.

The page's script (templates/tracking/page.html) renders the same copy from the tracking API
when it polls, so the words live here once and reach the script through `script_config`.
"""

import datetime as dt
import zoneinfo
from dataclasses import dataclass

from django.utils import dateformat

from integrations.models import Order, OrderStatus
from tracking.selectors import TrackingProgress

#: per status: the headline, and the sentence under it. `{driver}` is the driver's first name,
#: `{organization}` the sender, `{at}` when the order entered the status (zone time).
STATUS_COPY: dict[str, dict[str, str]] = {
    OrderStatus.PENDING: {
        "title": "Order received",
        "description": "{organization} has received your order and is preparing the delivery.",
    },
    OrderStatus.DISPATCHING: {
        "title": "Preparing for dispatch",
        "description": "We are finding a driver for your delivery.",
    },
    OrderStatus.ASSIGNED: {
        "title": "Driver assigned",
        "description": "A driver will pick up your package soon.",
        "description_with_driver": "{driver} will pick up your package soon.",
    },
    OrderStatus.PICKED_UP: {
        "title": "Picked up",
        "description": "Your package has been picked up.",
        "description_with_driver": "{driver} has picked up your package.",
    },
    OrderStatus.IN_TRANSIT: {
        "title": "On the way",
        "description": "Your package is on the way to you.",
        "description_with_driver": "{driver} is on the way to you with your package.",
    },
    OrderStatus.DELIVERED: {
        "title": "Delivered",
        "description": "Your package was delivered on {at}.",
    },
    OrderStatus.FAILED: {
        "title": "Delivery failed",
        "description": (
            "We could not deliver your package ({at}). Please contact {organization} "
            "to arrange what happens next."
        ),
    },
    OrderStatus.CANCELLED: {
        "title": "Cancelled",
        "description": (
            "This delivery was cancelled on {at}. Nothing will be delivered for this order. "
            "If you did not expect this, please contact {organization}."
        ),
    },
}

#: the progress steps shown while an order is under way; failed and cancelled leave them
STEPS: tuple[tuple[str, str], ...] = (
    ("received", "Order received"),
    ("assigned", "Driver assigned"),
    ("picked_up", "Picked up"),
    ("in_transit", "On the way"),
    ("delivered", "Delivered"),
)
#: which step each status has reached (index into STEPS); absent: no progress shown
STEP_OF_STATUS: dict[str, int] = {
    OrderStatus.PENDING: 0,
    OrderStatus.DISPATCHING: 0,
    OrderStatus.ASSIGNED: 1,
    OrderStatus.PICKED_UP: 2,
    OrderStatus.IN_TRANSIT: 3,
    OrderStatus.DELIVERED: 4,
}
#: statuses after which nothing changes any more: the page stops polling
FINAL_STATUSES: tuple[str, ...] = (
    OrderStatus.DELIVERED,
    OrderStatus.FAILED,
    OrderStatus.CANCELLED,
)
#: statuses the page shows as a problem rather than as progress
PROBLEM_STATUSES: tuple[str, ...] = (OrderStatus.FAILED, OrderStatus.CANCELLED)

# Django date formats; the page's script builds the same shapes with Intl.DateTimeFormat.
MOMENT_FORMAT = "D j M, H:i"  # Tue 4 Mar, 14:05
DAY_FORMAT = "l j F"  # Tuesday 4 March
TIME_FORMAT = "H:i"  # 14:05
#: ranges are written with an en dash, as in print
EN_DASH = "\u2013"


def driver_first_name(full_name: str) -> str:
    """Only the first word of a driver's name is ever public (contract "Tracking")."""
    words = full_name.split()
    return words[0] if words else ""


def zone_time_zone(order: Order) -> zoneinfo.ZoneInfo:
    """The order's zone's time zone (contract "Tracking"), UTC without a zone or with a bad name."""
    name = order.zone.timezone if order.zone is not None else "UTC"
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return zoneinfo.ZoneInfo("UTC")


def format_moment(value: dt.datetime, tz: zoneinfo.ZoneInfo) -> str:
    return dateformat.format(value.astimezone(tz), MOMENT_FORMAT)


def format_window(start: dt.datetime | None, end: dt.datetime | None, tz) -> str:
    """`Tuesday 4 March, 10:00-12:00` (en dash) in zone time; one end only: `From ...`/`By ...`."""
    if start is not None and end is not None:
        local_start, local_end = start.astimezone(tz), end.astimezone(tz)
        if local_start.date() == local_end.date():
            day = dateformat.format(local_start, DAY_FORMAT)
            begin = dateformat.format(local_start, TIME_FORMAT)
            finish = dateformat.format(local_end, TIME_FORMAT)
            return f"{day}, {begin}{EN_DASH}{finish}"
        return f"{format_moment(start, tz)} {EN_DASH} {format_moment(end, tz)}"
    if start is not None:
        return f"From {format_moment(start, tz)}"
    if end is not None:
        return f"By {format_moment(end, tz)}"
    return ""


@dataclass(frozen=True)
class TimelineEntry:
    status: str
    label: str
    at: dt.datetime
    at_text: str


@dataclass(frozen=True)
class Step:
    key: str
    label: str
    state: str  # "done", "current" or "todo"


@dataclass(frozen=True)
class TrackingPage:
    """Everything the tracking page template shows, already in words."""

    status: str
    title: str
    description: str
    organization_name: str
    driver_name: str
    window_text: str
    time_zone: str
    timeline: list[TimelineEntry]
    steps: list[Step]
    is_final: bool
    is_problem: bool
    updated_at: dt.datetime
    updated_at_text: str
    #: "10:05-10:25 with an en dash" (zone time) while a driver has it; "" otherwise
    eta_text: str = ""
    #: "2 stops before yours" while in transit on a route; "" otherwise
    stops_before_text: str = ""
    #: when delivered (zone time); "" otherwise
    delivered_at_text: str = ""


def eta_window_text(start: dt.datetime, end: dt.datetime, tz) -> str:
    """`10:05-10:25` (an en dash) in zone time (the page's script writes the same)."""
    begin = dateformat.format(start.astimezone(tz), TIME_FORMAT)
    return f"{begin}{EN_DASH}{dateformat.format(end.astimezone(tz), TIME_FORMAT)}"


def stops_before_text(count: int | None) -> str:
    """How many stops the driver makes first, in words (the page's script writes the same)."""
    if count is None:
        return ""
    if count == 0:
        return "Yours is the next stop"
    return f"{count} stop{'' if count == 1 else 's'} before yours"


def status_description(status: str, *, driver: str, organization: str, at_text: str) -> str:
    copy = STATUS_COPY[status]
    template = copy.get("description_with_driver") if driver else None
    return (
        (template or copy["description"])
        .replace("{driver}", driver)
        .replace("{organization}", organization)
        .replace("{at}", at_text)
    )


def steps_for(status: str) -> list[Step]:
    """The progress steps and how far `status` got; failed and cancelled reach none of them."""
    reached = STEP_OF_STATUS.get(status, -1)
    return [
        Step(
            key=key,
            label=label,
            state="done" if index < reached else "current" if index == reached else "todo",
        )
        for index, (key, label) in enumerate(STEPS)
    ]


def tracking_page_build(*, order: Order, progress: TrackingProgress) -> TrackingPage:
    """The page of `order` (from `tracking_order_get`, so its history is already loaded) with
    its `progress` (`tracking_progress`)."""
    tz = zone_time_zone(order)
    events = list(order.status_events.all())
    timeline = [
        TimelineEntry(
            status=event.to_status,
            label=STATUS_COPY[event.to_status]["title"],
            at=event.at,
            at_text=format_moment(event.at, tz),
        )
        for event in events
    ]
    # when the order entered its current status: the latest history row that led there
    entered = next((e.at for e in reversed(events) if e.to_status == order.status), None)
    driver = driver_first_name(order.driver.name) if order.driver is not None else ""
    return TrackingPage(
        status=order.status,
        title=STATUS_COPY[order.status]["title"],
        description=status_description(
            order.status,
            driver=driver,
            organization=order.organization.name,
            at_text=format_moment(entered or order.updated_at, tz),
        ),
        organization_name=order.organization.name,
        driver_name=driver,
        window_text=format_window(order.delivery_window_start, order.delivery_window_end, tz),
        time_zone=tz.key,
        timeline=timeline,
        steps=steps_for(order.status),
        is_final=order.status in FINAL_STATUSES,
        is_problem=order.status in PROBLEM_STATUSES,
        updated_at=order.updated_at,
        updated_at_text=format_moment(order.updated_at, tz),
        eta_text=(
            eta_window_text(progress.eta_from, progress.eta_to, tz)
            if progress.eta_from is not None and progress.eta_to is not None
            else ""
        ),
        stops_before_text=stops_before_text(progress.stops_before),
        delivered_at_text=(
            format_moment(progress.delivered_at, tz) if progress.delivered_at is not None else ""
        ),
    )


def script_config(*, api_url: str, poll_interval_ms: int, page: TrackingPage) -> dict:
    """What the page's script needs to render a tracking API answer like the server does."""
    return {
        "apiUrl": api_url,
        "pollIntervalMs": poll_interval_ms,
        "timeZone": page.time_zone,
        "organization": page.organization_name,
        "updatedAt": page.updated_at.isoformat(),
        "copy": {status: dict(copy) for status, copy in STATUS_COPY.items()},
        "stepOfStatus": dict(STEP_OF_STATUS),
        "finalStatuses": list(FINAL_STATUSES),
        "problemStatuses": list(PROBLEM_STATUSES),
    }
