"""The travel matrices of a plan (contract "Dispatch", "Travel times"): one call, the routing it
used named beside them."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Matrices:
    durations: np.ndarray  # seconds, int
    distances: np.ndarray  # metres, int
    #: haversine | osrm | haversine-fallback
    routing: str


def matrices_for(
    points: list[tuple[float, float]], *, speed_kmh: float, detour_factor: float
) -> Matrices:
    """Durations and distances between `points` (lat, lng), by the configured routing."""
    # TEMPORARY until dispatch.matrix lands (solver branch): straight lines only.
    lat = np.radians(np.array([p[0] for p in points], dtype=float))
    lng = np.radians(np.array([p[1] for p in points], dtype=float))
    dlat = lat[:, None] - lat[None, :]
    dlng = lng[:, None] - lng[None, :]
    a = np.sin(dlat / 2) ** 2 + np.cos(lat[:, None]) * np.cos(lat[None, :]) * np.sin(dlng / 2) ** 2
    metres = 2 * 6_371_000 * np.arcsin(np.sqrt(np.clip(a, 0, 1))) * detour_factor
    seconds = metres / (speed_kmh / 3.6)
    return Matrices(
        np.rint(seconds).astype(np.int64), np.rint(metres).astype(np.int64), "haversine"
    )
