-- POST a partner order per request with a unique externalRef and Idempotency-Key (docs/performance.md).
-- BENCH_RUN makes the refs of one wrk run unique; BENCH_WINDOWS (comma-separated ISO starts,
-- optional) rotates the delivery window booked.
dofile(os.getenv("BENCH_COMMON_LUA"))
local api_key = os.getenv("BENCH_API_KEY") or ""
local run = os.getenv("BENCH_RUN") or "run"
local windows = env_list("BENCH_WINDOWS")
local counter = 0

request = function()
  counter = counter + 1
  local ref = string.format("B-%s-%d", run, counter)
  local window = ""
  if #windows > 0 then
    window = string.format(',"deliveryWindowStart":"%s"', windows[(counter % #windows) + 1])
  end
  local body = string.format(
    '{"externalRef":"%s","pickupAddress":"Warehouse, Storkower Str. 1","pickupLat":52.53,' ..
    '"pickupLng":13.45,"dropoffAddress":"Alexanderplatz 1","dropoffLat":52.52,' ..
    '"dropoffLng":13.40,"recipientName":"Bench Recipient","recipientPhone":"+491701234567",' ..
    '"packageSize":"small","weightKg":2.5,"temperatureClass":"Chilled","notes":"bench"%s}',
    ref, window)
  return wrk.format("POST", nil, {
    ["Content-Type"] = "application/json",
    ["X-API-Key"] = api_key,
    ["Idempotency-Key"] = ref,
  }, body)
end
