#!/usr/bin/env bash
# Throughput and memory figures for trustbed (`make bench`). Not a timed test: it prints
# figures and PASS/MISS against the goals, and exits non-zero only when it cannot measure
# (missing tool, server that does not start), or with BENCH_STRICT=1 on any MISS.
#
#   bash Tests/bench/run.sh [path/to/trustbed]        (default .build/release/trustbed)
#
# Environment: BENCH_ROUNDS (6) rounds of BENCH_SECONDS (5) per run,
# SOAK_SECONDS (60) for the memory check, BENCH_ENTITIES (100000) leaves for the scale scenario
# and BENCH_SCALE=0 to skip it and the slow-host scenario (Tests/bench/scale.sh, which lists
# its own settings), BENCH_ISSUANCE=0, BENCH_WALLET=0 and BENCH_VERIFIER=0 to skip the PID
# Provider's, the Wallet Provider's and the verifier's (Tests/bench/issuance.sh,
# Tests/bench/wallet-provider.sh, Tests/bench/verifier.sh),
# BENCH_PORT (18080) for trustbed, CEILING_PORT (18081) for the static responder,
# BENCH_RESULTS (bench-results) where the table and raw wrk output are kept.
#
# The ceiling is Tests/bench/static_responder.c: bare libmicrohttpd with the daemon settings
# trustbed uses, answering a constant body. wrk runs on the same cores as the server, so
# figures compare runs on one machine, not machines. All traffic goes to 127.0.0.1.
#
# The static responder answers every URL alike, so each target is measured right after the
# responder is sent the very same request (path and query): libmicrohttpd parses the same bytes
# on both sides and only the answer differs (the responder's is 15 bytes, so the ceiling is if
# anything high). A small shared machine drifts by tens of percent from one minute to the next,
# so targets are measured in rounds and a target's share of its ceiling is taken within its
# pair of runs; the table shows medians over the rounds. "static ceiling" is GET / alone.
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"

bin=${1:-.build/release/trustbed}
bench_seconds=${BENCH_SECONDS:-5}
bench_rounds=${BENCH_ROUNDS:-6}
soak_seconds=${SOAK_SECONDS:-60}
port=${BENCH_PORT:-18080}
ceiling_port=${CEILING_PORT:-18081}
results_root=${BENCH_RESULTS:-bench-results}
base="http://127.0.0.1:$port"
sample_every=5

die() { echo "bench: $*" >&2; exit 1; }
. Tests/bench/lib.sh

for tool in wrk curl cc; do
    command -v "$tool" >/dev/null || die "$tool not found (make bench-deps installs wrk; curl and cc come with make deps)"
done
[ -x "$bin" ] || die "no executable at $bin: build it first (swift build -c release)"
[ -f Tests/bench/static_responder.c ] || die "Tests/bench/static_responder.c is missing"
case "$bench_seconds$soak_seconds$bench_rounds" in *[!0-9]*) die "BENCH_SECONDS, BENCH_ROUNDS and SOAK_SECONDS must be whole numbers" ;; esac
[ "$bench_seconds" -ge 1 ] && [ "$soak_seconds" -ge 1 ] && [ "$bench_rounds" -ge 1 ] || die "BENCH_SECONDS, BENCH_ROUNDS and SOAK_SECONDS must be at least 1"

scratch

port_in_use "$port" && die "something already answers on 127.0.0.1:$port (set BENCH_PORT)"
port_in_use "$ceiling_port" && die "something already answers on 127.0.0.1:$ceiling_port (set CEILING_PORT)"

# Waits (at most $3 seconds) until URL $2 answers 200, as long as process $1 lives.
wait_ready() {
    local pid=$1 url=$2 limit=$3 i
    for i in $(seq 1 $((limit * 10))); do
        kill -0 "$pid" 2>/dev/null || return 1
        [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$url" || true)" = 200 ] && return 0
        sleep 0.1
    done
    return 1
}

# --- start the ceiling and trustbed -------------------------------------------------------
echo "machine: $(nproc) cores ($(uname -sr)), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a); wrk and the server share the cores"
echo "binary:  $bin"

cc -O2 -o "$tmp/static_responder" Tests/bench/static_responder.c -lmicrohttpd
"$tmp/static_responder" "$ceiling_port" 2>"$tmp/static_responder.log" &
static_pid=$!
pids+=("$static_pid")
wait_ready "$static_pid" "http://127.0.0.1:$ceiling_port/" 10 || {
    cat "$tmp/static_responder.log" >&2; die "static responder did not start on port $ceiling_port"; }

