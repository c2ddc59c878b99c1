"""Who is calling: the provisioning secret, an API key, or a management bearer token (contract
"Authentication and scope", "Management API").

Each class answers the contract's 401 itself, so every view that names it behaves the same.
"""

import hashlib
import hmac

from django.conf import settings
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission

from delivery.access_log import attribute_request
from tenants import selectors, services
from tenants.errors import (
    ApiKeyMissing,
    InvalidToken,
    PlatformMismatch,
    ProvisioningSecretInvalid,
    ProvisioningSecretMissing,
)
from tenants.keycache import ApiKeyPrincipal


class ProvisioningCaller:
    """The parent platform, identified by the shared secret; rate limits count per secret."""

    is_authenticated = True

    def __init__(self, secret: str):
        self.rate_limit_key = hashlib.sha256(secret.encode()).hexdigest()


class ProvisioningSecretAuthentication(BaseAuthentication):
    def authenticate(self, request):
        sent = request.headers.get("X-Provisioning-Secret")
        if not sent:
            raise ProvisioningSecretMissing()
        if not hmac.compare_digest(sent.encode(), settings.PROVISIONING_SECRET.encode()):
            raise ProvisioningSecretInvalid()
        caller = ProvisioningCaller(sent)
        return caller, caller

    def authenticate_header(self, request):
        return "X-Provisioning-Secret"


class ApiKeyAuthentication(BaseAuthentication):
    """`X-API-Key` → the key's organization and platform; at most one query, usually none."""

    def authenticate(self, request) -> tuple[ApiKeyPrincipal, ApiKeyPrincipal]:
        value = request.headers.get("X-API-Key")
        if not value:
            raise ApiKeyMissing()
        principal = selectors.api_key_authenticate(value=value)
        services.api_key_touch(api_key_id=principal.key_id)
        attribute_request(
            request, organizationId=principal.organization_id, apiKeyId=principal.key_id
        )
        return principal, principal

    def authenticate_header(self, request):
        return "X-API-Key"


class BearerTokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        header = request.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise InvalidToken()
        token = selectors.auth_token_get(value=value.strip())
        # The organization is named once the view checked the one in its path (api_bases).
        attribute_request(request, userId=token.user_id)
        return token.user, token

    def authenticate_header(self, request):
        return "Bearer"


# The integration a path serves → the key platform it takes (contract "Authentication and scope").
INTEGRATION_PLATFORMS = {
    "partner-a": "partner_a",
    "partner-b": "partner_b",
    "partner-c": "partner_c",
    "erp": "erp",
}


class KeyMatchesIntegration(BasePermission):
    """403 when the key's platform is not the one of the view's `integration` family."""

    def has_permission(self, request, view) -> bool:
        integration = view.integration
        if request.auth.platform != INTEGRATION_PLATFORMS[integration]:
            raise PlatformMismatch(integration)
        return True
