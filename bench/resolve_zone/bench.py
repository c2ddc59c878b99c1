"""Resolve-zone cost for organizations with 1, 100 and 1,000 zones (docs/performance.md).

    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/delivery_bench
    .venv/bin/python manage.py migrate
    .venv/bin/python bench/resolve_zone/bench.py          # in process
    .venv/bin/python bench/resolve_zone/bench.py --wrk    # also gunicorn + wrk
    (docs/performance.md)

Creates (once) three organizations `bench-zones-<n>` whose zones are 16-sided polygons of about
300 m radius on a 500 m grid in Berlin, and a `standard` key for each. Then, for four kinds of
point (inside a zone: high; 20 m outside one: medium; in a gap between zones: low; 50 km away:
404), it times:

- `selector`: `zones.selectors.zone_resolve_point` (warm index: what partner orders and slots
  pay per lookup);
- `endpoint`: `POST /api/promises/resolve-zone` with a `<lat>,<lng>` address, in process through
  Django's test client (authentication, parsing, geocoding, lookup, rendering);
- with `--wrk`: the same endpoint served by gunicorn (sync workers, persistent connections,
  rate limits off), started by this script on the same database, driven by wrk pinned to one
  core (`taskset -c 1 wrk -t1 -c8 -d8s --latency`) with the high, medium and low points in
  rotation; the sizes are interleaved and repeated, and the median of each is reported.

Figures move 25-40 % between runs on this machine (docs/performance.md): compare the ratios to the
1-zone organization within one run, not absolute times across runs.
"""

import argparse
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "delivery.settings")
os.environ.setdefault("RATELIMIT_ENABLE", "false")  # docs/performance.md: limits off for load tests

import django

django.setup()

from django.db import transaction  # noqa: E402
from django.test import Client  # noqa: E402
from geopy.distance import geodesic  # noqa: E402

from delivery.encryption import decrypt_text  # noqa: E402
from tenants import services as tenant_services  # noqa: E402
from tenants.models import ApiKey, Organization  # noqa: E402
from zones import selectors, spatial_index  # noqa: E402
from zones import services as zone_services  # noqa: E402
from zones.models import Zone  # noqa: E402

SIZES = (1, 100, 1000)
ORIGIN = (52.45, 13.25)  # south-west corner of the grid, Berlin
SPACING_M = 500.0
RADIUS_M = 300.0
COLUMNS = 40  # 1,000 zones: 40 x 25 cells, 20 km x 12.5 km


def offset(lat, lng, north_m=0.0, east_m=0.0):
    p = geodesic(meters=abs(north_m)).destination((lat, lng), 0 if north_m >= 0 else 180)
    p = geodesic(meters=abs(east_m)).destination(
        (p.latitude, p.longitude), 90 if east_m >= 0 else 270
    )
    return p.latitude, p.longitude


def cell_centre(i: int):
    row, column = divmod(i, COLUMNS)
    return offset(*ORIGIN, north_m=row * SPACING_M, east_m=column * SPACING_M)


def blob(i: int) -> dict:
    """A 16-sided, slightly irregular polygon of about RADIUS_M around cell i's centre."""
    rng = random.Random(i)
    lat, lng = cell_centre(i)
    ring = []
    for k in range(16):
        angle = 2 * math.pi * k / 16
        r = RADIUS_M * rng.uniform(0.9, 1.0)
        p = offset(lat, lng, north_m=r * math.cos(angle), east_m=r * math.sin(angle))
        ring.append([p[1], p[0]])
    ring.append(ring[0])
    return {"type": "Polygon", "coordinates": [ring]}


