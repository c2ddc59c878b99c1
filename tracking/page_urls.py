"""The public tracking page (HTML), served at the site root: /track/<token>."""

from delivery.routing import route
from tracking import views

urlpatterns = [
    *route("track/<str:token>", views.tracking_page, name="tracking-page"),
]
