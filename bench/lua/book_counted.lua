-- bench/slots/book.lua (ERP bookings, BENCH_BOOK_LUA), counting the 400 `Delivery slot is full`
-- answers apart: they are expected once a hot slot is full (written to var/bench-slot-full.txt).
dofile(os.getenv("BENCH_BOOK_LUA"))

local threads = {}
full = 0

function setup(thread)
  table.insert(threads, thread)
end

function response(status, headers, body)
  if status == 400 and body and string.find(body, "Delivery slot is full", 1, true) then
    full = full + 1
  end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do
    total = total + (thread:get("full") or 0)
  end
  local out = io.open(os.getenv("BENCH_FULL_FILE") or "var/bench-slot-full.txt", "w")
  out:write(tostring(total))
  out:close()
  io.write(string.format(
    'BENCH_JSON {"requests": %d, "duration_us": %d, "non2xx": %d, "socket_errors": %d, "p50_us": %d, "p99_us": %d}\n',
    summary.requests, summary.duration, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