def organization_with_zones(n: int) -> tuple[Organization, str]:
    slug = f"bench-zones-{n}"
    organization = Organization.objects.filter(slug=slug).first()
    if organization is None:
        organization = tenant_services.organization_create(name=f"Bench {n} zones", slug=slug)
    if Zone.objects.filter(organization=organization).count() != n:
        print(f"creating {n} zones for {slug} ...", flush=True)
        with transaction.atomic():
            Zone.objects.filter(organization=organization).delete()
            for i in range(n):
                zone_services.zone_create(
                    organization_id=organization.id, name=f"Zone {i:04d}", geodata=blob(i)
                )
    key = ApiKey.objects.filter(
        organization=organization, platform="standard", is_active=True
    ).first()
    if key is None:
        value = tenant_services.api_key_create(
            organization_id=organization.id, name="bench", platform="standard"
        ).value
    else:
        value = decrypt_text(key.encrypted_value)
    return organization, value


def scenario_points(n: int, count: int = 50) -> dict[str, list[tuple[float, float]]]:
    rng = random.Random(n)
    cells = [rng.randrange(n) for _ in range(count)]
    gap_cells = [
        c for c in (rng.randrange(n) for _ in range(count * 4)) if c % COLUMNS < COLUMNS - 1
    ]
    gap_cells = (gap_cells or [0] * count)[:count] if n > 1 else [0] * count
    return {
        "high (inside)": [cell_centre(c) for c in cells],
        # Due east of the centre is a vertex (k = 4) at 0.9-1.0 R: 20 m beyond R is outside.
        "medium (20 m out)": [offset(*cell_centre(c), east_m=RADIUS_M + 20) for c in cells],
        # The middle of a grid square: ~55-85 m from the nearest zone edge.
        "low (gap)": [
            offset(*cell_centre(c), north_m=SPACING_M / 2, east_m=SPACING_M / 2) for c in gap_cells
        ],
        "404 (50 km away)": [offset(*cell_centre(c), north_m=-50_000) for c in cells],
    }


def timed(call, points, rounds: int) -> list[float]:
    """Microseconds per call, one sample per call, after a warm-up pass."""
    for point in points:
        call(point)
    samples = []
    for _ in range(rounds):
        for point in points:
            start = time.perf_counter()
            call(point)
            samples.append((time.perf_counter() - start) * 1e6)
    return samples


