"""The root URLconf (`ROOT_URLCONF`): mounts every app's routes, the admin, the health probes,
the metrics and the API documentation."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from delivery import api_docs, health, metrics
from delivery.routing import route
from demo import reference_views

# The hot families first: a request walks every pattern listed before its own, and no path
# matches patterns of two apps (tests/core/test_url_routing.py), so the order changes only cost.
api_patterns = [
    # Before the integrations: their `orders/<externalRef>` would take `.../proof` as a reference.
    path("", include("couriers.partner_urls")),
    path("", include("integrations.urls")),
    path("", include("slots.urls")),
    path("", include("zones.urls")),
    path("", include("tracking.urls")),
    path("", include("couriers.urls")),
    path("", include("webhooks.urls")),
    path("", include("tenants.urls")),
    path("", include("dispatch.urls")),
    # Committing plans, and the order transition as dispatch serves it (manual assignment).
    path("", include("dispatch.commit_urls")),
    path("", include("provisioning.urls")),
    *route("bench/hello", reference_views.HelloApi.as_view()),
    *route("bench/hello-auth", reference_views.HelloWithKeyApi.as_view()),
    *route("bench/dbread", reference_views.DbReadApi.as_view()),
    *route("bench/dbwrite", reference_views.DbWriteApi.as_view()),
    *route("bench/bookhot", reference_views.BookHotApi.as_view()),
    *route("schema", SpectacularAPIView.as_view(), name="schema"),
    *route("docs", api_docs.SwaggerDocsView.as_view(url_name="schema"), name="docs"),
    *route(
        "redoc",
        api_docs.RedocDocsView.as_view(url_name="schema"),
        name="redoc",
    ),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    *route("healthz", health.healthz, name="healthz"),
    *route("readyz", health.readyz, name="readyz"),
    *route("metrics", metrics.metrics_view, name="metrics"),
    path("api/", include(api_patterns)),
    path("", include("tracking.page_urls")),
    path("", include("couriers.page_urls")),
]

# A refused Host answers the contract's JSON error body, not Django's HTML page (contract "Errors").
handler400 = "delivery.middleware.bad_request"
