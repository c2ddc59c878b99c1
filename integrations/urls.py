from django.urls import include, path

urlpatterns = [
    path("", include("integrations.partner.urls")),
    path("", include("integrations.erp.urls")),
]
