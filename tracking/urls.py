from delivery.routing import route
from tracking import apis

urlpatterns = [
    *route("track/<str:token>", apis.TrackingApi.as_view(), name="tracking-api"),
]
