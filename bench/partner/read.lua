-- GET a partner order per request, rotating over the refs in BENCH_REFS (comma-separated).
local api_key = os.getenv("BENCH_API_KEY") or ""
local refs = {}
for ref in string.gmatch(os.getenv("BENCH_REFS") or "", "[^,]+") do
  refs[#refs + 1] = ref
end
local counter = 0

request = function()
  counter = counter + 1
  return wrk.format("GET", wrk.path .. "/" .. refs[(counter % #refs) + 1], {
    ["X-API-Key"] = api_key,
  })
end

function done(summary, latency, requests)
  io.write(string.format(
    'BENCH_JSON {"requests": %d, "duration_us": %d, "non2xx": %d, "socket_errors": %d, "p50_us": %d, "p99_us": %d}\n',
    summary.requests, summary.duration, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
