from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from delivery import health
from delivery.routing import route

api_patterns = [
    path("", include("provisioning.urls")),
    path("", include("tenants.urls")),
    path("", include("zones.urls")),
    path("", include("webhooks.urls")),
    *route("schema", SpectacularAPIView.as_view(), name="schema"),
    *route("docs", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    *route("healthz", health.healthz, name="healthz"),
    *route("readyz", health.readyz, name="readyz"),
    path("api/", include(api_patterns)),
]
