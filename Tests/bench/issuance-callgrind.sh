#!/usr/bin/env bash
# Instructions per pre-authorized flow (issue 7 item 16), the PID Provider's deterministic
# figure: on a shared machine wall-clock credentials/s move with the neighbours' load, these do
# not. The server runs under callgrind with instrumentation off; after a warm-up it is switched
# on for `trustbed wallet bench --count N` (itself under callgrind, counting only its worker
# threads: BenchRun.work), then off, and each total is divided by N. Scenarios as in
# issuance.sh: SD-JWT and mdoc, with and without DPoP, and a batch of 10.
#
#   bash Tests/bench/issuance-callgrind.sh [path/to/trustbed]
#
# Each scenario's second line is the server's share of that inside libsqlite3 (self cost of its
# functions: the database's CPU per flow; Tests/bench/issuance-db.sh counts its writes).
#
# Environment: CALLGRIND_FLOWS (200; the batch scenario runs a fifth of it), BENCH_PORT (18190),
# CALLGRIND_OUT (a scratch directory): the callgrind files, for callgrind_annotate;
# CALLGRIND_SCENARIOS (all): a regular expression, runs only the scenarios whose name matches.
# Note: under valgrind OpenSSL takes code paths without SHA-NI and ADX, so libcrypto's share is
# larger than natively (`openssl speed ecdsap256` gives the native cost of a P-256 verify).
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
bin=$(realpath "${1:-.build/release/trustbed}")
flows=${CALLGRIND_FLOWS:-200}
port=${BENCH_PORT:-18190}
base="http://127.0.0.1:$port"
token=bench-admin-token

die() { echo "callgrind bench: $*" >&2; exit 1; }
. Tests/bench/lib.sh
[ -x "$bin" ] || die "no executable at $bin"
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || die "needs valgrind (callgrind_control)"
port_in_use "$port" && die "something already answers on 127.0.0.1:$port (set BENCH_PORT)"

scratch
out=${CALLGRIND_OUT:-$tmp/out}
mkdir -p "$out"

# Instructions in a callgrind file: its "totals:" line (a dump's "summary:" can be 0).
total() { awk '/^totals:/ { print $2; exit }' "$1"; }
# Instructions in functions of libsqlite3 (callgrind_annotate names each function's object).
sqlite_total() {
    callgrind_annotate --threshold=100 "$1" 2>/dev/null | awk '/libsqlite3/ { gsub(",", "", $1); s += $1 } END { print s + 0 }'
}

# One scenario on a fresh server and database: prints server and client instructions per flow.
scenario() {
    local name=$1 count=$2; shift 2
    [[ $name =~ ${CALLGRIND_SCENARIOS:-.} ]] || return 0
    fresh_state
    start_issuer "$out/$name-server.log" valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/$name-server.%p"
    "$bin" wallet bench --issuer "$base/pid-provider" --admin-token "$token" --concurrency 2 --count 30 "$@" >/dev/null 2>&1 \
        || die "warm-up of $name failed"
    callgrind_control -i on "$server" >/dev/null 2>&1
    valgrind --tool=callgrind "--toggle-collect=*8BenchRunC4work*" --callgrind-out-file="$out/$name-client.cg" \
        "$bin" wallet bench --issuer "$base/pid-provider" --admin-token "$token" --concurrency 2 --count "$count" \
        --verify-every 0 "$@" >"$out/$name-bench.txt" 2>&1 || die "scenario $name failed (see $out/$name-bench.txt)"
    callgrind_control -i off "$server" >/dev/null 2>&1
    callgrind_control -d "$server" >/dev/null 2>&1
    kill -TERM "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    local dump
    # This server's own dump (the subshell exec'd valgrind, so it kept the pid): a reused
    # CALLGRIND_OUT may hold older ones.
    dump="$out/$name-server.$server.1"
    [ -f "$dump" ] || dump=""
    [ -n "$dump" ] || die "no callgrind dump for $name"
    awk -v name="$name" -v n="$count" -v s="$(total "$dump")" -v c="$(total "$out/$name-client.cg")" \
        'BEGIN { printf "%-14s server %9.0f  client %9.0f  instructions per flow (%d flows)\n", name, s / n, c / n, n }'
    awk -v name="$name" -v n="$count" -v q="$(sqlite_total "$dump")" \
        'BEGIN { printf "%-14s server in libsqlite3 %9.0f  instructions per flow\n", name, q / n }'
}

sd="urn:eudi:pid:1"
mdoc="eu.europa.ec.eudi.pid.1"
scenario sdjwt "$flows" --configuration "$sd"
scenario sdjwt-dpop "$flows" --configuration "$sd" --dpop
scenario mdoc "$flows" --configuration "$mdoc"
scenario mdoc-dpop "$flows" --configuration "$mdoc" --dpop
scenario sdjwt-batch10 $((flows / 5)) --configuration "$sd" --batch 10
