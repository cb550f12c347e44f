-- wrk's delay() hook: each connection waits WRK_DELAY_MS milliseconds after every answer before its
-- next request (bench/edge/wrk.mjs `delayMs`), so the offered load does not depend on the target.
local ms = tonumber(os.getenv("WRK_DELAY_MS"))

function delay()
  return ms
end
