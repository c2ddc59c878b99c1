-- GET with the X-API-Key header (from the environment) and a JSON summary at the end.
local api_key = os.getenv("BENCH_API_KEY") or ""
wrk.headers["X-API-Key"] = api_key
wrk.method = os.getenv("BENCH_METHOD") or "GET"
if wrk.method == "POST" then
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = os.getenv("BENCH_BODY") or "{}"
end

function done(summary, latency, requests)
  io.write(string.format(
    'BENCH_JSON {"requests": %d, "duration_us": %d, "non2xx": %d, "socket_errors": %d, "p50_us": %d, "p99_us": %d}\n',
    summary.requests, summary.duration, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
