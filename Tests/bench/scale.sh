#!/usr/bin/env bash
# Scale and slow-host scenarios of `make bench` (run.sh calls this after its hot-URL pairs; it
# also runs alone). Prints a table with goals and PASS/MISS and leaves it, the raw wrk output and
# the number of misses in OUTDIR.
#
#   bash Tests/bench/scale.sh path/to/trustbed OUTDIR
#
# Environment: BENCH_ENTITIES (100000) leaves, BENCH_SECONDS (5) per wrk run, SCALE_ROUNDS (3),
# SCALE_PORT (18082) for trustbed, SLOW_PORT (18083) for the slow host, SCALE_START_LIMIT (300)
# seconds a start may take before the scenario gives up, SCALE_CACHE_MB (unset: the server's
# default of 96 MiB) its --statement-cache-mb. A subordinate statement about a leaf costs about
# 900 bytes as the cache counts it (its JWT's storage and the cache's bookkeeping, which is what
# it takes), so the default holds all 100,000 and a random fetch after the sweep never signs.
#
# Scale: a generated Entities directory (1 TA, 100 intermediates `int-N` under `ta`,
# BENCH_ENTITIES leaves `leaf-N` under `int-(N mod 100)`), fresh Keys. Measured: seconds from exec
# to the first 200 of the TA's entity configuration (first start, then until the server has
# created every key in the background; then a restart with the keys present); idle CPU over 10 s;
# `fetch` for random subjects as a share of the hot entity configuration in the same round (both
# requested through scale.lua, so wrk spends the same per request on each side: a Lua request
# and no Lua response handler, which on the fetch side alone had cost wrk more than the server);
# cold resolves/s (each leaf resolved once); VmRSS after a sweep that fetched every leaf's
# subordinate statement once.
# Random leaves are fetched twice: before the sweep, when most requests are a leaf's first and
# sign its statement (reported, no goal: that is the cost of signing, which cold resolves and the
# sweep time measure too), and after it, when every statement has been signed once and is served
# until it nears expiry, as on a server that has run for a while. Only the second isolates what
# the goal is about: that routing and serving cost does not grow with the number of entities.
# Slow host: a Python server answering after 5 s holds remote subordinates of the TA; while 32
# resolves wait on it, wrk measures /health p99, compared with /health p99 at rest, in SLOW_ROUNDS
# (3) rounds of fresh subjects; the factor is the median of the rounds.
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
bin=${1:?usage: scale.sh BINARY OUTDIR}
out=${2:?usage: scale.sh BINARY OUTDIR}
leaves=${BENCH_ENTITIES:-100000}
secs=${BENCH_SECONDS:-5}
rounds=${SCALE_ROUNDS:-3}
port=${SCALE_PORT:-18082}
slow_port=${SLOW_PORT:-18083}
ints=100
slow_count=32
slow_delay=5
slow_rounds=${SLOW_ROUNDS:-3}
# /health is measured for this long at rest and while the resolves wait (see the slow-host part).
slow_window=3
start_limit=${SCALE_START_LIMIT:-300}
cache_mb=${SCALE_CACHE_MB:-}
cache_args=()
[ -n "$cache_mb" ] && cache_args=(--statement-cache-mb "$cache_mb")
base="http://127.0.0.1:$port"

die() { echo "scale: $*" >&2; exit 1; }
. Tests/bench/lib.sh
case "$leaves$secs$rounds$cache_mb$slow_rounds" in *[!0-9]*) die "BENCH_ENTITIES, BENCH_SECONDS, SCALE_ROUNDS, SCALE_CACHE_MB and SLOW_ROUNDS must be whole numbers" ;; esac
[ "$leaves" -ge "$ints" ] || die "BENCH_ENTITIES must be at least $ints"
for tool in wrk curl python3; do command -v "$tool" >/dev/null || die "$tool not found"; done
[ -x "$bin" ] || die "no executable at $bin"
for p in "$port" "$slow_port"; do
    port_in_use "$p" && die "something already answers on 127.0.0.1:$p (set SCALE_PORT / SLOW_PORT)"
