#!/usr/bin/env bash
# Instructions per cold resolve, counted by callgrind (deterministic, unlike wall-clock figures on
# a shared machine): the CPU figure behind scale.sh's "cold resolves, distinct leaves".
#
#   bash Tests/bench/callgrind_resolve.sh path/to/trustbed OUTDIR
#
# Environment: LEAVES (3000) generated like scale.sh (1 TA, 100 intermediates, leaves under
# `int-(N mod 100)`), WARM (200) leaves resolved first with instrumentation off (every
# intermediate's configuration, its statement from the TA and its key are then cached, as in a
# long run), COUNT (1000) distinct leaves resolved while counted, PORT (18092).
# Fresh keys are made by a first, uninstrumented start; then the server runs under
# `valgrind --tool=callgrind --instr-atstart=no` and instrumentation is switched on for the COUNT
# resolves only. Prints instructions per resolve and leaves callgrind.out and the inclusive
# annotation in OUTDIR.
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$(realpath "${1:?usage: callgrind_resolve.sh BINARY OUTDIR}")
out=${2:?usage: callgrind_resolve.sh BINARY OUTDIR}
leaves=${LEAVES:-3000}
warm=${WARM:-200}
count=${COUNT:-1000}
port=${PORT:-18092}
base="http://127.0.0.1:$port"
[ $((warm + count)) -le "$leaves" ] || { echo "WARM + COUNT must not exceed LEAVES" >&2; exit 1; }
. "$repo/Tests/bench/callgrind_lib.sh"
resolve_urls() { # resolve_urls FROM TO: a curl config asking for leaves FROM..TO-1, one connection
    for ((k = $1; k < $2; k++)); do
        echo "url = \"$base/ta/resolve?sub=$base/leaf-$k&trust_anchor=$base/ta\""
        echo "output = /dev/null"
    done
}

serve valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/callgrind.out"
resolve_urls 0 "$warm" | curl -s -K - -w '%{http_code}\n' | sort | uniq -c | sed "s/^/  warm-up HTTP: /"
callgrind_control -i on "$pid" >/dev/null
resolve_urls "$warm" $((warm + count)) | curl -s -K - -w '%{http_code}\n' >"$tmp/codes"
callgrind_control -i off "$pid" >/dev/null
stop
sort "$tmp/codes" | uniq -c | sed 's/^/  counted HTTP: /'

total=$(annotated_total "$out/callgrind.out" "$out/inclusive.txt")
echo "instructions: $total over $count cold resolves = $((total / count)) per resolve"
