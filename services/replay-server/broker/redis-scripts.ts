/**
 * Lua scripts of the Redis broker (broker/redis.ts). Each runs atomically inside Redis, which is
 * what makes Redis the one source of truth: an offset is issued, stored and appended to the
 * fan-out feed in one step, so every node sees one order per stream. Times come from Redis's
 * own clock (`TIME`), never from a node's, so nodes with skewed clocks agree on TTLs.
 *
 * Key layout under the prefix `P` (docs/replay-server.md, "Redis broker"):
 *   P epoch          string   service epoch, created once (SET NX semantics), survives node restarts
 *   P gen            counter  stream generations: a stream's epoch is `<epoch>-<gen>`
 *   P m:<stream>     hash     {e: stream epoch, l: last offset}
 *   P h:<stream>     stream   history; entry ID `<offset>-1`, fields m (message JSON), t (unix s)
 *   P streams        zset     stream -> last publish (ms): the streams held (count, maxStreams, silence expiry)
 *   P stb            counter  bytes the streams cost (overhead + name each), counted against the byte budget
 *   P sev            counter  whole streams evicted by maxStreams or the byte budget
 *   P feed           stream   fan-out feed every node reads (XREAD); fields n s m e o t x
 *   P feedseq        counter  feed sequence `n`: a reader sees a gap when n jumps
 *   P published      counter  items published
 *   P s:<sid>        string   session identifiers (JSON array), PX = session TTL
 *   P sidx           zset     sid -> expiry ms (oldest change first, for the caps)
 *   P sbytes         hash     sid -> accounted bytes;  P stotal: their sum;  P sevicted: cap evictions
 */

/**
 * ARGV: prefix, fresh epoch (used only if none exists), historyLimit, historyTtlSec, feedMaxLen,
 * item count, idempotency window (ms), per-stream max bytes, whole-history max bytes (0 = none),
 * max streams, per-stream overhead bytes, then 5 per item: stream, message, exclude ('' = none),
 * transient ('1'/'0'), idempotency key ('' = none). An item whose key is already held
 * (`P i:<len>:<stream><key>`, SET NX PX in this same script, so a retry racing its first attempt
 * still stores once) is skipped: not stored, not in the feed, counted in `P dups`.
 * Returns per item {epoch, offset, ts} (stored), {} (transient) or {'dup'}.
 */