done

mkdir -p "$out"
scratch

misses=0
table="$out/scale.txt"
: >"$table"
# row NAME VALUE GOAL RESULT; a RESULT starting with MISS or NO DATA counts as a miss.
row() {
    printf '%-46s %16s %12s  %s\n' "$1" "$2" "$3" "$4" | tee -a "$table"
    case "$4" in MISS*|"NO DATA"*) misses=$((misses + 1)) ;; esac
}
judge() { # judge VALUE OP GOAL -> PASS, MISS or NO DATA
    if [ -z "$1" ] || [ "$1" = "-" ]; then echo "NO DATA"; return; fi
    if awk -v v="$1" -v g="$3" -v op="$2" 'BEGIN { exit !((op == ">=") ? (v >= g) : (v <= g)) }'; then echo PASS; else echo MISS; fi
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
rss_mib() { awk '$1 == "VmRSS:" { printf "%.1f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || true; }

# --- generate ------------------------------------------------------------------------------
echo "scale scenario: 1 TA, $ints intermediates, $leaves leaves (+ $((slow_count * slow_rounds)) remote subordinates on a slow host)"
t=$(now)
python3 Tests/bench/gen_entities.py "$tmp/state/Entities" "$leaves" --intermediates "$ints" \
    --remote-base "http://127.0.0.1:$slow_port" --remote-count "$((slow_count * slow_rounds))"
echo "  generated $((leaves + ints + 1)) entity files in $(since "$t") s"
mkdir -p "$tmp/state/Keys"

server_pid=""
start_server() {
    "$bin" serve --entities "$tmp/state/Entities" --keys "$tmp/state/Keys" --database "$tmp/state/trustbed.sqlite" \
        --host 127.0.0.1 --port "$port" --base-url "$base" "${cache_args[@]}" \
        --log-level notice >>"$tmp/trustbed.log" 2>&1 &
    server_pid=$!
    pids+=("$server_pid")
}
stop_server() {
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
}
# Starts trustbed and sets ready_s to the seconds from exec to the first 200 of the TA's entity
# configuration ("" if none within SCALE_START_LIMIT s). Not called in $(...): server_pid must stay set.
ready_s=""
time_to_ready() {
    local t code
    ready_s=""
    t=$(now)
    start_server
    for _ in $(seq 1 $((start_limit * 50))); do
        kill -0 "$server_pid" 2>/dev/null || return 0
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$base/ta/.well-known/openid-federation" || true)
        if [ "$code" = 200 ]; then ready_s=$(since "$t"); return 0; fi
        sleep 0.02
    done
}

# --- (a) start-up ---------------------------------------------------------------------------
echo
printf '%-46s %16s %12s  %s\n' measure value goal result | tee -a "$table"
t_first=$(now)
time_to_ready
first=$ready_s
if [ -z "$first" ]; then
    tail -n 30 "$tmp/trustbed.log" >&2
    row "first start to first TA EC 200 (s)" "-" "-" "NO DATA (no 200 within $start_limit s; scenarios skipped)"
    echo "$misses" >"$out/misses"
    exit 0
fi
# The first start creates every missing key in the background after it answers; wait for that
# (the server logs it), so the restart below really has every key present.
keys_done=""
for _ in $(seq 1 $((start_limit * 10))); do
    grep -q "created the keys of" "$tmp/trustbed.log" && { keys_done=$(since "$t_first"); break; }
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
keys_after_first=$(find "$tmp/state/Keys" -name '*.pem' | wc -l)
stop_server
time_to_ready
second=$ready_s
[ -n "$second" ] || { tail -n 30 "$tmp/trustbed.log" >&2; die "trustbed did not restart"; }
row "first start to first TA EC 200 (s)" "$first" "-" "-"
row "first start: every key created (s)" "${keys_done:--}" "-" "($keys_after_first key files)"
# The issue's goals: first 200 within 1 s at 20,000 entities, within 3 s at 100,000.
restart_goal=3; [ "$leaves" -le 20000 ] && restart_goal=1
row "restart with keys present (s)" "$second" "<=$restart_goal" "$(judge "$second" "<=" "$restart_goal")"
row "RSS after restart (MiB)" "$(rss_mib "$server_pid")" "-" "-"

# --- (b) idle CPU ---------------------------------------------------------------------------
sleep 2
hz=$(getconf CLK_TCK)
c0=$(cpu_ticks "$server_pid")
sleep 10
c1=$(cpu_ticks "$server_pid")
idle=$(awk -v a="$c0" -v b="$c1" -v hz="$hz" 'BEGIN { printf "%.2f", 100 * (b - a) / hz / 10 }')
row "idle CPU over 10 s (% of a core)" "$idle" "-" "-"

# --- (b2) explorer pages ------------------------------------------------------------------------
# What a browser gets (issue 19): the landing page at / (Accept: text/html) and the tree page of
# one intermediate (BENCH_ENTITIES / 100 leaves). The first request of each builds what the
# explorer keeps per host (the counts, each superior's subordinates in order), reported on its
# own; the figure is the median curl time_total of the 20 after it. Goal: 50 ms at 100,000.
explorer_get() { # explorer_get URL -> "HTTP-CODE MILLISECONDS"
    curl -s -o /dev/null -H 'Accept: text/html' --max-time 20 -w '%{http_code} %{time_total}' "$1" 2>/dev/null \
        | awk '{ printf "%s %.1f", $1, $2 * 1000 }' || true
}
explorer_row() { # explorer_row LABEL URL
    local first times="" bad=0 code ms
    read -r code first <<<"$(explorer_get "$2")"
    [ "$code" = 200 ] || bad=$((bad + 1))
    for _ in $(seq 1 20); do
        read -r code ms <<<"$(explorer_get "$2")"
        [ "$code" = 200 ] || bad=$((bad + 1))
        times+=" $ms"
    done
    # shellcheck disable=SC2086
    local m; m=$(median $times)
    local result; result=$(judge "${m:--}" "<=" 50)
    [ "$bad" -gt 0 ] && result="MISS ($bad non-200)"
    row "$1" "${m:--}" "<=50" "$result (first $first ms)"
}
explorer_row "explorer: GET / as a browser (ms, median 20)" "$base/"
explorer_row "explorer: tree of int-1, $((leaves / ints)) leaves (ms)" "$base/explorer/tree?id=$base/int-1"

# --- (c) fetch for random subjects vs the hot entity configuration --------------------------
lua=Tests/bench/scale.lua
run() { # run OUTFILE WRK-ARGS...
    local f=$1; shift
    timeout $((secs + 60)) wrk -t2 -c32 -d"${secs}s" --latency "$@" >"$f" 2>&1 || true
}
for what in hot fetch-int fetch-leaf; do  # warm-up
    timeout 30 wrk -t2 -c32 -d1s "$base" -s "$lua" -- "$what" "$leaves" "$base" "$ints" 2 >/dev/null 2>&1 || true
done
declare -A ratios rpss errs
for r in $(seq 1 "$rounds"); do
    order="hot fetch-int fetch-leaf"
    [ $((r % 2)) -eq 0 ] && order="fetch-leaf fetch-int hot"
    for what in $order; do
        f="$out/wrk-scale-$what-$r.txt"
        run "$f" "$base" -s "$lua" -- "$what" "$leaves" "$base" "$ints" 2
        rpss[$what]+=" $(wrk_rps "$f")"
        errs[$what]=$(( ${errs[$what]:-0} + $(wrk_errors "$f") ))
    done
    h=$(wrk_rps "$out/wrk-scale-hot-$r.txt")
    for what in fetch-int fetch-leaf; do
        v=$(wrk_rps "$out/wrk-scale-$what-$r.txt")
        [ -n "$h" ] && [ -n "$v" ] && ratios[$what]+=" $(awk -v v="$v" -v h="$h" 'BEGIN { printf "%.3f", v / h }')"
    done
done
# shellcheck disable=SC2086
row "hot TA entity configuration (req/s)" "$(median ${rpss[hot]:-})" "-" "${errs[hot]:-0} errors"
for what in fetch-int fetch-leaf; do
    label="fetch: TA about random intermediate"
    [ "$what" = fetch-leaf ] && label="fetch: random leaf, mostly first fetches"
    # shellcheck disable=SC2086
    ratio=$(median ${ratios[$what]:-})
    result=$(judge "$ratio" ">=" 0.7)
    # Before the sweep most leaf fetches sign: reported, judged after the sweep (see the top).
    [ "$what" = fetch-leaf ] && result="-"
    if [ "${errs[$what]:-0}" -gt 0 ]; then
        case $result in PASS*) result="MISS (errors)" ;; esac
        result="$result, ${errs[$what]} errors/non-2xx"
    fi
    # shellcheck disable=SC2086
    row "$label (req/s)" "$(median ${rpss[$what]:-})" "-" "-"
    goal=">=0.7"; [ "$what" = fetch-leaf ] && goal="-"
    row "  as a share of the hot EC" "${ratio:--}" "$goal" "$result"
done

# --- (d) cold resolves --------------------------------------------------------------------------
f="$out/wrk-scale-resolve.txt"
timeout $((secs * 2 + 60)) wrk -t2 -c16 -d"$((secs * 2))s" --latency "$base" -s "$lua" -- resolve "$leaves" "$base" "$ints" 2 0 >"$f" 2>&1 || true
cold=$(wrk_rps "$f")
row "cold resolves, distinct leaves (req/s)" "${cold:--}" ">=5000" "$(judge "${cold:--}" ">=" 5000) ($(wrk_errors "$f") errors, p99 $(wrk_p99_ms "$f") ms)"

# --- (e) RSS after a sweep of every leaf's subordinate statement ------------------------------
mkdir -p "$tmp/sweep"
f="$out/wrk-scale-sweep.txt"
t=$(now)
wrk -t2 -c16 -d900s "$base" -s "$lua" -- sweep "$leaves" "$base" "$ints" 2 0 "$tmp/sweep" >"$f" 2>&1 &
sweep_pid=$!
pids+=("$sweep_pid")
while kill -0 "$sweep_pid" 2>/dev/null && [ "$(find "$tmp/sweep" -name 'done-*' | wc -l)" -lt 2 ]; do sleep 0.2; done
kill -INT "$sweep_pid" 2>/dev/null || true
wait "$sweep_pid" 2>/dev/null || true
sweep_s=$(since "$t")
rss=$(rss_mib "$server_pid")
row "sweep: every leaf fetched once (s)" "$sweep_s" "-" "$(awk '/requests in/ { print $1 }' "$f") requests, $(wrk_errors "$f") errors"
row "RSS after the sweep (MiB)" "${rss:--}" "<=300" "$(judge "${rss:--}" "<=" 300)"

# --- (f) fetch for random leaves once each has been signed, vs the hot entity configuration ------
timeout 30 wrk -t2 -c32 -d1s "$base" -s "$lua" -- fetch-leaf "$leaves" "$base" "$ints" 2 >/dev/null 2>&1 || true
steady_rps="" steady_hot="" steady_ratios="" steady_errs=0
for r in $(seq 1 "$rounds"); do
    order="hot fetch-leaf"
    [ $((r % 2)) -eq 0 ] && order="fetch-leaf hot"
    for what in $order; do
        f="$out/wrk-scale-steady-$what-$r.txt"
        run "$f" "$base" -s "$lua" -- "$what" "$leaves" "$base" "$ints" 2
        steady_errs=$((steady_errs + $(wrk_errors "$f")))
    done
    h=$(wrk_rps "$out/wrk-scale-steady-hot-$r.txt")
    v=$(wrk_rps "$out/wrk-scale-steady-fetch-leaf-$r.txt")
    steady_hot+=" $h" steady_rps+=" $v"
    [ -n "$h" ] && [ -n "$v" ] && steady_ratios+=" $(awk -v v="$v" -v h="$h" 'BEGIN { printf "%.3f", v / h }')"
done
# shellcheck disable=SC2086
ratio=$(median $steady_ratios)
result=$(judge "$ratio" ">=" 0.7)
if [ "$steady_errs" -gt 0 ]; then
    case $result in PASS*) result="MISS (errors)" ;; esac
    result="$result, $steady_errs errors/non-2xx"
