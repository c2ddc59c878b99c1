"""What `manage.py demo` needs from couriers (contract "Couriers": "Driver access"): a driver
access token to sign in to the courier web app with, and the lines that show it."""

import shlex
from datetime import date

from couriers import selectors
from couriers.services import tokens
from tenants.models import Driver


def demo_courier_lines(*, base_url: str, driver: Driver, day: date | None) -> list[tuple[str, str]]:
    """(what it is, the line): the courier app's address with a new access token of `driver`,
    its sign-in link, and a `curl` of the driver's route of `day` (today without one) with that
    token.

    A token is shown once and stored as a digest, so the demo cannot print the previous run's:
    it issues a new one on every run, which ends the one printed before. Acceptable for a
    development demo; a person signed in to the app with the old token signs in again.
    """
    issued = tokens.driver_token_issue(driver=driver)
    base_url = base_url.rstrip("/")
    route_url = f"{base_url}/api/courier/route"
    if day is not None:
        route_url += f"?date={day.isoformat()}"
    bearer = shlex.quote(f"Authorization: Bearer {issued.value}")
    return [
        (
            f"Courier app for {driver.name} (a new token on every demo run; it ends the previous "
            "one): open it and paste the token",
            f"{base_url}/courier/  token: {issued.value}",
        ),
        (
            "or sign in by its link (the app takes the token out of the address bar at once):",
            f"{base_url}/courier/#token={issued.value}",
        ),
        (
            f"{driver.name}'s route of {_day_label(driver, day)}:",
            f"curl -s {shlex.quote(route_url)} -H {bearer}",
        ),
    ]


def _day_label(driver: Driver, day: date | None) -> str:
    """The demo's delivery day as the courier sees it: the app shows the route of the driver's
    today, so a later day's stops appear there on that day (the curl reads them before)."""
    if day is None or day == selectors.driver_today(driver=driver):
        return "today (stops once a plan is committed)"
    return (
        f"{day.isoformat()} (stops once a plan is committed; the courier app shows them on that"
        " day, this curl at once)"
    )
