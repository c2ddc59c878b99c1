-- ERP bookings (POST /api/integrations/erp/orders): a unique externalRef per request, cycling
-- over the slots in BENCH_SLOTS ("<templateId>|<YYYY-MM-DD>,..."), and a JSON summary at the end.
dofile(os.getenv("BENCH_COMMON_LUA"))
local slots = {}
for _, entry in ipairs(env_list("BENCH_SLOTS")) do
  local template_id, date = string.match(entry, "([^|]+)|([^|]+)")
  table.insert(slots, { template_id, date })
end
local prefix = os.getenv("BENCH_REF_PREFIX") or "BENCH"
local lat = os.getenv("BENCH_LAT") or "0"
local lng = os.getenv("BENCH_LNG") or "0"
local counter = 0

wrk.method = "POST"
wrk.headers["X-API-Key"] = os.getenv("BENCH_API_KEY") or ""
wrk.headers["Content-Type"] = "application/json"

function request()
  counter = counter + 1
  local slot = slots[(counter % #slots) + 1]
  local body = string.format(
    '{"externalRef":"%s-%d","dropoffAddress":"1 Bench Street","dropoffLat":%s,"dropoffLng":%s,'
      .. '"recipientName":"Bench Recipient","recipientPhone":"+491701234567",'
      .. '"deliverySlotTemplateId":"%s","deliverySlotDate":"%s"}',
    prefix, counter, lat, lng, slot[1], slot[2])
  return wrk.format(nil, nil, nil, body)
end
