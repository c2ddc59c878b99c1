"""The courier caller: a driver with an access token (`Authorization: Bearer drv_...`,
contract "Couriers")."""

from dataclasses import dataclass

from rest_framework.authentication import BaseAuthentication

from couriers import selectors
from delivery.access_log import attribute_request
from tenants.errors import InvalidToken
from tenants.models import Driver


@dataclass(frozen=True)
class CourierPrincipal:
    """Who is calling the courier API: one active driver of an active organization."""

    driver: Driver

    is_authenticated = True

    @property
    def driver_id(self):
        return self.driver.id

    @property
    def organization_id(self):
        return self.driver.organization_id


class CourierTokenAuthentication(BaseAuthentication):
    """401 `Invalid or missing token` for a missing, malformed, unknown or ended token, and for
    a driver or organization made inactive: the token is read through the key cache, which any
    such change makes stale in every process from its commit on."""

    def authenticate(self, request) -> tuple[CourierPrincipal, CourierPrincipal]:
        scheme, _, value = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise InvalidToken()
        driver = selectors.driver_token_authenticate(value=value.strip())
        attribute_request(request, organizationId=driver.organization_id, driverId=driver.id)
        principal = CourierPrincipal(driver=driver)
        return principal, principal

    def authenticate_header(self, request):
        return "Bearer"
