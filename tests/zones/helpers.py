"""Real polygons measured in metres on the WGS 84 ellipsoid, and the actors of the zone tests."""

from geopy.distance import geodesic
from rest_framework.test import APIClient

from tenants.models import Membership, User
from zones import services

PASSWORD = "a-Strong-passphrase-42"

# Berlin, Alexanderplatz.
BERLIN = (52.5219, 13.4132)


def offset(lat: float, lng: float, *, north_m: float = 0.0, east_m: float = 0.0):
    """The point `north_m` then `east_m` metres (geodesic) away from (lat, lng)."""
    point = geodesic(meters=abs(north_m)).destination((lat, lng), 0 if north_m >= 0 else 180)
    point = geodesic(meters=abs(east_m)).destination(
        (point.latitude, point.longitude), 90 if east_m >= 0 else 270
    )
    return point.latitude, point.longitude


def box(lat: float, lng: float, *, width_m: float, height_m: float) -> dict:
    """A GeoJSON rectangle centred on (lat, lng): edges along meridians and parallels."""
    north, _ = offset(lat, lng, north_m=height_m / 2)
    south, _ = offset(lat, lng, north_m=-height_m / 2)
    _, east = offset(lat, lng, east_m=width_m / 2)
    _, west = offset(lat, lng, east_m=-width_m / 2)
    return {
        "type": "Polygon",
        "coordinates": [
            [[west, south], [east, south], [east, north], [west, north], [west, south]]
        ],
    }


def east_edge(geodata: dict) -> float:
    return max(lng for lng, _ in geodata["coordinates"][0])


def north_edge(geodata: dict) -> float:
    return max(lat for _, lat in geodata["coordinates"][0])


def make_zone(organization, name: str, geodata: dict, **fields):
    return services.zone_create(organization=organization, name=name, geodata=geodata, **fields)


def literal(point) -> str:
    return f"{point[0]:.8f},{point[1]:.8f}"


def make_admin(organization, email: str) -> User:
    user = User.objects.create_user(email=email, password=PASSWORD, name="Zed Admin")
    Membership.objects.create(
        organization=organization, user=user, org_role="admin", is_active=True
    )
    return user


def login(email: str) -> APIClient:
    client = APIClient()
    response = client.post("/api/auth/token", {"email": email, "password": PASSWORD}, format="json")
    assert response.status_code == 200, response.content
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {response.json()['token']}")
    return client