export const PUBLISH_LUA = `
local p = ARGV[1]
local t = redis.call('TIME')
local nowS = tonumber(t[1])
local nowMs = nowS * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local feedMax = ARGV[5]
local n = tonumber(ARGV[6])
local idemMs = ARGV[7]
local streamMax = tonumber(ARGV[8])
local totalMax = tonumber(ARGV[9])
local silenceMs = ttl * 10 * 1000
local maxStreams = tonumber(ARGV[10])
local overhead = tonumber(ARGV[11])
-- Byte accounting: P hbytes (all history), field b of P m:<stream>, and P hq, a zset of every
-- stored entry in store order (member '<bytes>:<offset>:<stream epoch>:<stream>'), so the
-- whole-history cap can drop the oldest entry of any stream. Every removal goes through drop().
local function unstore(e, st, id, len, evicted)
  redis.call('DECRBY', p .. 'hbytes', len)
  redis.call('ZREM', p .. 'hq', len .. ':' .. string.match(id, '^(%d+)') .. ':' .. e .. ':' .. st)
  if evicted then
    redis.call('INCRBY', p .. 'hevb', len)
    redis.call('INCR', p .. 'hevm')
  end
end
local function drop(hk, mk, e, st, id, len, evicted)
  redis.call('XDEL', hk, id)
  redis.call('HINCRBY', mk, 'b', -len)
  unstore(e, st, id, len, evicted)
end
-- A whole stream leaves: its entries (evicted unless expired), its keys, its place in P streams
-- and its bytes. A later publish starts it under a new epoch, so an old position cannot alias.
local function forget(st, evicted)
  local hk, mk = p .. 'h:' .. st, p .. 'm:' .. st
  local e = redis.call('HGET', mk, 'e')
  if e then
    local cursor = '-'
    while true do
      local chunk = redis.call('XRANGE', hk, cursor, '+', 'COUNT', 256)
      if #chunk == 0 then break end
      for _, en in ipairs(chunk) do unstore(e, st, en[1], #en[2][2], evicted and tonumber(en[2][4]) >= nowS - ttl) end
      cursor = '(' .. chunk[#chunk][1]
    end
  end
  redis.call('DEL', hk, mk)
  if redis.call('ZREM', p .. 'streams', st) == 1 then redis.call('DECRBY', p .. 'stb', overhead + #st) end
  if evicted then redis.call('INCR', p .. 'sev') end
end
-- The least recently published stream other than \`keep\` (ties share a millisecond), or nil.
local function leastRecent(keep)
  local two = redis.call('ZRANGE', p .. 'streams', 0, 1, 'WITHSCORES')
  if two[1] and two[1] ~= keep then return two[1], tonumber(two[2]) end
  if two[3] and two[3] ~= keep then return two[3], tonumber(two[4]) end
  return nil
end
local epoch = redis.call('GET', p .. 'epoch')
if not epoch then
  epoch = ARGV[2]
  redis.call('SET', p .. 'epoch', epoch)
end
local out = {}
for i = 0, n - 1 do
  local b = 12 + i * 5
  local s, m, x, tr, ik = ARGV[b], ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4]
  local dup = false
  if ik ~= '' and tr ~= '1' then
    dup = not redis.call('SET', p .. 'i:' .. #s .. ':' .. s .. ik, '1', 'NX', 'PX', idemMs)
  end
  if dup then
    redis.call('INCR', p .. 'dups')
    n = n - 1
    out[#out + 1] = { 'dup' }
  elseif tr == '1' then
    local seq = redis.call('INCR', p .. 'feedseq')
    redis.call('XADD', p .. 'feed', 'MAXLEN', '~', feedMax, '*', 'n', seq, 's', s, 'm', m, 'x', x)
    out[#out + 1] = {}
  else
    local seq = redis.call('INCR', p .. 'feedseq')
    local mk = p .. 'm:' .. s
    local hk = p .. 'h:' .. s
    local e = redis.call('HGET', mk, 'e')
    -- Held streams are counted (and bounded) by P streams; a new one pushes the least recently
    -- published out past maxStreams.
    if redis.call('ZADD', p .. 'streams', nowMs, s) == 1 then
      redis.call('INCRBY', p .. 'stb', overhead + #s)
      while redis.call('ZCARD', p .. 'streams') > maxStreams do
        local lru = leastRecent(s)
        if not lru then break end
        forget(lru, true)
      end
    end
    if not e then
      -- A new stream, or one silent for 10 x TTL (its keys expired): a new epoch, so no stale
      -- position can alias a new message.
      e = epoch .. '-' .. redis.call('INCR', p .. 'gen')
      redis.call('DEL', hk)
      redis.call('HSET', mk, 'e', e, 'l', 0)
    end
    local o = redis.call('HINCRBY', mk, 'l', 1)
    redis.call('XADD', hk, o .. '-1', 'm', m, 't', nowS)
    redis.call('HINCRBY', mk, 'b', #m)
    redis.call('INCRBY', p .. 'hbytes', #m)
    redis.call('ZADD', p .. 'hq', seq, #m .. ':' .. o .. ':' .. e .. ':' .. s)
    -- TTL: drop expired entries from the head (reads also skip them, so this only bounds memory);
    -- then the count and byte caps of this stream (the newest entry always stays).
    local minS = nowS - ttl
    for _ = 1, 100000 do
      local head = redis.call('XRANGE', hk, '-', '+', 'COUNT', 1)
      if #head == 0 then break end
      local expired = tonumber(head[1][2][4]) < minS
      local len = redis.call('XLEN', hk)
      local over = len > limit or (len > 1 and tonumber(redis.call('HGET', mk, 'b')) > streamMax)
      if not expired and not over then break end
      drop(hk, mk, e, s, head[1][1], #head[1][2][2], not expired)
    end
    redis.call('PEXPIRE', mk, silenceMs)
    redis.call('PEXPIRE', hk, silenceMs)
    redis.call('XADD', p .. 'feed', 'MAXLEN', '~', feedMax, '*', 'n', seq, 's', s, 'm', m, 'x', x, 'e', e, 'o', o, 't', nowS)
    out[#out + 1] = { e, o, nowS }
  end
end
-- Streams silent for 10 x TTL (their keys expired with PEXPIRE) leave P streams and its bytes,
-- a bounded number per call: the count stays bounded by maxStreams meanwhile.
for _, st in ipairs(redis.call('ZRANGEBYSCORE', p .. 'streams', '-inf', nowMs - silenceMs, 'LIMIT', 0, 100)) do forget(st, false) end
-- The whole-history budget (message bytes + the streams' own): a least recently published stream
-- with no live message goes whole first, then the oldest stored message of any stream (an entry
-- already gone with its stream's keys still held its bytes: they come off too), then, with no
-- message left, the least recently published stream. The last stream published stays.
if totalMax > 0 then
  local keep = ARGV[12 + (tonumber(ARGV[6]) - 1) * 5] or ''
  for _ = 1, 100000 do
    if tonumber(redis.call('GET', p .. 'hbytes') or '0') + tonumber(redis.call('GET', p .. 'stb') or '0') <= totalMax then break end
    local lru, at = leastRecent(keep)
    if lru and (at < (nowS - ttl) * 1000 or redis.call('XLEN', p .. 'h:' .. lru) == 0) then
      forget(lru, true)
    else
      local first = redis.call('ZPOPMIN', p .. 'hq')
      if #first == 0 then
        if not lru then break end
        forget(lru, true)
      else
        local len, off, ep, st = string.match(first[1], '^(%d+):(%d+):([^:]*):(.*)$')
        len = tonumber(len)
        local hk, mk = p .. 'h:' .. st, p .. 'm:' .. st
        if redis.call('HGET', mk, 'e') == ep and #redis.call('XRANGE', hk, off .. '-1', off .. '-1') == 1 then
          redis.call('XDEL', hk, off .. '-1')
          redis.call('HINCRBY', mk, 'b', -len)
          redis.call('INCRBY', p .. 'hevb', len)
          redis.call('INCR', p .. 'hevm')
        end
        redis.call('DECRBY', p .. 'hbytes', len)
      end
    end
  end
end
redis.call('INCRBY', p .. 'published', n)
return out
`;

