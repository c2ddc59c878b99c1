"""Base views for the three kinds of caller; every API view of every app derives from one."""

from rest_framework.views import APIView

from delivery.access_log import attribute_request
from delivery.throttling import ApiKeyThrottle, ProvisioningThrottle
from tenants import selectors
from tenants.authentication import (
    ApiKeyAuthentication,
    BearerTokenAuthentication,
    KeyMatchesIntegration,
    ProvisioningSecretAuthentication,
)
from tenants.models import Organization


class ProvisioningApiView(APIView):
    """The parent platform's views: `X-Provisioning-Secret`, limits from `rate_limits`."""

    authentication_classes = [ProvisioningSecretAuthentication]
    openapi_tags = ["provisioning"]
    throttle_classes = [ProvisioningThrottle]
    rate_limits: dict[str, str] = {}


class PublicApiView(APIView):
    """No credentials at all (invites, tracking); subclasses set their own throttles."""

    authentication_classes: list = []


class ApiKeyApiView(APIView):
    """Any active key of the organization, whatever its platform (/public, /promises)."""

    authentication_classes = [ApiKeyAuthentication]
    throttle_classes = [ApiKeyThrottle]


class IntegrationApiView(ApiKeyApiView):
    """A key of the platform of this view's integration family (`partner-a`, ..., `erp`)."""

    permission_classes = [KeyMatchesIntegration]
    integration = "partner-a"
    openapi_tags = ["partner"]

    @property
    def actor(self) -> str:
        """Whom an order's status history names for the changes this request makes."""
        return f"api-key {self.request.auth.name} ({self.request.auth.platform})"


class ManagementApiView(APIView):
    """Organization admins with a bearer token; paths carry `org_id` (contract "Management API",
    "Authentication and scope")."""

    authentication_classes = [BearerTokenAuthentication]
    openapi_tags = ["management"]

    def get_organization(self) -> Organization:
        organization = selectors.admin_organization_get(
            user=self.request.user, organization_id=self.kwargs["org_id"]
        )
        attribute_request(self.request, organizationId=organization.id)
        return organization
