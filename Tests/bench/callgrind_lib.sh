# Shared by callgrind_resolve.sh and callgrind_fetch.sh (sourced, not run): a generated
# federation in a scratch directory, trustbed serving it plainly or under a wrapper (valgrind),
# and the totals of callgrind's files. A script sets repo, bin, out, leaves, port and base, then
# sources this: it generates the entities and starts trustbed once, uninstrumented, to create
# every key, so that the counted run reads keys from files as a restarted server does.

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

# annotated_total FILE ANNOTATION: writes callgrind's inclusive annotation of FILE and prints its total.
annotated_total() {
    callgrind_annotate --inclusive=yes "$1" >"$2" 2>/dev/null
    awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$2"
}

python3 "$repo/Tests/bench/gen_entities.py" "$tmp/Entities" "$leaves" --intermediates 100
serve
for _ in $(seq 1 1200); do grep -q "created the keys of" "$tmp/server.log" && break; sleep 0.1; done
stop
