"""Travel matrices (docs/contract.md, "Dispatch", travel times): straight lines against known
distances, and an OSRM-compatible table server (a real local HTTP server) with its failures."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import numpy as np
import pytest
from geopy.distance import great_circle

from dispatch.matrix import EARTH_RADIUS_M, haversine_matrix, osrm_matrix, travel_matrix

BERLIN = (52.5200, 13.4050)
PARIS = (48.8566, 2.3522)
LONDON = (51.5074, -0.1278)
ALEXANDERPLATZ = (52.5219, 13.4132)


def test_straight_line_metres_match_the_great_circle_distance():
    matrix = haversine_matrix([BERLIN, PARIS, LONDON], detour_factor=1.0, speed_kmh=36)

    expected = [
        [great_circle(a, b, radius=EARTH_RADIUS_M / 1000).meters for b in (BERLIN, PARIS, LONDON)]
        for a in (BERLIN, PARIS, LONDON)
    ]
    assert np.abs(matrix.distances - np.array(expected)).max() <= 1
    # the published great-circle figures: Berlin-Paris 877.5 km, Paris-London 343.6 km
    assert abs(matrix.distances[0, 1] - 877_500) < 500
    assert abs(matrix.distances[1, 2] - 343_600) < 500
    assert matrix.distances.dtype == np.int64
    assert (np.diag(matrix.distances) == 0).all()
    assert (matrix.distances == matrix.distances.T).all()
    # 36 km/h is 10 m/s
    assert abs(matrix.durations[0, 1] - matrix.distances[0, 1] / 10) <= 1
    assert matrix.routing == "haversine"


def test_detour_factor_and_speed_scale_the_straight_line():
    # one degree of latitude is 111,195 m on the mean Earth
    matrix = haversine_matrix([(0.0, 0.0), (1.0, 0.0)], detour_factor=1.3, speed_kmh=25)

    assert matrix.distances[0, 1] == round(111_195.08 * 1.3)
    assert matrix.durations[0, 1] == round(111_195.08 * 1.3 / (25 / 3.6))


def test_no_points_give_an_empty_matrix():
    matrix = haversine_matrix([], detour_factor=1.3, speed_kmh=25)

    assert matrix.distances.shape == (0, 0)
    assert matrix.durations.shape == (0, 0)


class TableServer(ThreadingHTTPServer):
    """Speaks OSRM's table API, or fails in the way `mode` names."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), TableHandler)
        self.mode = "ok"
        self.requests: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class TableHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        server: TableServer = self.server
        server.requests.append(self.path)
        path = urlsplit(self.path)
        coordinates = [
            tuple(map(float, pair.split(",")))
            for pair in path.path.removeprefix("/table/v1/driving/").split(";")
        ]
        size = len(coordinates)
        durations = [[abs(i - j) * 60.4 for j in range(size)] for i in range(size)]
        distances = [[abs(i - j) * 500 for j in range(size)] for i in range(size)]
        body = {"code": "Ok", "durations": durations, "distances": distances}
        status = 200
        match server.mode:
            case "error":
                status, body = 500, {"code": "InternalError"}
            case "no-table":
                body = {"code": "NoTable", "message": "no route"}
            case "null-cell":
                durations[0][size - 1] = None
            case "wrong-shape":
                body["distances"] = distances[:-1]
            case "not-json":
                self.answer(200, b"<html>gateway</html>")
                return
            case "slow":
                time.sleep(1.5)
            case "closed":
                self.connection.shutdown(socket.SHUT_RDWR)
                return
        self.answer(status, json.dumps(body).encode())

    def answer(self, status: int, payload: bytes):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def table_server():
    server = TableServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


POINTS = [BERLIN, ALEXANDERPLATZ, PARIS]


def test_osrm_table_is_read_from_the_server(table_server):
    matrix = osrm_matrix(
        POINTS, osrm_url=table_server.url + "/", detour_factor=1.3, speed_kmh=25, timeout=1
    )

    assert matrix.routing == "osrm"
    assert matrix.durations.tolist() == [[0, 60, 121], [60, 0, 60], [121, 60, 0]]
    assert matrix.distances.tolist() == [[0, 500, 1000], [500, 0, 500], [1000, 500, 0]]
    # longitude first, as OSRM wants
    assert table_server.requests == [
        "/table/v1/driving/13.405000,52.520000;13.413200,52.521900;2.352200,48.856600"
        "?annotations=duration%2Cdistance"
    ]


@pytest.mark.parametrize(
    "mode", ["error", "no-table", "null-cell", "wrong-shape", "not-json", "slow", "closed"]
)
def test_a_failing_osrm_falls_back_to_straight_lines_and_says_so(table_server, mode):
    table_server.mode = mode

    matrix = osrm_matrix(
        POINTS, osrm_url=table_server.url, detour_factor=1.3, speed_kmh=25, timeout=0.5
    )

    straight = haversine_matrix(POINTS, detour_factor=1.3, speed_kmh=25)
    assert matrix.routing == "haversine-fallback"
    assert (matrix.durations == straight.durations).all()
    assert (matrix.distances == straight.distances).all()
    assert len(table_server.requests) == 1


def test_an_osrm_nobody_listens_on_falls_back():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    matrix = osrm_matrix(
        POINTS, osrm_url=f"http://127.0.0.1:{port}", detour_factor=1.3, speed_kmh=25, timeout=0.5
    )

    assert matrix.routing == "haversine-fallback"


def test_routing_setting_picks_the_source(table_server):
    by_osrm = travel_matrix(
        POINTS, routing="osrm", osrm_url=table_server.url, detour_factor=1.3, speed_kmh=25
    )
    by_line = travel_matrix(
        POINTS, routing="haversine", osrm_url=table_server.url, detour_factor=1.3, speed_kmh=25
    )

    assert by_osrm.routing == "osrm"
    assert by_line.routing == "haversine"
    assert len(table_server.requests) == 1
