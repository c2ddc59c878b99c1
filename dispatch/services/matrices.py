"""The travel matrices of a plan (contract "Dispatch", "Travel times"): the `ROUTING` setting
read in one place, the routing actually used named beside the figures."""

from django.conf import settings

from dispatch import matrix


def matrices_for(
    points: list[tuple[float, float]], *, speed_kmh: float, detour_factor: float
) -> matrix.TravelMatrix:
    """Durations and distances between `points` (lat, lng): straight lines, or the OSRM table
    server when `ROUTING=osrm` (straight lines again, `haversine-fallback`, when it fails)."""
    return matrix.travel_matrix(
        points,
        routing=settings.ROUTING,
        osrm_url=settings.OSRM_URL,
        detour_factor=detour_factor,
        speed_kmh=speed_kmh,
        timeout=settings.OSRM_TIMEOUT_SECONDS,
    )
