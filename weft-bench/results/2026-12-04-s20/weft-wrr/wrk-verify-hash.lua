-- wrk's requests for the Weft bench, and the check of every answer (wrk -s this-file, LuaJIT).
--
-- Written into the run directory by WrkGenerator, which parses the lines done() prints. It does what the bench's
-- own generator does (LoadConnection): each request POSTs 16 to 64 random alphanumeric characters, and the answer
-- must be status 200 with body String.valueOf(data.hashCode()), which the example provider computes and the
-- example consumer passes on. Java's String hash is h = 31 * h + char over the characters, in 32-bit two's
-- complement; bit.tobit wraps to that exactly, as h * 31 + char stays far below 2^51.
--
-- wrk's response() does not say which connection an answer came on, so each thread counts the answers it is owed
-- (pending[hash], +1 per request sent): an answer must be one of them and settles one. Every answer is checked;
-- what this cannot see is two requests in flight on one thread whose answers were swapped. A request that got a
-- non-200 answer (or none) leaves its entry behind, so only runs with errors are checked less strictly.
--
-- Requests come from a pool of POOL random bodies per thread, taken in turn, so the requests in flight on a thread
-- (a few hundred) all differ; each carries a unique X-Request-Id, as the harness of issue 12 did.

local POOL = 4096
local MIN_DATA, MAX_DATA = 16, 64
local ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

local heads, tails, hashes = {}, {}, {}
local pending = {}
local next_index = 0
local sent = 0
local id_prefix = ""

-- Read by done() through thread:get, so global in each thread's Lua state.
verified = 0
mismatches = 0
bad = {}   -- "STATUS ORIGIN" -> count of answers with a status other than 200

local threads = {}

function setup(thread)
   table.insert(threads, thread)
   thread:set("thread_number", #threads)
end

local function java_hash(s)
   local h = 0
   for i = 1, #s do
      h = bit.tobit(h * 31 + string.byte(s, i))
   end
   return h
end

function init(args)
   local n = thread_number or 0
   math.randomseed(os.time() * 1000 + n)
   id_prefix = "wrk-" .. n .. "-"
   local host = wrk.headers["Host"]
   for i = 1, POOL do
      local length = math.random(MIN_DATA, MAX_DATA)
      local chars = {}
      for j = 1, length do
         local k = math.random(1, #ALPHANUMERIC)
         chars[j] = string.sub(ALPHANUMERIC, k, k)
      end
      local data = table.concat(chars)
      hashes[i] = tostring(java_hash(data))
      heads[i] = "POST " .. wrk.path .. " HTTP/1.1\r\nHost: " .. host
         .. "\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: " .. length
         .. "\r\nX-Request-Id: "
      tails[i] = "\r\n\r\n" .. data
   end
end

function request()
   next_index = next_index % POOL + 1
   sent = sent + 1
   local expected = hashes[next_index]
   pending[expected] = (pending[expected] or 0) + 1
   return heads[next_index] .. id_prefix .. sent .. tails[next_index]
end

-- Who produced a non-200 answer, as LoadConnection.originOf says it: a sidecar names its error kind in
-- x-weft-error, the example provider names itself in x-provider, anything else is the front process.
local function origin(headers)
   local found = "front"
   for name, value in pairs(headers) do
      local lower = string.lower(name)
      if lower == "x-weft-error" then
         return "mesh " .. value
      elseif lower == "x-provider" then
         found = "provider " .. value
      end
   end
   return found
end

function response(status, headers, body)
   if status ~= 200 then
      local key = status .. " " .. origin(headers)
      bad[key] = (bad[key] or 0) + 1
      return
   end
   local owed = body and pending[body]
   if owed then
      pending[body] = owed > 1 and owed - 1 or nil
      verified = verified + 1
   else
      mismatches = mismatches + 1
   end
end

function done(summary, latency, requests)
   local ok, wrong, statuses = 0, 0, {}
   for _, thread in ipairs(threads) do
      ok = ok + (thread:get("verified") or 0)
      wrong = wrong + (thread:get("mismatches") or 0)
      for key, count in pairs(thread:get("bad") or {}) do
         statuses[key] = (statuses[key] or 0) + count
      end
   end
   io.write(string.format("weft-wrk verified=%d mismatches=%d responses=%d duration_us=%d\n", ok, wrong,
      summary.requests, summary.duration))
   for key, count in pairs(statuses) do
      io.write(string.format("weft-wrk status count=%d %s\n", count, key))
   end
end
