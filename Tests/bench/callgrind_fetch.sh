#!/usr/bin/env bash
# Instructions per cached random-leaf fetch and per hot TA entity configuration, counted by
# callgrind (deterministic, unlike wall-clock figures on a shared machine): the CPU figures
# behind scale.sh's (f) share "fetch: random leaf, each signed before" / hot EC.
#
#   bash Tests/bench/callgrind_fetch.sh path/to/trustbed OUTDIR
#
# Environment: LEAVES (3000) generated like scale.sh (1 TA, 100 intermediates, leaves under
# `int-(N mod 100)`), COUNT (1000) distinct random leaves fetched while counted, HOT (1000) hot
# EC requests counted separately, PORT (18093).
# Fresh keys are made by a first, uninstrumented start; then the server runs under
# `valgrind --tool=callgrind --instr-atstart=no`, every leaf's subordinate statement is fetched
# once with instrumentation off (the sweep: each is signed and cached), and then COUNT distinct
# leaves in random order and HOT entity configurations are counted, each phase dumped on its
# own. Requests go over one keep-alive connection per phase, as wrk's do. Prints instructions
# per request for each phase and leaves the dumps and their inclusive annotations in OUTDIR.
# Note: callgrind counts each iteration of a `rep stosb` as an instruction, so the memsets
# libmicrohttpd does per request (its connection memory pool) weigh about one instruction per
# byte here, several times what they cost natively.
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$(realpath "${1:?usage: callgrind_fetch.sh BINARY OUTDIR}")
out=${2:?usage: callgrind_fetch.sh BINARY OUTDIR}
leaves=${LEAVES:-3000}
count=${COUNT:-1000}
hot=${HOT:-1000}
port=${PORT:-18093}
base="http://127.0.0.1:$port"
[ "$count" -le "$leaves" ] || { echo "COUNT must not exceed LEAVES" >&2; exit 1; }
command -v shuf >/dev/null || { echo "shuf not found" >&2; exit 1; }
. "$repo/Tests/bench/callgrind_lib.sh"
rm -f "$out"/callgrind.out*
fetch_urls() { # fetch_urls < leaf numbers: a curl config asking for each leaf's statement
    while read -r k; do
        echo "url = \"$base/int-$((k % 100))/fetch?sub=$base/leaf-$k\""
        echo "output = /dev/null"
    done
}
hot_urls() {
    for ((k = 0; k < hot; k++)); do
        echo "url = \"$base/ta/.well-known/openid-federation\""
        echo "output = /dev/null"
    done
}
# counted NAME: counts the requests of the curl config on stdin into callgrind.out.NAME
counted() {
    callgrind_control -z "$pid" >/dev/null 2>&1
    callgrind_control -i on "$pid" >/dev/null 2>&1
    curl -s -K - -w '%{http_code}\n' >"$tmp/codes-$1"
    callgrind_control -i off "$pid" >/dev/null 2>&1
    callgrind_control -d "$1" "$pid" >/dev/null 2>&1
    sort "$tmp/codes-$1" | uniq -c | sed "s/^/  $1 HTTP: /"
}

serve valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/callgrind.out"
seq 0 $((leaves - 1)) | fetch_urls | curl -s -K - -w '%{http_code}\n' | sort | uniq -c | sed "s/^/  sweep HTTP: /"
# Uncounted as well: a few hot requests, so the one-time work of the memo's first entry (the
# runtime instantiating its dictionary's metadata, ~450,000 instructions) falls in neither phase,
# and a pause past the memo's second, so no fetch counted is admitted for the sweep's sake.
hot=3 hot_urls | curl -s -K - -o /dev/null
sleep 1.2
seq 0 $((leaves - 1)) | shuf -n "$count" --random-source=<(yes) | fetch_urls | counted fetch
hot_urls | counted hot
stop

for phase in fetch hot; do
    n=$count; [ "$phase" = hot ] && n=$hot
    file=$(grep -l "^desc: Trigger: .*$phase" "$out"/callgrind.out.* | head -n 1)
    mv "$file" "$out/callgrind.out.$phase"
    total=$(annotated_total "$out/callgrind.out.$phase" "$out/inclusive-$phase.txt")
    echo "$phase: $total instructions over $n requests = $((total / n)) per request"
done
