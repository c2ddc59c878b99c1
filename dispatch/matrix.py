"""Travel times and distances between a plan's points (docs/contract.md, "Dispatch", travel
times): the straight line times a detour factor at a set speed, or an OSRM-compatible table
server, falling back to the straight line when that server fails.

The functions take plain arguments; the planner reads `ROUTING` and `OSRM_URL` from settings.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import requests

logger = logging.getLogger(__name__)

#: the mean Earth radius (IUGG), in metres
EARTH_RADIUS_M = 6_371_008.8

Routing = Literal["haversine", "osrm", "haversine-fallback"]


@dataclass(frozen=True)
class TravelMatrix:
    durations: np.ndarray  # seconds, int64, square
    distances: np.ndarray  # metres, int64, square
    #: where the figures come from: "haversine", "osrm", or "haversine-fallback" (OSRM failed)
    routing: Routing


def haversine_matrix(
    points: Sequence[tuple[float, float]], *, detour_factor: float, speed_kmh: float
) -> TravelMatrix:
    """Great-circle metres between every pair of `points` (lat, lng) times `detour_factor`, and
    the seconds they take at `speed_kmh`; computed as whole arrays, rounded to integers."""
    coordinates = np.radians(np.asarray(points, dtype=np.float64).reshape(-1, 2))
    lat, lng = coordinates[:, 0], coordinates[:, 1]
    half_dlat = (lat[:, None] - lat[None, :]) / 2
    half_dlng = (lng[:, None] - lng[None, :]) / 2
    a = (
        np.sin(half_dlat) ** 2
        + np.cos(lat)[:, None] * np.cos(lat)[None, :] * np.sin(half_dlng) ** 2
    )
    metres = 2 * EARTH_RADIUS_M * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0))) * detour_factor
    seconds = metres / (speed_kmh / 3.6)
    return TravelMatrix(
        durations=np.rint(seconds).astype(np.int64),
        distances=np.rint(metres).astype(np.int64),
        routing="haversine",
    )


class OsrmError(Exception):
    """The table server's answer is unusable (its reason in the message)."""


def osrm_matrix(
    points: Sequence[tuple[float, float]],
    *,
    osrm_url: str,
    detour_factor: float,
    speed_kmh: float,
    timeout: float = 30.0,
) -> TravelMatrix:
    """The OSRM table between `points` (lat, lng):
    `GET {osrm_url}/table/v1/driving/{lng,lat;...}?annotations=duration,distance`.

    The straight-line matrix, marked "haversine-fallback", when the server cannot be reached,
    answers an error, or answers a table we cannot use.
    """
    if not points:
        return TravelMatrix(np.zeros((0, 0), np.int64), np.zeros((0, 0), np.int64), "osrm")
    try:
        durations, distances = _osrm_table(points, osrm_url=osrm_url, timeout=timeout)
    except (requests.RequestException, OsrmError) as error:
        logger.warning("OSRM table failed, straight lines instead: %s", error)
        fallback = haversine_matrix(points, detour_factor=detour_factor, speed_kmh=speed_kmh)
        return TravelMatrix(fallback.durations, fallback.distances, "haversine-fallback")
    return TravelMatrix(durations, distances, "osrm")


def travel_matrix(
    points: Sequence[tuple[float, float]],
    *,
    routing: str,
    osrm_url: str,
    detour_factor: float,
    speed_kmh: float,
    timeout: float = 30.0,
) -> TravelMatrix:
    """The matrix `routing` ("haversine" or "osrm", the `ROUTING` setting) asks for."""
    if routing == "osrm" and osrm_url:
        return osrm_matrix(
            points,
            osrm_url=osrm_url,
            detour_factor=detour_factor,
            speed_kmh=speed_kmh,
            timeout=timeout,
        )
    return haversine_matrix(points, detour_factor=detour_factor, speed_kmh=speed_kmh)


def _osrm_table(
    points: Sequence[tuple[float, float]], *, osrm_url: str, timeout: float
) -> tuple[np.ndarray, np.ndarray]:
    coordinates = ";".join(f"{lng:.6f},{lat:.6f}" for lat, lng in points)
    response = requests.get(
        f"{osrm_url.rstrip('/')}/table/v1/driving/{coordinates}",
        params={"annotations": "duration,distance"},
        timeout=timeout,
    )
    if response.status_code != 200:
        raise OsrmError(f"status {response.status_code}")
    try:
        body = response.json()
    except ValueError as error:
        raise OsrmError("the answer is not JSON") from error
    if not isinstance(body, dict) or body.get("code") != "Ok":
        code = body.get("code") if isinstance(body, dict) else None
        raise OsrmError(f"code {code!r}")
    return (
        _square(body.get("durations"), len(points), "durations"),
        _square(body.get("distances"), len(points), "distances"),
    )


def _square(table: object, size: int, name: str) -> np.ndarray:
    """`table` as a size x size matrix of non-negative integers, or OsrmError saying why not."""
    try:
        # a null cell (no route between two points) becomes NaN here, refused below
        matrix = np.array(table, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise OsrmError(f"{name}: not a table of numbers") from error
    if matrix.shape != (size, size):
        raise OsrmError(f"{name}: shape {matrix.shape}, not ({size}, {size})")
    if not np.isfinite(matrix).all() or (matrix < 0).any():
        raise OsrmError(f"{name}: a cell is empty, infinite or negative")
    return np.rint(matrix).astype(np.int64)
