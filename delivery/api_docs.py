"""The interactive API docs (Swagger UI, ReDoc), self-contained.

Their assets come from the pinned drf-spectacular-sidecar package through the service's own
static files (SPECTACULAR_SETTINGS). A Content Security Policy keeps the pages to the service's
own address: ReDoc's bundle still puts a logo from its vendor's CDN in the menu, and the policy
stops that (and anything else) from leaving, so the docs work offline and leak no visits.
"""

from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerView

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        # Swagger UI's set-up script and both UIs' styles are inline; ReDoc runs a blob worker.
        "script-src 'self' 'unsafe-inline' blob:",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "worker-src 'self' blob:",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'self'",
    ]
)


class _SelfContained:
    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        return response


class SwaggerDocsView(_SelfContained, SpectacularSwaggerView):
    pass


class RedocDocsView(_SelfContained, SpectacularRedocView):
    # drf-spectacular's page without its Google Fonts links (ReDoc uses the system fonts).
    template_name = "api_docs/redoc.html"
