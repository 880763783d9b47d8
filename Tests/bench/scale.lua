-- wrk script for the scale scenario: a different request each time.
--   wrk ... http://127.0.0.1:PORT -s scale.lua -- MODE LEAVES BASE INTERMEDIATES THREADS [START]
-- MODE:
--   hot         /ta/.well-known/openid-federation every time: the reference the fetches are
--               compared with, built by this same script so that wrk's own cost per request
--               (a Lua call and a formatted request) is the same on both sides of the share
--   fetch-int   /ta/fetch?sub=BASE/int-R            R random in [0, INTERMEDIATES)
--   fetch-leaf  /int-(R mod I)/fetch?sub=BASE/leaf-R R random in [0, LEAVES)
--   resolve     /ta/resolve?sub=BASE/leaf-K&trust_anchor=BASE/ta, K = START, START+1, ... in order,
--               each subject once (threads interleave); the thread stops when they run out
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
    -- Only resolve and sweep count answers. Without a response function wrk parses no header
    -- or body into Lua, which would otherwise cost it more per request than the server's fetch.
    if mode ~= "resolve" and mode ~= "sweep" then response = nil end
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
    if mode == "hot" then
        return wrk.format("GET", "/ta/.well-known/openid-federation")
    elseif mode == "fetch-int" then
        return wrk.format("GET", "/ta/fetch?sub=" .. base .. "/int-" .. math.random(0, ints - 1))
    elseif mode == "fetch-leaf" then
        local r = math.random(0, leaves - 1)
        return wrk.format("GET", "/int-" .. (r % ints) .. "/fetch?sub=" .. base .. "/leaf-" .. r)
    elseif mode == "resolve" then
        return wrk.format("GET", "/ta/resolve?sub=" .. base .. "/leaf-" .. walk() .. "&trust_anchor=" .. base .. "/ta")
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
