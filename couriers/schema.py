"""OpenAPI security scheme of the courier caller (a drf-spectacular extension)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class CourierTokenScheme(OpenApiAuthenticationExtension):
    target_class = "couriers.authentication.CourierTokenAuthentication"
    name = "CourierToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A driver's access token (`drv_...`), issued by an organization admin.",
        }
