-- Another benchmark script (BENCH_PACED_SCRIPT) at a steady pace: each connection waits
-- BENCH_PAUSE_MS between its requests, so the load leaves the machine room (bench/maintenance.py)
-- instead of saturating it; wrk's latencies exclude the pause.
dofile(os.getenv("BENCH_PACED_SCRIPT"))
local pause = tonumber(os.getenv("BENCH_PAUSE_MS") or "0")

function delay()
  return pause
end
