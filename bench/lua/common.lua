-- Shared by every wrk script of the benchmarks: harness.wrk points BENCH_COMMON_LUA here and
-- each script starts with `dofile(os.getenv("BENCH_COMMON_LUA"))`.

-- The comma-separated values of an environment variable, as a list.
function env_list(name)
  local values = {}
  for value in string.gmatch(os.getenv(name) or "", "[^,]+") do
    values[#values + 1] = value
  end
  return values
end

-- The one line harness.wrk parses: requests, duration, non-2xx answers, socket errors, p50, p99
-- (and the slowest answer and the timeouts among the socket errors, which bench/maintenance.py
-- reads).
function bench_json(summary, latency)
  io.write(string.format(
    'BENCH_JSON {"requests": %d, "duration_us": %d, "non2xx": %d, "socket_errors": %d, "p50_us": %d, "p99_us": %d, "max_us": %d, "timeouts": %d}\n',
    summary.requests, summary.duration, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99), latency.max, summary.errors.timeout))
end

-- A script that needs more at the end defines its own `done` after this file and calls
-- bench_json itself.
function done(summary, latency, requests)
  bench_json(summary, latency)
end