def summary(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    return (
        statistics.mean(ordered),
        ordered[len(ordered) // 2],
        ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
    )


WRK_LUA = """
local bodies = {%(bodies)s}
local i = 0
request = function()
  i = i %% #bodies + 1
  return wrk.format("POST", "/api/promises/resolve-zone",
    {["Content-Type"] = "application/json", ["X-API-Key"] = "%(key)s"}, bodies[i])
end
"""


def start_gunicorn(port: int, workers: int) -> subprocess.Popen:
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "RATELIMIT_ENABLE": "false",
        "CONN_MAX_AGE": "600",
        "LOG_LEVEL": "WARNING",
    }
    gunicorn = [
        str(root / ".venv" / "bin" / "gunicorn"),
        "delivery.wsgi:application",
        f"--bind=127.0.0.1:{port}",
        f"--workers={workers}",
        "--worker-class=sync",
    ]
    process = subprocess.Popen(
        gunicorn,
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                return process
        except OSError:
            time.sleep(0.3)
    stop(process)
    raise SystemExit("gunicorn did not start")


def stop(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


def wrk_run(port: int, key: str, points, seconds: int) -> dict:
    bodies = ", ".join(
        json.dumps(json.dumps({"address": f"{lat:.7f},{lng:.7f}"})) for lat, lng in points
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_LUA % {"bodies": bodies, "key": key})
    command = ["wrk", "-t1", "-c8", f"-d{seconds}s", "--latency", "-s", script.name]
    if shutil.which("taskset"):
        command = ["taskset", "-c", "1", *command]
    output = subprocess.run(
        [*command, f"http://127.0.0.1:{port}"],
        capture_output=True,
        text=True,
        timeout=seconds + 30,
        check=True,
    ).stdout
    os.unlink(script.name)

    def latency_ms(label: str) -> float:
        match = re.search(rf"{label}%\s+([\d.]+)(us|ms|s)", output)
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
        "p50": latency_ms(" 50"),
        "p99": latency_ms(" 99"),
        "non2xx": int(non_2xx.group(1)) if non_2xx else 0,
    }


def wrk_table(organizations, repeats: int, seconds: int, workers: int) -> None:
    port = 8731
    server = start_gunicorn(port, workers)
    try:
        runs: dict[int, list[dict]] = {n: [] for n in organizations}
        for _ in range(repeats):
            for n, (_organization, key) in organizations.items():  # interleaved
                scenarios = scenario_points(n)
                points = [
                    point
                    for name in ("high (inside)", "medium (20 m out)", "low (gap)")
                    for point in scenarios[name]
                ]
                runs[n].append(wrk_run(port, key, points, seconds))
    finally:
        stop(server)
    print()
    print(f"wrk against gunicorn ({workers} sync workers), median of {repeats} x {seconds}s runs:")
    header = ("zones", "req/s", "p50 ms", "p99 ms", "non-2xx", "this / 1 zone")
    print("{:>5} {:>9} {:>8} {:>8} {:>8} {:>14}".format(*header))
    base = statistics.median(run["rps"] for run in runs[min(runs)])
    for n, results in runs.items():
        rps = statistics.median(run["rps"] for run in results)
        p50 = statistics.median(run["p50"] for run in results)
        p99 = statistics.median(run["p99"] for run in results)
        non2xx = sum(run["non2xx"] for run in results)
        print(f"{n:>5} {rps:>9.0f} {p50:>8.2f} {p99:>8.2f} {non2xx:>8} {rps / base:>14.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=20, help="passes over 50 points (default 20)")
    parser.add_argument(
        "--wrk", action="store_true", help="also gunicorn + wrk (docs/performance.md)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="wrk runs per size (default 3)")
    parser.add_argument("--seconds", type=int, default=8, help="seconds per wrk run (default 8)")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers (default 3)")
    args = parser.parse_args()

    organizations = {n: organization_with_zones(n) for n in SIZES}
    client = Client()
    rows = []
    for n, (organization, key) in organizations.items():
        # Index build: what the first lookup after a zone change costs (one query + shapely).
        start = time.perf_counter()
        spatial_index.ZoneIndex(list(Zone.objects.filter(organization=organization)))
        build_ms = (time.perf_counter() - start) * 1e3
        for scenario, points in scenario_points(n).items():

            def selector(point, organization=organization):
                selectors.zone_resolve_point(
                    organization_id=organization.id, lat=point[0], lng=point[1]
                )

            def endpoint(point, key=key):
                response = client.post(
                    "/api/promises/resolve-zone",
                    {"address": f"{point[0]:.7f},{point[1]:.7f}"},
                    content_type="application/json",
                    HTTP_X_API_KEY=key,
                )
                assert response.status_code in (200, 404), response.content

            for kind, call in {"selector": selector, "endpoint": endpoint}.items():
                rounds = args.rounds if kind == "selector" else max(1, args.rounds // 4)
                mean, p50, p99 = summary(timed(call, points, rounds))
                rows.append((n, scenario, kind, mean, p50, p99, build_ms))

    base = {(scenario, kind): mean for n, scenario, kind, mean, *_ in rows if n == 1}
    print()
    print(
        f"{'zones':>5}  {'scenario':<18} {'path':<9} {'mean us':>9} {'p50 us':>9} {'p99 us':>9}"
        f" {'1 zone / this':>13} {'index build ms':>15}"
    )
    for n, scenario, kind, mean, p50, p99, build_ms in rows:
        ratio = base[(scenario, kind)] / mean
        print(
            f"{n:>5}  {scenario:<18} {kind:<9} {mean:>9.0f} {p50:>9.0f} {p99:>9.0f}"
            f" {ratio:>13.2f} {build_ms:>15.1f}"
        )

    if args.wrk:
        wrk_table(organizations, args.repeats, args.seconds, args.workers)


if __name__ == "__main__":
    main()
