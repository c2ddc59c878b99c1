"""OpenAPI security schemes for our three kinds of caller (drf-spectacular extensions)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ProvisioningSecretScheme(OpenApiAuthenticationExtension):
    target_class = "tenants.authentication.ProvisioningSecretAuthentication"
    name = "ProvisioningSecret"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "X-Provisioning-Secret"}


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "tenants.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "X-API-Key"}


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "tenants.authentication.BearerTokenAuthentication"
    name = "BearerToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer"}
