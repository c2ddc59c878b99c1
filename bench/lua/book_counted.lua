-- bench/slots/book.lua (ERP bookings, BENCH_BOOK_LUA), counting the 400 `Delivery slot is full`
-- answers apart: they are expected once a hot slot is full. Writes to BENCH_FULL_FILE the count
-- of those, then one line per other non-2xx status with its count and the first body seen.
dofile(os.getenv("BENCH_BOOK_LUA"))

local threads = {}
full = 0
others = {}
bodies = {}

function setup(thread)
  table.insert(threads, thread)
end

function response(status, headers, body)
  if status == 400 and body and string.find(body, "Delivery slot is full", 1, true) then
    full = full + 1
  elseif status >= 300 then
    others[status] = (others[status] or 0) + 1
    bodies[status] = bodies[status] or string.sub(body or "", 1, 200)
  end
end

function done(summary, latency, requests)
  local total = 0
  local lines = {}
  for _, thread in ipairs(threads) do
    total = total + (thread:get("full") or 0)
    local counts, samples = thread:get("others"), thread:get("bodies")
    for status, count in pairs(counts or {}) do
      table.insert(lines, string.format("%d %d %s", status, count, (samples or {})[status] or ""))
    end
  end
  local out = io.open(os.getenv("BENCH_FULL_FILE") or "var/bench-slot-full.txt", "w")
  out:write(tostring(total) .. "\n" .. table.concat(lines, "\n"))
  out:close()
  bench_json(summary, latency)
end
