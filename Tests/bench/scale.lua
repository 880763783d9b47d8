-- wrk script for the scale scenario: a different request each time.
--   wrk ... http://127.0.0.1:PORT -s scale.lua -- MODE LEAVES BASE INTERMEDIATES THREADS [START]
-- MODE:
--   hot         /ta/.well-known/openid-federation every time: the reference the fetches are
--               compared with, built by this same script so that wrk's own cost per request
--               (a Lua call and a table index) is the same on both sides of the share
--   fetch-int   /ta/fetch?sub=BASE/int-R            R over [0, INTERMEDIATES) in random order
--   fetch-leaf  /int-(R mod I)/fetch?sub=BASE/leaf-R R over [0, LEAVES) in random order, each
--               thread its share (R = its id - 1 mod THREADS), cycling
--   resolve     /ta/resolve?sub=BASE/leaf-K&trust_anchor=BASE/ta, K = START, START+1, ... in order,
--               each subject once (threads interleave); the thread stops when they run out
--               (without waiting for the answers in flight)
--   sweep       /int-(K mod I)/fetch?sub=BASE/leaf-K for every K once, then the thread stops
-- wrk runs for its whole -d duration even when every thread has stopped, so with a 7th argument
-- DIR a thread that runs out writes DIR/done-<id>: the caller interrupts wrk once all are there.
local next_id = 1
function setup(thread)
    thread:set("id", next_id)
    next_id = next_id + 1
end

function init(args)
    mode = args[1]
    leaves = tonumber(args[2])
    base = args[3]
    ints = tonumber(args[4])
    nthreads = tonumber(args[5])
    k = tonumber(args[6] or "0") + (id - 1)
    exhausted = false
    responses = 0
    -- how many subjects this thread walks (its indices are k, k + nthreads, ... below leaves)
    owned = math.max(0, math.floor((leaves - k + nthreads - 1) / nthreads))
    marker = args[7] and (args[7] .. "/done-" .. id)
    math.randomseed(os.time() * 1000 + id * 7919)
    -- The fetch modes and hot are served from a list of requests built here, so that wrk's cost
    -- per request is one table index on every side of a share (building a random URL in Lua
    -- cost wrk some 3.5 us a request more than the hot one's constant, on the same 2 cores as the
    -- server). fetch-leaf's list is this thread's share of all the leaves (every NTHREADS-th) in
    -- random order, so the threads together still ask for every leaf before any repeats.
    if mode == "hot" or mode == "fetch-int" or mode == "fetch-leaf" then
        pool = {}
        if mode == "hot" then
            pool[1] = wrk.format("GET", "/ta/.well-known/openid-federation")
        else
            local n = (mode == "fetch-int") and ints or leaves
            for i = id - 1, n - 1, nthreads do pool[#pool + 1] = i end
            for i = #pool, 2, -1 do
                local j = math.random(1, i)
                pool[i], pool[j] = pool[j], pool[i]
            end
            for i, r in ipairs(pool) do
                if mode == "fetch-int" then
                    pool[i] = wrk.format("GET", "/ta/fetch?sub=" .. base .. "/int-" .. r)
                else
                    pool[i] = wrk.format("GET", "/int-" .. (r % ints) .. "/fetch?sub=" .. base .. "/leaf-" .. r)
                end
            end
        end
        next_request = 0
    end
    -- resolve: this thread's leaves in order, built here too; once they are all asked the thread
    -- stops (answers still in flight are not counted, which matters only when the leaves run out
    -- before the duration: small BENCH_ENTITIES).
    if mode == "resolve" then
        resolves = {}
        for i = k, leaves - 1, nthreads do
            resolves[#resolves + 1] = wrk.format("GET", "/ta/resolve?sub=" .. base .. "/leaf-" .. i .. "&trust_anchor=" .. base .. "/ta")
        end
        next_request = 0
    end
    -- Only sweep counts answers. Without a response function wrk parses no header or body into
    -- Lua, which would otherwise cost it more per request than the server's fetch (and copy each
    -- 6 KB resolve answer into a Lua string).
    if mode ~= "sweep" then response = nil end
end

local function walk()
    local i = k
    k = k + nthreads
    if i >= leaves then
        exhausted = true
        i = leaves - 1
    end
    return i
end

function request()
    if pool then
        next_request = next_request % #pool + 1
        return pool[next_request]
    elseif mode == "resolve" then
        next_request = next_request + 1
        if next_request >= #resolves then wrk.thread:stop() end
        return resolves[math.min(next_request, #resolves)]
    else
        local i = walk()
        return wrk.format("GET", "/int-" .. (i % ints) .. "/fetch?sub=" .. base .. "/leaf-" .. i)
    end
end

function response(status, headers, body)
    responses = responses + 1
    -- Stop once this thread has had as many answers as it owns subjects, so the requests still in
    -- flight on its other connections are not cut off.
    if exhausted and responses >= owned then
        if marker then
            local f = io.open(marker, "w")
            if f then f:close() end
            marker = nil
        end
        wrk.thread:stop()
    end
end