# trustbed logs a line per request to stderr: that cost is part of what is measured. It goes
# to a plain file (a pipe to a reader would take CPU from the server on a small machine),
# opened for appending so that trim_log can empty it between runs: a run of 60 s writes
# hundreds of MB otherwise. The startup lines are kept aside first.
trim_log() { : >"$tmp/trustbed.log"; }
mkdir -p "$tmp/state/Keys"
cp -R Entities "$tmp/state/Entities"
"$bin" serve --entities "$tmp/state/Entities" --keys "$tmp/state/Keys" \
    --database "$tmp/state/trustbed.sqlite" --host 127.0.0.1 --port "$port" \
    --base-url "$base" >>"$tmp/trustbed.log" 2>&1 &
trustbed_pid=$!
pids+=("$trustbed_pid")
if ! wait_ready "$trustbed_pid" "$base/health" 60; then
    reason="exited before answering on $base/health"
    kill -0 "$trustbed_pid" 2>/dev/null && reason="did not answer 200 on $base/health within 60 s"
    echo "--- trustbed log (last 40 lines)" >&2
    tail -n 40 "$tmp/trustbed.log" >&2
    die "trustbed $reason"
fi
cp "$tmp/trustbed.log" "$tmp/trustbed-start.log"
echo "trustbed pid $trustbed_pid on $base, static responder pid $static_pid on port $ceiling_port"

# --- targets ------------------------------------------------------------------------------
# name|url|goal as % of the ceiling (empty: none)|"sized" when its ceiling answers as many bytes
# as trustbed does. The warm resolve's answer carries the PID Provider's generated metadata twice
# (about 57 KB); against 15 bytes its share measured loopback copying more than the server, and
# the issue states that goal "with the same body size". The others keep the 15-byte ceiling.
targets=(
    "static ceiling|http://127.0.0.1:$ceiling_port/||"
    "entity configuration|$base/ta/.well-known/openid-federation|80|"
    "fetch|$base/ta/fetch?sub=$base/intermediate|80|"
    "list|$base/ta/list||"
    "resolve (warm)|$base/ta/resolve?sub=$base/pid-provider&trust_anchor=$base/ta|50|sized"
)

declare -A status ceiling_port_of
sized_port=$((ceiling_port + 100))
echo
echo "status check (and warm-up):"
for t in "${targets[@]}"; do
    IFS='|' read -r name url goal sized <<<"$t"
    code=$(curl -s -o "$tmp/body" -w '%{http_code}' --max-time 10 "$url" || true)
    status[$name]=${code:-000}
    ceiling_port_of[$name]=$ceiling_port
    if [ "${status[$name]}" = 200 ]; then
        bytes=$(wc -c <"$tmp/body")
        if [ "$sized" = sized ]; then
            port_in_use "$sized_port" && die "something already answers on 127.0.0.1:$sized_port (the sized ceiling: CEILING_PORT + 100)"
            "$tmp/static_responder" "$sized_port" "$bytes" 2>>"$tmp/static_responder.log" &
            pids+=("$!")
            wait_ready "$!" "http://127.0.0.1:$sized_port/" 10 || die "the sized static responder did not start on port $sized_port"
            ceiling_port_of[$name]=$sized_port
            printf '  %-22s 200 (%s bytes; its ceiling answers as many, on port %s)\n' "$name" "$bytes" "$sized_port"
        else
            printf '  %-22s 200 (%s bytes)\n' "$name" "$bytes"
        fi
    else
        printf '  %-22s HTTP %s: %s\n' "$name" "${status[$name]}" "$(head -c 200 "$tmp/body" 2>/dev/null | tr -d '\n')"
    fi
done
# Warm caches and connections (resolve in particular) before measuring.
for t in "${targets[@]}"; do
    IFS='|' read -r name url goal _ <<<"$t"
    [ "${status[$name]}" = 200 ] || continue
    timeout 20 wrk -t2 -c32 -d2s "$url" >/dev/null 2>&1 || true
    trim_log
done

# --- throughput ---------------------------------------------------------------------------
# One wrk run into a file: run_wrk LABEL URL FILE.
declare -A rps p99 errs ratios all_rps all_p99 all_ceiling ceiling_rps
run_wrk() {
    echo "# $1: $2" >"$3"
    timeout $((bench_seconds + 30)) wrk -t2 -c32 -d"${bench_seconds}s" --latency "$2" >>"$3" 2>&1 || true
    trim_log
}

