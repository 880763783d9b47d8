#!/usr/bin/env bash
# The PID Provider's benchmark (issue 7 item 16), run by `make bench` after the federation's.
# The CLI wallet (`trustbed wallet bench`) is the native load client on the same 2 cores: each
# iteration creates an offer through the admin API, then token → nonce → credential. Scenarios:
# SD-JWT and mdoc, each with and without DPoP, and a batch of 10 SD-JWT PIDs per request. The client
# threads run under SCHED_BATCH (`--scheduling batch`, the bench's default: a woken client thread
# does not preempt the issuer's running worker); SD-JWT runs once more under the default policy
# (`--scheduling normal`) for comparison. It
# prints credentials/s and the client's per-step p99, records the server's CPU profile (top
# frames, with linux-perf when present) during a second SD-JWT run, and ends with a kill -9 in the
# middle of a run: every credential the wallet saw acknowledged must have its record and its
# status list entry after the restart.
#
#   bash Tests/bench/issuance.sh [path/to/trustbed]
#
# Environment: ISSUE_SECONDS (10) per scenario, ISSUE_CONCURRENCY (32) client threads, as many
# as the federation's wrk runs keep connections open (measured: 16 gave a median of about 3,160
# SD-JWT credentials/s, 32 gave 3,170-3,410),
# BENCH_PORT (18090), BENCH_RESULTS (bench-results).
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
bin=$(realpath "${1:-.build/release/trustbed}")
seconds=${ISSUE_SECONDS:-10}
concurrency=${ISSUE_CONCURRENCY:-32}
port=${BENCH_PORT:-18090}
base="http://127.0.0.1:$port"
issuer="$base/pid-provider"
token=bench-admin-token

die() { echo "bench: $*" >&2; exit 1; }
. Tests/bench/lib.sh
[ -x "$bin" ] || die "no executable at $bin"
port_in_use "$port" && die "something already answers on 127.0.0.1:$port (set BENCH_PORT)"

scratch
out=${ISSUE_OUT:-$tmp/out}
mkdir -p "$out"
fresh_state

# One scenario: prints the client's summary and keeps it in $out/<name>.txt.
scenario() {
    local name=$1; shift
    "$bin" wallet bench --issuer "$issuer" --admin-token "$token" --concurrency "$concurrency" --duration "$seconds" "$@" \
        >"$out/$name.txt" 2>&1 || { cat "$out/$name.txt"; die "scenario $name failed"; }
    echo "== $name ($*)"
    cat "$out/$name.txt"
}

start_issuer "$out/trustbed.log"
sd="urn:eudi:pid:1"
mdoc="eu.europa.ec.eudi.pid.1"
# Warm-up: first signatures, caches, page faults.
"$bin" wallet bench --issuer "$issuer" --admin-token "$token" --concurrency 2 --count 50 --configuration "$sd" >/dev/null 2>&1 || true

scenario sdjwt --configuration "$sd"
# The profile comes from a run of its own: perf's sampling (with call graphs) costs the issuer a
# few per cent, which the measured run above does not pay.
if command -v perf >/dev/null && perf record -o "$tmp/probe.data" -F 99 -- true >/dev/null 2>&1; then
    perf record -o "$out/sdjwt.perf" -F 499 -g -p "$server" -- sleep "$seconds" >/dev/null 2>&1 &
    profile_pid=$!
    "$bin" wallet bench --issuer "$issuer" --admin-token "$token" --concurrency "$concurrency" --duration "$seconds" \
        --configuration "$sd" >"$out/sdjwt-profiled.txt" 2>&1 || true
    wait "$profile_pid" || true
    # By library first: libcrypto's symbols are stripped, so its share is spread over many
    # addresses in the list of frames below.
    echo "== server CPU profile during another sdjwt run: self time by library, then top frames"
    { perf report -i "$out/sdjwt.perf" --stdio --no-children -g none --sort dso 2>/dev/null || true; } | grep -E '^ +[0-9]' | head -8 | tee "$out/sdjwt-profile.txt" || true
    { perf report -i "$out/sdjwt.perf" --stdio --no-children -g none --sort dso,symbol 2>/dev/null || true; } | grep -E '^ +[0-9]' | cut -c1-140 | head -25 | tee -a "$out/sdjwt-profile.txt" || true
fi
scenario sdjwt-normal --configuration "$sd" --scheduling normal
scenario sdjwt-dpop --configuration "$sd" --dpop
scenario mdoc --configuration "$mdoc"
scenario mdoc-dpop --configuration "$mdoc" --dpop
scenario sdjwt-batch10 --configuration "$sd" --batch 10

# Goals (issue 7): ≥ 3,000 SD-JWT PIDs/s and ≥ 2,000 mdoc PIDs/s end to end, without DPoP.
rate() { awk '/credentials\/s/ { for (i = 1; i <= NF; i++) if ($i == "credentials/s") print $(i - 1) }' "$out/$1.txt" | head -1; }
goal() {
    local got; got=$(rate "$1")
    if awk -v g="$got" -v w="$2" 'BEGIN { exit !(g + 0 >= w) }'; then echo "PASS $1: $got credentials/s (goal $2)"; else echo "MISS $1: $got credentials/s (goal $2)"; fi
}
echo "== goals"
goal sdjwt 3000 | tee "$out/goals.txt"
goal mdoc 2000 | tee -a "$out/goals.txt"
echo "(for comparison, SD-JWT with the client threads under the default scheduling policy: $(rate sdjwt-normal) credentials/s)" | tee -a "$out/goals.txt"

# kill -9 in the middle of a run: nothing acknowledged may be lost (the client appends to the
# acknowledgement file: one kept in ISSUE_OUT from an earlier run must not count).
rm -f "$out/acknowledged.txt"
"$bin" wallet bench --issuer "$issuer" --admin-token "$token" --concurrency "$concurrency" --duration 6 --configuration "$sd" \
    --acknowledged "$out/acknowledged.txt" >"$out/kill9.txt" 2>&1 &
client=$!
sleep 3
kill -9 "$server"
wait "$client" || true
start_issuer "$out/trustbed.log"
python3 - "$tmp/state/trustbed.sqlite" "$out/acknowledged.txt" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
# The wallet writes "<status list uri> <idx>" for every credential it received.
acked = [tuple(l.split()) for l in open(sys.argv[2]) if l.strip()]
rows = [(u, str(i)) for u, i in db.execute("SELECT status_uri, status_index FROM issued_credentials")]
missing = set(acked) - set(rows)
print(f"== kill -9: {len(acked)} credentials acknowledged before the kill, {len(missing)} of them without a record; "
      f"{len(rows)} records, {len(set(rows))} distinct status list entries")
sys.exit(1 if missing or len(set(rows)) != len(rows) else 0)
PY
