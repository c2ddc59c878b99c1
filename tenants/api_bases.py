"""Base views for the three kinds of caller; every API view of every app derives from one."""

from rest_framework.views import APIView

from delivery.access_log import attribute_request
from delivery.schema import AutoSchema
from delivery.throttling import ApiKeyThrottle, ManagementThrottle, ProvisioningThrottle
from tenants import selectors
from tenants.authentication import (
    INTEGRATION_PLATFORMS,
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


class IntegrationSchema(AutoSchema):
    """Names the integration in each operation's summary and says whose key it takes.

    One view class serves partner-a, partner-b and partner-c alike (`as_view(integration=...)`),
    so its docstring and `extend_schema(summary=...)` are the same for the three; this sets the
    document's operations apart, as a client of one platform reads them.
    """

    def get_operation(self, *args, **kwargs):
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        integration = self.view.integration
        if operation.get("summary"):
            operation["summary"] = f"{operation['summary']} ({integration})"
        caller = (
            f"Called with an `X-API-Key` of platform `{INTEGRATION_PLATFORMS[integration]}` "
            "(401 `Missing X-API-Key header` or `Invalid API key`); another platform's key: 403 "
            f"`API key does not match {integration} integration`."
        )
        # Who calls it goes before the operation's own list of errors, when it has one.
        paragraphs = [text for text in operation.get("description", "").split("\n\n") if text]
        at = paragraphs.index("Errors:") if "Errors:" in paragraphs else len(paragraphs)
        operation["description"] = "\n\n".join([*paragraphs[:at], caller, *paragraphs[at:]])
        return operation


class IntegrationApiView(ApiKeyApiView):
    """A key of the platform of this view's integration family (`partner-a`, ..., `erp`)."""

    permission_classes = [KeyMatchesIntegration]
    integration = "partner-a"
    openapi_tags = ["partner"]
    schema = IntegrationSchema()

    @property
    def actor(self) -> str:
        """Whom an order's status history names for the changes this request makes."""
        return f"api-key {self.request.auth.name} ({self.request.auth.platform})"


class ManagementApiView(APIView):
    """Organization admins with a bearer token; paths carry `org_id` (contract "Management API",
    "Authentication and scope")."""

    authentication_classes = [BearerTokenAuthentication]
    throttle_classes = [ManagementThrottle]
    openapi_tags = ["management"]

    def get_organization(self) -> Organization:
        organization = selectors.admin_organization_get(
            user=self.request.user, organization_id=self.kwargs["org_id"]
        )
        attribute_request(self.request, organizationId=organization.id)
        return organization