echo
echo "wrk -t2 -c32 -d${bench_seconds}s --latency, $bench_rounds rounds; in each, every target next to a run of"
echo "the static responder sent the same request (same path and query, its own answer: 15 bytes, or as"
echo "many as trustbed's for a sized target)"
for round in $(seq 1 "$bench_rounds"); do
    line="  round $round:"
    for t in "${targets[@]}"; do
        IFS='|' read -r name url goal _ <<<"$t"
        [ "${status[$name]}" = 200 ] || continue
        tag=${name//[^a-z]/_}
        c=""
        out="$tmp/wrk-$tag-$round.txt"
        if [ "$name" = "static ceiling" ]; then
            run_wrk "$name (round $round)" "$url" "$out"
        else
            # The same request line, query included, so libmicrohttpd parses the same bytes. Odd
            # rounds run the ceiling first, even rounds the target, so drift favours neither.
            ceiling_out="$tmp/wrk-$tag-ceiling-$round.txt"
            ceiling_url="http://127.0.0.1:${ceiling_port_of[$name]}${url#"$base"}"
            if [ $((round % 2)) -eq 1 ]; then
                run_wrk "ceiling for $name (round $round)" "$ceiling_url" "$ceiling_out"
                run_wrk "$name (round $round)" "$url" "$out"
            else
                run_wrk "$name (round $round)" "$url" "$out"
                run_wrk "ceiling for $name (round $round)" "$ceiling_url" "$ceiling_out"
            fi
            c=$(wrk_rps "$ceiling_out")
        fi
        r=$(wrk_rps "$out")
        [ -n "$r" ] || continue
        all_p99[$name]+=" $(wrk_p99_ms "$out")"
        errs[$name]=$(( ${errs[$name]:-0} + $(wrk_errors "$out") ))
        all_rps[$name]+=" $r"
        if [ -n "$c" ]; then
            all_ceiling[$name]+=" $c"
            ratios[$name]+=" $(awk -v r="$r" -v c="$c" 'BEGIN { printf "%.1f", 100 * r / c }')"
            line+=" ${name%% *}=$(printf '%.0f' "$r")/$(printf '%.0f' "$c")"
        else
            line+=" ${name%% *}=$(printf '%.0f' "$r")"
        fi
    done
    echo "$line"
done
for t in "${targets[@]}"; do
    IFS='|' read -r name url goal _ <<<"$t"
    # shellcheck disable=SC2086
    rps[$name]=$(median ${all_rps[$name]:-})
    # shellcheck disable=SC2086
    p99[$name]=$(median ${all_p99[$name]:-})
    # shellcheck disable=SC2086
    ceiling_rps[$name]=$(median ${all_ceiling[$name]:-})
done

misses=0
table="$tmp/table.txt"
{
    printf '%-22s %12s %10s %12s %9s %7s  %s\n' target req/s p99_ms ceiling_req/s ceiling% goal result
    for t in "${targets[@]}"; do
        IFS='|' read -r name url goal _ <<<"$t"
        goal_text=${goal:+">=$goal%"}
        if [ "${status[$name]}" != 200 ]; then
            printf '%-22s %12s %10s %12s %9s %7s  %s\n' "$name" "-" "-" "-" "-" "${goal_text:--}" "NO DATA (HTTP ${status[$name]})"
            [ -n "$goal" ] && misses=$((misses + 1))
            continue
        fi
        r=${rps[$name]:-}
        if [ -z "$r" ]; then
            printf '%-22s %12s %10s %12s %9s %7s  %s\n' "$name" "-" "-" "-" "-" "${goal_text:--}" "NO DATA (wrk failed)"
            [ -n "$goal" ] && misses=$((misses + 1))
            continue
        fi
        ratio="-"
        if [ "$name" = "static ceiling" ]; then
            ratio="100.0"
        elif [ -n "${ratios[$name]:-}" ]; then
            # shellcheck disable=SC2086
            ratio=$(printf '%.1f' "$(median ${ratios[$name]})")
        fi
        result="-"
        if [ "$name" = "static ceiling" ]; then
            result="ceiling"
        elif [ -n "$goal" ]; then
            if [ "$ratio" = "-" ]; then
                result="NO CEILING"
            elif awk -v x="$ratio" -v g="$goal" 'BEGIN { exit !(x >= g) }'; then
                result="PASS"
            else
                result="MISS"
            fi
        fi
        if [ "${errs[$name]:-0}" -gt 0 ]; then
            result="$result, ${errs[$name]} errors/non-2xx"
            case "$result" in PASS*) result="MISS (errors)${result#PASS}" ;; esac
        fi
        case "$result" in MISS*|NO*) misses=$((misses + 1)) ;; esac
        printf '%-22s %12.0f %10s %12s %9s %7s  %s\n' "$name" "$r" "${p99[$name]:-?}" \
            "$([ -n "${ceiling_rps[$name]:-}" ] && printf '%.0f' "${ceiling_rps[$name]}" || echo -)" "$ratio" "${goal_text:--}" "$result"
    done
} >"$table"
echo
cat "$table"

