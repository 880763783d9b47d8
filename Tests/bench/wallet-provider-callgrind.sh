#!/usr/bin/env bash
# Server instructions per Wallet Provider flow (issue 20), the deterministic companion of
# wallet-provider.sh: on a shared machine flows/s and even CPU per flow move with the
# neighbours' load, instruction counts do not. The server runs under callgrind with
# instrumentation off; after a warm-up it is switched on for `trustbed wallet bench --count N`
# of one flow (the client runs natively: only the server is counted), then off, and the total
# is divided by N. Flows as in wallet-provider.sh: register, attest, attest-legacy (development
# instances), attest-legacy-android (Android instances under the CLI's test roots), and the
# attested HAIP pid flow next to the plain SD-JWT flow it is compared with, an NL account's sign
# instruction with a held key (sign, issue 21) and a whole NL PIN recovery (pin-recovery, issue
# 21: its floor is <= 3x plain).
#
#   bash Tests/bench/wallet-provider-callgrind.sh [path/to/trustbed]
#
# Environment: CALLGRIND_FLOWS (200), BENCH_PORT (18191), CALLGRIND_OUT (a scratch directory):
# the callgrind files, for callgrind_annotate; CALLGRIND_SCENARIOS (all): a regular expression,
# runs only the flows whose name matches; CALLGRIND_CLIENT=1 runs the measured client under
# callgrind too, counting only its workers' iterations (the client shares the cores, so its
# instructions per flow count as much as the server's).
# valgrind cannot read the toolchain's DWARF 5, so the binary is copied without its debug
# sections first (symbols stay, so callgrind_annotate still names the functions). Under valgrind
# OpenSSL takes code paths without SHA-NI and ADX, so libcrypto's share is larger than natively.
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
source_bin=$(realpath "${1:-.build/release/trustbed}")
flows=${CALLGRIND_FLOWS:-200}
port=${BENCH_PORT:-18191}
base="http://127.0.0.1:$port"
provider="$base/wallet-provider"
token=bench-admin-token
sd="urn:eudi:pid:1"

die() { echo "callgrind bench: $*" >&2; exit 1; }
. Tests/bench/lib.sh
[ -x "$source_bin" ] || die "no executable at $source_bin"
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || die "needs valgrind (callgrind_control)"
port_in_use "$port" && die "something already answers on 127.0.0.1:$port (set BENCH_PORT)"

scratch
out=${CALLGRIND_OUT:-$tmp/out}
mkdir -p "$out"
out=$(realpath "$out")
bin="$tmp/trustbed"
objcopy --strip-debug "$source_bin" "$bin"

flow_args() {
    case $1 in
        register|attest|attest-legacy|sign) echo "--flow $1 --provider $provider" ;;
        attest-legacy-android) echo "--flow attest-legacy --provider $provider --device-format android --wallet $tmp/wallet.json" ;;
        plain) echo "--flow plain --issuer $base/pid-provider --admin-token $token --configuration $sd" ;;
        pid) echo "--flow pid --issuer $base/pid-provider-haip --provider $provider --admin-token $token --configuration $sd" ;;
        pin-recovery) echo "--flow pin-recovery --issuer $base/pid-provider --provider $provider --admin-token $token --configuration $sd" ;;
    esac
}

total() { awk '/^totals:/ { print $2; exit }' "$1"; }

# One flow on a fresh server and database: prints the server's instructions per flow.
scenario() {
    local name=$1
    [[ $name =~ ${CALLGRIND_SCENARIOS:-.} ]] || return 0
    fresh_state
    trust_test_roots
    start_issuer "$out/$name-server.log" valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/$name-server.%p"
    # shellcheck disable=SC2046
    "$bin" wallet bench $(flow_args "$name") --concurrency 2 --count 30 >"$out/$name-warmup.txt" 2>&1 \
        || { cat "$out/$name-warmup.txt" >&2; die "warm-up of $name failed"; }
    callgrind_control -i on "$server" >/dev/null 2>&1
    local client=()
    # Only a worker's `run` (one whole iteration) is counted: setup, key pools and warm-up
    # registrations are not per-flow work. The pattern names the FlowWorker witness of `run`
    # (`...P3run...KFTW`), which every worker has whatever the optimizer made of the method
    # itself (PINRecoveryWorker's is a `...KFTf4dnnn_n` specialization). One pattern: with two
    # (the method, the specialization) PINRecoveryWorker's iterations counted 0 instructions.
    [ "${CALLGRIND_CLIENT:-0}" = 1 ] && client=(valgrind --tool=callgrind --callgrind-out-file="$out/$name-client.out"
        '--toggle-collect=*WorkerC*P3run9iteration4step6totals*TotalsVztKFTW')
    # shellcheck disable=SC2046
    "${client[@]}" "$bin" wallet bench $(flow_args "$name") --concurrency 2 --count "$flows" >"$out/$name-bench.txt" 2>&1 \
        || { cat "$out/$name-bench.txt" >&2; die "flow $name failed"; }
    callgrind_control -i off "$server" >/dev/null 2>&1
    callgrind_control -d "$server" >/dev/null 2>&1
    kill -TERM "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    local dump="$out/$name-server.$server.1"
    [ -f "$dump" ] || die "no callgrind dump for $name"
    awk -v name="$name" -v n="$flows" -v s="$(total "$dump")" \
        'BEGIN { printf "%-14s server %10.0f instructions per flow (%d flows)\n", name, s / n, n }'
    [ "${CALLGRIND_CLIENT:-0}" = 1 ] && awk -v name="$name" -v n="$flows" -v s="$(total "$out/$name-client.out")" \
        'BEGIN { printf "%-14s client %10.0f instructions per flow\n", name, s / n }'
    return 0
}

for flow in register attest attest-legacy attest-legacy-android plain pid sign pin-recovery; do scenario "$flow"; done
