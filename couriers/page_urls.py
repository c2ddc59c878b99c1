"""The courier web app (HTML), served at the site root: /courier/."""

from couriers import views
from delivery.routing import route

urlpatterns = [
    *route("courier", views.courier_app, name="courier-app"),
]
