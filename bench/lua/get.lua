-- GET with the X-API-Key header (from the environment); the JSON summary is common.lua's.
dofile(os.getenv("BENCH_COMMON_LUA"))
local api_key = os.getenv("BENCH_API_KEY") or ""
wrk.headers["X-API-Key"] = api_key
-- A management bearer token, when given (bench/noisy.py).
local bearer = os.getenv("BENCH_BEARER") or ""
if bearer ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. bearer
end
wrk.method = os.getenv("BENCH_METHOD") or "GET"
if wrk.method == "POST" then
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = os.getenv("BENCH_BODY") or "{}"
end