# --- memory under load --------------------------------------------------------------------
# wrk against the entity configuration and resolve (those that answer 200) together for
# SOAK_SECONDS while the server's VmRSS is read every 5 s; flat = < 10 % growth from the
# sample at 20 s (after warm-up allocations) to the last one.
rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status" 2>/dev/null; }
soak_urls=()
for t in "${targets[@]}"; do
    IFS='|' read -r name url goal _ <<<"$t"
    case "$name" in "entity configuration"|"resolve (warm)") [ "${status[$name]}" = 200 ] && soak_urls+=("$url") ;; esac
done
memory="$tmp/memory.txt"
: >"$memory"
# Prints like printf and keeps a copy for the summary.
mem() { printf "$@" | tee -a "$memory"; }
echo
if [ ! -r "/proc/$trustbed_pid/status" ]; then
    mem 'memory: skipped (no /proc/%s/status on this system)\n' "$trustbed_pid"
elif [ "${#soak_urls[@]}" -eq 0 ]; then
    mem 'memory: skipped (neither the entity configuration nor resolve answers 200)\n'
else
    mem 'memory: VmRSS of trustbed every %s s during %s s of wrk -t1 -c16 on %s target(s) at once\n' \
        "$sample_every" "$soak_seconds" "${#soak_urls[@]}"
    soak_pids=()
    for url in "${soak_urls[@]}"; do
        timeout $((soak_seconds + 30)) wrk -t1 -c16 -d"${soak_seconds}s" "$url" >>"$tmp/soak-wrk.txt" 2>&1 &
        soak_pids+=("$!")
        pids+=("$!")
    done
    start=$(date +%s)
    samples=()
    times=()
    for i in $(seq 0 $((soak_seconds / sample_every))); do
        # Sleep until start + i*5 s, so slow reads do not stretch the schedule.
        now=$(date +%s)
        if [ $((start + i * sample_every)) -gt "$now" ]; then sleep $((start + i * sample_every - now)); fi
        kb=$(rss_kb "$trustbed_pid")
        trim_log
        if [ -z "$kb" ]; then
            mem '  trustbed exited during the soak (see its log)\n'
            misses=$((misses + 1))
            break
        fi
        samples+=("$kb")
        times+=($((i * sample_every)))
        mem '  t=%3ss  %8.1f MiB\n' "$((i * sample_every))" "$(awk -v k="$kb" 'BEGIN { print k / 1024 }')"
    done
    for pid in "${soak_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    soak_rps=$(awk '$1 == "Requests/sec:" { n++; s += $2 } END { if (n) printf "%.0f req/s over %d wrk run(s)", s, n }' "$tmp/soak-wrk.txt" 2>/dev/null || true)
    [ -n "$soak_rps" ] && mem '  soak throughput: %s\n' "$soak_rps"
    base_index=""
    for j in "${!times[@]}"; do
        if [ "${times[$j]}" -eq 20 ]; then base_index=$j; fi
    done
    last_index=$((${#samples[@]} - 1))
    if [ -n "$base_index" ] && [ "$last_index" -gt "$base_index" ]; then
        a=${samples[$base_index]} b=${samples[$last_index]}
        growth=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%+.1f", 100 * (b - a) / a }')
        if awk -v g="$growth" 'BEGIN { exit !(g < 10) }'; then verdict="flat (PASS)"; else verdict="growing (MISS)"; misses=$((misses + 1)); fi
        mem '  growth from t=20s to t=%ss: %s%% (%s -> %s MiB): %s\n' "${times[$last_index]}" "$growth" \
            "$(awk -v k="$a" 'BEGIN { printf "%.1f", k / 1024 }')" "$(awk -v k="$b" 'BEGIN { printf "%.1f", k / 1024 }')" "$verdict"
    else
        mem '  growth: n/a (needs a sample after t=20s: SOAK_SECONDS >= 25)\n'
    fi
fi

# --- clean stop ---------------------------------------------------------------------------
kill -TERM "$trustbed_pid" 2>/dev/null || true
for _ in $(seq 1 100); do
    kill -0 "$trustbed_pid" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$trustbed_pid" 2>/dev/null; then
    echo "trustbed did not stop within 10 s of SIGTERM (killed on exit)"
else
    stop_status=0
    wait "$trustbed_pid" 2>/dev/null || stop_status=$?
    echo "trustbed stopped on SIGTERM with exit status $stop_status"
fi

# --- scale and slow-host scenarios (Tests/bench/scale.sh) ----------------------------------
# On their own server (SCALE_PORT, 18082) with a generated Entities directory of BENCH_ENTITIES
# leaves; BENCH_SCALE=0 skips them.
scale_out="$tmp/scale"
if [ "${BENCH_SCALE:-1}" != 0 ]; then
    echo
    if bash Tests/bench/scale.sh "$bin" "$scale_out"; then
        misses=$((misses + $(cat "$scale_out/misses" 2>/dev/null || echo 1)))
    else
        echo "scale scenarios could not run"
        misses=$((misses + 1))
    fi
fi

# --- the PID Provider ----------------------------------------------------------------------
issuance_out="$tmp/issuance"
if [ "${BENCH_ISSUANCE:-1}" != 0 ]; then
    echo
    echo "PID Provider (Tests/bench/issuance.sh):"
    mkdir -p "$issuance_out"
    # The federation's server is stopped by now; the issuer's scenario starts its own.
    if ! ISSUE_OUT="$issuance_out" BENCH_PORT=$((port + 10)) bash Tests/bench/issuance.sh "$bin"; then
        echo "MISS: the issuance benchmark failed (see above)"
        misses=$((misses + 1))
    fi
fi

# --- the Wallet Provider -------------------------------------------------------------------
wallet_out="$tmp/wallet-provider"
if [ "${BENCH_WALLET:-1}" != 0 ]; then
    echo
    echo "Wallet Provider (Tests/bench/wallet-provider.sh):"
    mkdir -p "$wallet_out"
    if WALLET_OUT="$wallet_out" BENCH_PORT=$((port + 20)) bash Tests/bench/wallet-provider.sh "$bin"; then
        misses=$((misses + $(cat "$wallet_out/misses" 2>/dev/null || echo 1)))
    else
        echo "MISS: the Wallet Provider benchmark failed (see above)"
        misses=$((misses + 1))
    fi
fi

# --- the verifier ---------------------------------------------------------------------------
verifier_out="$tmp/verifier"
if [ "${BENCH_VERIFIER:-1}" != 0 ]; then
    echo
    echo "Verifier (Tests/bench/verifier.sh):"
    mkdir -p "$verifier_out"
    if VERIFIER_OUT="$verifier_out" BENCH_PORT=$((port + 30)) bash Tests/bench/verifier.sh "$bin"; then
        misses=$((misses + $(cat "$verifier_out/misses" 2>/dev/null || echo 1)))
    else
        echo "MISS: the verifier benchmark failed (see above)"
        misses=$((misses + 1))
    fi
fi

# --- keep the figures ---------------------------------------------------------------------
stamp=$(date -u +%Y%m%dT%H%M%SZ)
keep="$results_root/$stamp"
if mkdir -p "$keep" 2>/dev/null; then
    {
        echo "trustbed bench $stamp: $(nproc) cores, BENCH_ROUNDS=$bench_rounds BENCH_SECONDS=$bench_seconds SOAK_SECONDS=$soak_seconds, binary $bin"
        echo "req/s, p99 and ceiling_req/s are medians over the rounds; ceiling% is the median of each round's target/ceiling (same request)"
        cat "$table" "$memory"
        if [ -s "$scale_out/scale.txt" ]; then
            echo
            echo "scale (BENCH_ENTITIES=${BENCH_ENTITIES:-100000}) and slow host:"
            cat "$scale_out/scale.txt"
        fi
    } >"$keep/summary.txt"
    cp "$tmp"/wrk-*.txt "$keep/" 2>/dev/null || true
    [ -d "$issuance_out" ] && cp -r "$issuance_out" "$keep/issuance" 2>/dev/null || true
    [ -d "$wallet_out" ] && cp -r "$wallet_out" "$keep/wallet-provider" 2>/dev/null || true
    [ -d "$verifier_out" ] && cp -r "$verifier_out" "$keep/verifier" 2>/dev/null || true
    cp "$scale_out"/wrk-*.txt "$keep/" 2>/dev/null || true
    { cat "$tmp/trustbed-start.log"; echo "[... request lines of the runs dropped ...]"; tail -n 200 "$tmp/trustbed.log"; } >"$keep/trustbed.log" 2>/dev/null || true
    echo
    echo "figures kept in $keep/"
fi

if [ "$misses" -gt 0 ]; then
    echo "$misses goal(s) missed or not measured"
    [ "${BENCH_STRICT:-0}" = 1 ] && exit 1
fi
exit 0