/**
 * ARGV: prefix, max streams. Entries held in every live stream's history (XLEN, O(1) each; entries
 * past the TTL count until the next publish trims them), or -1 when there are more streams than
 * the max: one /metrics call must not hold Redis for long.
 */
export const HISTORY_COUNT_LUA = `
local p = ARGV[1]
if redis.call('ZCARD', p .. 'streams') > tonumber(ARGV[2]) then return -1 end
local sum = 0
for _, s in ipairs(redis.call('ZRANGE', p .. 'streams', 0, -1)) do
  sum = sum + redis.call('XLEN', p .. 'h:' .. s)
end
return sum
`;

/**
 * ARGV: prefix, stream, mode ('o' after an offset | 's' since unix seconds), epoch, offset-or-since,
 * maxBytes (0 = unpaged), historyTtlSec.
 * Returns {'err', reason} or {'ok', more (0/1), epoch, o1, t1, m1, o2, t2, m2, ...}.
 */
export const HISTORY_LUA = `
local p, s, mode = ARGV[1], ARGV[2], ARGV[3]
local maxBytes = tonumber(ARGV[6])
local minS = tonumber(redis.call('TIME')[1]) - tonumber(ARGV[7])
local mk = p .. 'm:' .. s
local hk = p .. 'h:' .. s
local meta = redis.call('HMGET', mk, 'e', 'l')
local e, last = meta[1], tonumber(meta[2])
local start
if mode == 's' then
  if not e then return { 'ok', 0, '' } end
  local since = tonumber(ARGV[5])
  if since < minS then since = minS end
  start = '-'
  -- First entry at or after since: scan from the head (history is at most historyLimit long).
  local found = nil
  local cursor = '-'
  while not found do
    local chunk = redis.call('XRANGE', hk, cursor, '+', 'COUNT', 128)
    if #chunk == 0 then return { 'ok', 0, e } end
    for _, en in ipairs(chunk) do
      if tonumber(en[2][4]) >= since then found = en[1] break end
    end
    if not found then cursor = '(' .. chunk[#chunk][1] end
  end
  start = found
else
  if not e then return { 'err', 'stream_not_found' } end
  if ARGV[4] ~= e then return { 'err', 'unknown_epoch' } end
  local offset = tonumber(ARGV[5])
  if offset > last then return { 'err', 'offset_ahead' } end
  if offset == last then return { 'ok', 0, e } end
  -- Everything after offset must still be retained (and unexpired), or the backlog has a hole.
  local first = redis.call('XRANGE', hk, (offset + 1) .. '-1', '+', 'COUNT', 1)
  if #first == 0 or first[1][1] ~= (offset + 1) .. '-1' or tonumber(first[1][2][4]) < minS then
    return { 'err', 'offset_evicted' }
  end
  start = first[1][1]
end
local res = { 'ok', 0, e }
local bytes = 0
local count = 0
local cursor = start
while true do
  local chunk = redis.call('XRANGE', hk, cursor, '+', 'COUNT', 128)
  if #chunk == 0 then return res end
  for _, en in ipairs(chunk) do
    local m = en[2][2]
    if maxBytes > 0 and count > 0 and bytes + #m > maxBytes then
      res[2] = 1
      return res
    end
    local id = en[1]
    res[#res + 1] = tonumber(string.sub(id, 1, string.find(id, '-') - 1))
    res[#res + 1] = tonumber(en[2][4])
    res[#res + 1] = m
    bytes = bytes + #m
    count = count + 1
  end
  cursor = '(' .. chunk[#chunk][1]
end
`;