fi
# shellcheck disable=SC2086
row "after the sweep: hot TA EC (req/s)" "$(median $steady_hot)" "-" "-"
# shellcheck disable=SC2086
row "fetch: random leaf, each signed before (req/s)" "$(median $steady_rps)" "-" "-"
row "  as a share of the hot EC" "${ratio:--}" ">=0.7" "$result"
row "RSS after these fetches (MiB)" "$(rss_mib "$server_pid")" "-" "-"

# --- slow host ---------------------------------------------------------------------------------
# SLOW_ROUNDS rounds, each: /health at rest, then /health while slow_count fresh resolves wait
# (subjects not asked before, so none is answered from the remembered failures). A p99 under a
# saturating closed-loop load is mostly the scheduler's: one round moved by 2-3x between runs
# with the server idle in both (callgrind: the same instructions per /health request with and
# without 32 resolves waiting), so the factor is the median over the rounds. The busy run starts
# once the curl processes that ask are running (they are the benchmark's, not the server's) and
# ends before the slow host answers: 1 + 3 s of its 5. A 4 s window ended just as the answers
# came back, and in most rounds it measured the server answering 32 resolves and 32 curl
# processes exiting instead (84 of 96 resolves had finished when it ended; one round's /health
# rate fell from 118,000 to 66,000 req/s). Both windows last 3 s, so their p99s compare.
echo
echo "slow host: $slow_count resolves for subjects on a host that answers after ${slow_delay} s, $slow_rounds rounds"
python3 Tests/bench/slow_host.py "$slow_port" "$slow_delay" >"$tmp/slow_host.log" 2>&1 &
pids+=("$!")
for _ in $(seq 1 50); do curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$slow_port/" && break; sleep 0.1; done
health="$base/health"
# Let the sweep's aftermath (freed memory, the access of 100,000 entries) settle first: the
# at-rest p99 is the baseline the busy one is judged against.
sleep 5
idle_p99s="" busy_p99s="" factors="" idle_rpss="" busy_rpss="" still=0 json_errors=0 slowest=0 codes=""
for r in $(seq 1 "$slow_rounds"); do
    idle_f="$out/wrk-slow-health-idle-$r.txt"
    busy_f="$out/wrk-slow-health-busy-$r.txt"
    timeout 60 wrk -t1 -c4 -d"${slow_window}s" --latency "$health" >"$idle_f" 2>&1 || true
    mkdir -p "$tmp/resolves-$r"
    for k in $(seq 0 $((slow_count - 1))); do
        curl -s -o "$tmp/resolves-$r/$k.body" -w '%{http_code} %{time_total}\n' --max-time 30 \
            "$base/ta/resolve?sub=http://127.0.0.1:$slow_port/slow-$(( (r - 1) * slow_count + k ))&trust_anchor=$base/ta" \
            >"$tmp/resolves-$r/$k.status" 2>/dev/null &
        pids+=("$!")
    done
    sleep 1
    timeout 60 wrk -t1 -c4 -d"${slow_window}s" --latency --timeout 10s "$health" >"$busy_f" 2>&1 || true
    for k in $(seq 0 $((slow_count - 1))); do [ -s "$tmp/resolves-$r/$k.status" ] || still=$((still + 1)); done
    wait_until=$(( $(date +%s) + 40 ))
    while [ "$(find "$tmp/resolves-$r" -name '*.status' -size +0 | wc -l)" -lt "$slow_count" ] && [ "$(date +%s)" -lt "$wait_until" ]; do sleep 0.2; done
    i=$(wrk_p99_ms "$idle_f"); b=$(wrk_p99_ms "$busy_f")
    idle_p99s+=" $i" busy_p99s+=" $b" idle_rpss+=" $(wrk_rps "$idle_f")" busy_rpss+=" $(wrk_rps "$busy_f")"
    # wrk prints a 0 p99 when nothing answered at all: that is the worst case, not the best.
    if awk -v r="$(wrk_rps "$busy_f")" 'BEGIN { exit !(r + 0 == 0) }'; then factors+=" 999"
    elif [ -n "$i" ] && [ -n "$b" ]; then factors+=" $(awk -v a="$i" -v b="$b" 'BEGIN { printf "%.2f", (a > 0) ? b / a : 0 }')"; fi
    for k in $(seq 0 $((slow_count - 1))); do
        read -r code took <"$tmp/resolves-$r/$k.status" 2>/dev/null || { code=000; took=0; }
        codes+=" $code"
        grep -q '"error"' "$tmp/resolves-$r/$k.body" 2>/dev/null && json_errors=$((json_errors + 1))
        slowest=$(awk -v a="$slowest" -v b="${took:-0}" 'BEGIN { print (b > a) ? b : a }')
    done
