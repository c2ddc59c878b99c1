"""The courier web app (HTML), served at the site root: /courier/."""

from couriers import views
from delivery.routing import route

urlpatterns = [
    *route("courier", views.courier_app, name="courier-app"),
    *route("courier/service-worker.js", views.courier_service_worker, name="courier-app-worker"),
]