/**
 * Session change. ARGV: prefix, sid, mode ('commit' replaces, 'update' merges), ttlSec,
 * maxSessions, maxStoreBytes, overheadBytes, addCount, removeCount, adds..., removes...
 * Same semantics as the memory broker: a touch or removal does not revive an absent session;
 * the least recently changed sessions are evicted first while a cap is exceeded.
 */
export const SESSION_LUA = `
local p, sid, mode = ARGV[1], ARGV[2], ARGV[3]
local ttlMs = tonumber(ARGV[4]) * 1000
local maxCount, maxBytes, overhead = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local na, nr = tonumber(ARGV[8]), tonumber(ARGV[9])
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local key = p .. 's:' .. sid
local idx, sb, tot = p .. 'sidx', p .. 'sbytes', p .. 'stotal'
local function drop(id)
  local b = redis.call('HGET', sb, id)
  if b then redis.call('DECRBY', tot, b) end
  redis.call('HDEL', sb, id)
  redis.call('ZREM', idx, id)
  redis.call('DEL', p .. 's:' .. id)
end
-- Expired sessions leave the accounting (their keys expired by PX already).
local gone = redis.call('ZRANGEBYSCORE', idx, '-inf', nowMs, 'LIMIT', 0, 256)
for _, id in ipairs(gone) do drop(id) end
local cur = redis.call('GET', key)
local ids = {}
if cur and mode == 'update' then ids = cjson.decode(cur) end
if mode == 'commit' and cur then drop(sid) cur = nil end
if not cur and na == 0 then return 0 end
if nr > 0 then
  local rm = {}
  for i = 1, nr do rm[ARGV[9 + na + i]] = true end
  local kept = {}
  for _, id in ipairs(ids) do if not rm[id] then kept[#kept + 1] = id end end
  ids = kept
end
local have = {}
for _, id in ipairs(ids) do have[id] = true end
for i = 1, na do
  local id = ARGV[9 + i]
  if not have[id] then ids[#ids + 1] = id have[id] = true end
end
local bytes = overhead + #sid
for _, id in ipairs(ids) do bytes = bytes + #id end
local enc = '[]'
if #ids > 0 then enc = cjson.encode(ids) end
redis.call('SET', key, enc, 'PX', ttlMs)
redis.call('ZADD', idx, nowMs + ttlMs, sid)
local before = tonumber(redis.call('HGET', sb, sid) or '0')
redis.call('HSET', sb, sid, bytes)
local total = redis.call('INCRBY', tot, bytes - before)
while redis.call('ZCARD', idx) > maxCount or total > maxBytes do
  local oldest = redis.call('ZRANGE', idx, 0, 0)
  if #oldest == 0 then break end
  drop(oldest[1])
  redis.call('INCR', p .. 'sevicted')
  total = tonumber(redis.call('GET', tot) or '0')
end
return 1
`;