done
# shellcheck disable=SC2086
factor=$(median $factors)
factor_result=$(judge "${factor:--}" "<=" 2)
[ "$factor" = 999 ] && { factor=-; factor_result="MISS (no /health answer while resolves waited)"; }
total=$((slow_count * slow_rounds))
# shellcheck disable=SC2086
row "/health p99 at rest (ms, median)" "$(median $idle_p99s)" "-" "$(median $idle_rpss) req/s; rounds:$idle_p99s"
# shellcheck disable=SC2086
row "/health p99 while $slow_count resolves wait (ms)" "$(median $busy_p99s)" "-" "$(median $busy_rpss) req/s; rounds:$busy_p99s; $still resolves still waiting"
row "  factor over rest (median of rounds)" "${factor:--}" "<=2" "$factor_result (rounds:$factors)"
verdict=MISS
[ "$json_errors" -eq "$total" ] && verdict=PASS
# shellcheck disable=SC2086
row "slow resolves ending in a JSON error" "$json_errors/$total" "$total/$total" \
    "$verdict (slowest $(printf '%.1f' "$slowest") s; HTTP$(printf '%s\n' $codes | sort | uniq -c | awk '{ printf " %sx%s", $1, $2 }'))"
[ "$still" -gt 0 ] || echo "  note: no resolve was still waiting while /health was measured; the comparison proves little"

