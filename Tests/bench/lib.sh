# Shared by run.sh, scale.sh and the issuance scripts (sourced, not run): a scratch directory,
# stopping what a script started, starting the PID Provider's demo server, and reading wrk's
# output. A script calls `scratch` (which sets `tmp` and `pids`, everything it starts, and the
# traps) before it starts anything.

# Everything in pids gets TERM, up to 5 s to exit, then KILL; tmp is removed.
cleanup() {
    local pid i alive
    trap - EXIT INT TERM
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for i in $(seq 1 50); do
        alive=0
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [ "$alive" -eq 0 ] && break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}

# A scratch directory `tmp`, the list `pids` and the traps that stop them and remove `tmp`.
scratch() {
    tmp=$(mktemp -d)
    pids=()
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# start_issuer LOG [WRAPPER...]: trustbed serving $tmp/state (a copy of the repository's Entities,
# see fresh_state) on $port with the admin token $token, under WRAPPER if given (valgrind), its
# output appended to LOG; sets `server` and waits up to 60 s for /health. The script sets bin,
# port, base and token, and defines die.
start_issuer() {
    local log=$1; shift
    (cd "$tmp/state" && exec "$@" "$bin" serve --port "$port" --base-url "$base" --admin-token "$token" --log-level notice \
        >>"$log" 2>&1) &
    server=$!
    pids+=("$server")
    for _ in $(seq 1 600); do
        curl -sf -o /dev/null "$base/health" && return 0
        kill -0 "$server" 2>/dev/null || break
        sleep 0.1
    done
    die "the server did not start (see $log)"
}
# A new $tmp/state holding a copy of the repository's Entities (the demo, with the PID Provider).
fresh_state() { rm -rf "$tmp/state" && mkdir -p "$tmp/state" && cp -r Entities "$tmp/state/Entities"; }

# trust_test_roots: the CLI wallet's TEST device roots (`wallet test-roots`, made once beside
# $tmp/wallet.json) trusted by the demo Wallet Provider in $tmp/state next to the shipped roots,
# so that a bench can register Android and Apple instances (`wallet bench --device-format`).
# After fresh_state, before the server starts.
trust_test_roots() {
    "$bin" wallet test-roots --wallet "$tmp/wallet.json" >"$tmp/test-roots.json"
    python3 - "$tmp/test-roots.json" "$tmp/state/Entities" <<'PY'
import json, shutil, sys
roots, entities = json.load(open(sys.argv[1])), sys.argv[2]
shutil.copy(roots["android_root"], f"{entities}/bench-android-root.pem")
shutil.copy(roots["apple_root"], f"{entities}/bench-apple-root.pem")
path = f"{entities}/wallet-provider.json"
entity = json.load(open(path))
provider = entity["services"]["wallet_provider"]
provider["android_roots"] = ["roots/google-hardware-attestation-roots.pem", "bench-android-root.pem"]
provider["apple_roots"] = ["roots/apple-app-attestation-root-ca.pem", "bench-apple-root.pem"]
provider["apple_app_ids"] = [roots["apple_app_id"]]
json.dump(entity, open(path, "w"), indent=2)
PY
}

# utime + stime of a process in clock ticks (fields 14 and 15 of /proc/PID/stat, counted after
# the command name, which may contain spaces); nothing when the process is gone.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }' || true; }

# A port that already answers would be benchmarked by mistake.
port_in_use() { curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$1/" ; }

# Requests/sec line, e.g. "Requests/sec:  24012.33".
wrk_rps() { awk '$1 == "Requests/sec:" { print $2 }' "$1"; }
# The 99% line of --latency, e.g. "     99%    1.23ms", in milliseconds (nothing for an unknown unit).
wrk_p99_ms() {
    awk '$1 == "99%" {
        v = $2; unit = v; sub(/^[0-9.]+/, "", unit); n = substr(v, 1, length(v) - length(unit)) + 0
        f = (unit == "us") ? 0.001 : (unit == "ms") ? 1 : (unit == "s") ? 1000 : (unit == "m") ? 60000 : (unit == "h") ? 3600000 : -1
        if (f >= 0) printf "%.2f\n", n * f
    }' "$1"
}
# Requests that did not get a 2xx/3xx, plus socket errors: a run with these measured errors.
wrk_errors() {
    awk '/Non-2xx or 3xx responses:/ { e += $NF }
         /Socket errors:/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) e += $i }
         END { print e + 0 }' "$1"
}
# Median of the numbers given as arguments ("" when none).
median() { printf '%s\n' "$@" | awk 'NF { print $1 }' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# judge NAME UNIT FLOOR at-least|at-most FIGURE...: a floor judged on the median of a scenario's
# rounds (this VM's speed moves by up to a third between runs minutes apart), every round shown.
judge() {
    local name=$1 unit=$2 wanted=$3 way=$4 got; shift 4
    got=$(median "$@")
    if awk -v g="$got" -v w="$wanted" -v way="$way" 'BEGIN { exit !(way == "at-least" ? g + 0 >= w : g + 0 <= w) }'
    then echo "PASS $name: $got $unit (median of $*; floor $wanted)"; else echo "MISS $name: $got $unit (median of $*; floor $wanted)"; fi
}
