#!/usr/bin/env bash
# Instructions per verification (issue 22), the deterministic companion of verifier.sh: on a
# shared machine verified/s and even CPU per flow move with the neighbours' load, instruction
# counts do not. The CLI wallet receives the demo's SD-JWT VC and mdoc PIDs from a native
# server; the server then runs again on the same state under callgrind, collecting only inside
# the verifier's handling of a response (`--toggle-collect`: the form's decoding,
# `HTTPRequest.formParameters`, and `Verifier.receiveResponse`, which decrypts, verifies and
# records). After a warm-up the counters are zeroed and `trustbed wallet bench --prepare`
# (native) makes its requests and answers, then posts them; the total is divided by the
# verified answers. What the HTTP layer costs per request (libmicrohttpd, routing) is not in it.
#
#   bash Tests/bench/verifier-callgrind.sh [path/to/trustbed]
#
# Environment: CALLGRIND_FLOWS (200 verifications per flow), VERIFIER_MODE (direct_post.jwt),
# BENCH_PORT (18192), CALLGRIND_OUT (a scratch directory): the callgrind files, for
# callgrind_annotate; CALLGRIND_SCENARIOS (all): a regular expression of the flows to run
# (present-sdjwt, present-mdoc). valgrind cannot read the toolchain's DWARF 5, so the binary is
# copied without its debug sections first. Under valgrind OpenSSL takes code paths without
# SHA-NI and ADX, so libcrypto's share is larger than natively (`openssl speed ecdsap256 ecdhp256`).
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
source_bin=$(realpath "${1:-.build/release/trustbed}")
flows=${CALLGRIND_FLOWS:-200}
mode=${VERIFIER_MODE:-direct_post.jwt}
port=${BENCH_PORT:-18192}
base="http://127.0.0.1:$port"
rp="$base/relying-party"
token=bench-admin-token

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

# The wallet file, from a native server on the state the counted one then reuses.
fresh_state
start_issuer "$out/receive-server.log"
wallet="$tmp/wallet.json"
for configuration in urn:eudi:pid:1 eu.europa.ec.eudi.pid.1; do
    offer=$(curl -sf -X POST "$base/pid-provider/admin/offers" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        -d "{\"persona\": \"erika\", \"credential_configuration_ids\": [\"$configuration\"], \"grant\": \"pre-authorized_code\", \"tx_code\": false}" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["offer_url"])') || die "no offer for $configuration"
    "$bin" wallet receive "$offer" --save "$wallet" >"$out/receive-$configuration.txt" 2>&1 ||
        { cat "$out/receive-$configuration.txt"; die "wallet receive $configuration failed"; }
done
kill -TERM "$server" && wait "$server" 2>/dev/null || true

total() { awk '/^totals:/ { print $2; exit }' "$1"; }

# The functions counted, by their exact (mangled) names: a pattern would also match their
# closures, whose entry toggles collection off again. A changed signature must change them here.
counted=('$s12Verification8VerifierC15receiveResponse4formAA0D15AcknowledgementVSaySS4name_SS5valuetG_tAA0A5ErrorVYKF'
         '$s4HTTP11HTTPRequestV14formParametersSaySS4name_SS5valuetGSgyF')
nm "$bin" >"$tmp/symbols"
for symbol in "${counted[@]}"; do grep -qF " $symbol" "$tmp/symbols" || die "$symbol is not in $source_bin (renamed? update this script)"; done
start_issuer "$out/server.log" valgrind --tool=callgrind --collect-atstart=no \
    "${counted[@]/#/--toggle-collect=}" --callgrind-out-file="$out/server.%p"

# One flow: prints the server's instructions per verification.
scenario() {
    local flow=$1 threads=2 dump
    [[ $flow =~ ${CALLGRIND_SCENARIOS:-.} ]] || return 0
    local args=(--flow "$flow" --verifier "$rp" --wallet "$wallet" --admin-token "$token" --response-mode "$mode" --concurrency "$threads")
    "$bin" wallet bench "${args[@]}" --count 20 >"$out/$flow-warmup.txt" 2>&1 || { cat "$out/$flow-warmup.txt" >&2; die "warm-up of $flow failed"; }
    callgrind_control -z "$server" >/dev/null 2>&1
    "$bin" wallet bench "${args[@]}" --prepare $((flows / threads)) --count $((2 * flows)) >"$out/$flow-bench.txt" 2>&1 ||
        { cat "$out/$flow-bench.txt" >&2; die "flow $flow failed"; }
    rm -f "$out/server.$server"*
    callgrind_control -d "$flow" "$server" >/dev/null 2>&1
    dump=$(ls "$out/server.$server"* 2>/dev/null | head -1)
    [ -n "$dump" ] || die "no callgrind dump for $flow"
    mv "$dump" "$out/$flow.cg"
    local verified
    verified=$(awk '$1 == "verified:" { print $2 }' "$out/$flow-bench.txt")
    [ "${verified:-0}" -gt 0 ] || die "$flow: nothing verified (see $out/$flow-bench.txt)"
    awk -v name="$flow" -v n="$verified" -v s="$(total "$out/$flow.cg")" \
        'BEGIN { printf "%-14s server %10.0f instructions per verification (%d verified, %s)\n", name, s / n, n, ENVIRON["mode"] }'
}
export mode
for flow in present-sdjwt present-mdoc; do scenario "$flow"; done