# --- explorer: an intermediate's entity page (issue 19 item 8) -------------------------------
# GET /explorer/entity?id=<int-0>, a superior of BENCH_ENTITIES/100 leaves (1,000 at 100,000):
# its configuration decoded and its signature checked, and one page (100) of its subordinates,
# each statement from the signed-statement cache as fetch serves it (never all 1,000 signed per
# view). One warm-up request, then the median of 20 sequential ones, as curl times them.
echo
explorer_url="$base/explorer/entity?id=$base/int-0"
curl -s -o "$tmp/explorer-entity.html" --max-time 30 "$explorer_url" || true
explorer_ms="" explorer_errs=0
for _ in $(seq 1 20); do
    read -r code took < <(curl -s -o /dev/null -w '%{http_code} %{time_total}\n' --max-time 30 "$explorer_url" || echo "000 0")
    if [ "$code" = 200 ]; then explorer_ms+=" $(awk -v t="$took" 'BEGIN { printf "%.1f", t * 1000 }')"; else explorer_errs=$((explorer_errs + 1)); fi
done
shown=$(grep -o '[0-9]*–[0-9]* of [0-9]*' "$tmp/explorer-entity.html" | head -1 || true)
# shellcheck disable=SC2086
explorer_median=$(median $explorer_ms)
explorer_result=$(judge "${explorer_median:--}" "<=" 50)
[ "$explorer_errs" -gt 0 ] && explorer_result="MISS ($explorer_errs non-200)"
row "explorer entity page of int-0 (ms, median)" "${explorer_median:--}" "<=50" "$explorer_result (subordinates ${shown:-?})"

stop_server
echo "$misses" >"$out/misses"
echo "scale scenarios: $misses goal(s) missed or not measured"
