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
for tool in valgrind callgrind_control callgrind_annotate curl python3; do
    command -v "$tool" >/dev/null || { echo "$tool not found" >&2; exit 1; }
done

mkdir -p "$out"
out=$(realpath "$out")
tmp=$(mktemp -d)
pid=""
cleanup() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

python3 "$repo/Tests/bench/gen_entities.py" "$tmp/Entities" "$leaves" --intermediates 100
serve() { # serve [WRAPPER...]: starts trustbed (under WRAPPER) and waits for the TA's configuration
    "$@" "$bin" serve --entities "$tmp/Entities" --keys "$tmp/Keys" --database "$tmp/db.sqlite" \
        --host 127.0.0.1 --port "$port" --base-url "$base" --log-level notice >>"$tmp/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 1200); do
        curl -sf -o /dev/null "$base/ta/.well-known/openid-federation" && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    tail -n 20 "$tmp/server.log" >&2
    echo "trustbed did not start" >&2
    exit 1
}
stop() { kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=""; }
resolve_urls() { # resolve_urls FROM TO: a curl config asking for leaves FROM..TO-1, one connection
    for ((k = $1; k < $2; k++)); do
        echo "url = \"$base/ta/resolve?sub=$base/leaf-$k&trust_anchor=$base/ta\""
        echo "output = /dev/null"
    done
}

serve
for _ in $(seq 1 1200); do grep -q "created the keys of" "$tmp/server.log" && break; sleep 0.1; done
stop

serve valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/callgrind.out"
resolve_urls 0 "$warm" | curl -s -K - -w '%{http_code}\n' | sort | uniq -c | sed "s/^/  warm-up HTTP: /"
callgrind_control -i on "$pid" >/dev/null
resolve_urls "$warm" $((warm + count)) | curl -s -K - -w '%{http_code}\n' >"$tmp/codes"
callgrind_control -i off "$pid" >/dev/null
stop
sort "$tmp/codes" | uniq -c | sed 's/^/  counted HTTP: /'

callgrind_annotate --inclusive=yes "$out/callgrind.out" >"$out/inclusive.txt" 2>/dev/null
total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$out/inclusive.txt")
echo "instructions: $total over $count cold resolves = $((total / count)) per resolve"
