-- GET a partner order per request, rotating over the refs in BENCH_REFS (comma-separated).
dofile(os.getenv("BENCH_COMMON_LUA"))
local api_key = os.getenv("BENCH_API_KEY") or ""
local refs = env_list("BENCH_REFS")
local counter = 0

request = function()
  counter = counter + 1
  return wrk.format("GET", wrk.path .. "/" .. refs[(counter % #refs) + 1], {
    ["X-API-Key"] = api_key,
  })
end
