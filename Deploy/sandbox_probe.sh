#!/usr/bin/env bash
# Tries a trustbed build under the system-call rules of Deploy/trustbed.service
# (SystemCallFilter, RestrictAddressFamilies, MemoryDenyWriteExecute, NoNewPrivileges),
# without systemd: serves the demo entities on 127.0.0.1, requests every federation
# endpoint (and one resolve that makes it fetch from localhost over HTTP, where nothing
# listens), puts it under a short wrk load if wrk is installed, and stops it with SIGTERM.
# Any refused system call kills the server with SIGSYS and fails the probe.
#
#   bash Deploy/sandbox_probe.sh path/to/trustbed        (needs cc, libseccomp-dev, curl,
#                                                        systemd-analyze; called by check.sh)
set -euo pipefail

deploy=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$deploy")
bin=${1:?usage: sandbox_probe.sh path/to/trustbed}
port=${PROBE_PORT:-18380}
base="http://127.0.0.1:$port"
[ -x "$bin" ] || { echo "sandbox_probe: no executable at $bin" >&2; exit 2; }

tmp=$(mktemp -d)
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then kill -KILL "$server_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# The unit's filter, expanded: systemd-analyze lists a group's members, nested groups by name.
filter=$(sed -n 's/^SystemCallFilter=//p' "$deploy/trustbed.service" | head -n 1)
declare -A seen
expand() {
    local item
    for item in $(systemd-analyze syscall-filter "$1" 2>/dev/null | sed -e '1d' -e 's/#.*//' ); do
        case "$item" in
            @*) [ -n "${seen[$item]:-}" ] || { seen[$item]=1; expand "$item"; } ;;
            *) echo "$item" ;;
        esac
    done
}
for group in $filter; do expand "$group"; done | sort -u >"$tmp/syscalls"
echo "filter $filter: $(wc -l <"$tmp/syscalls") system calls"
[ -s "$tmp/syscalls" ] || { echo "sandbox_probe: could not expand $filter" >&2; exit 2; }

cc -O2 -o "$tmp/sandbox_probe" "$deploy/sandbox_probe.c" -lseccomp

curl -s -o /dev/null --max-time 1 "$base/" && { echo "sandbox_probe: port $port is taken (set PROBE_PORT)" >&2; exit 2; }
mkdir -p "$tmp/keys"
cp -R "$repo/Entities" "$tmp/entities"
"$tmp/sandbox_probe" "$tmp/syscalls" "$(readlink -f "$bin")" serve \
    --entities "$tmp/entities" --keys "$tmp/keys" --database "$tmp/trustbed.sqlite" \
    --host 127.0.0.1 --port "$port" --base-url "$base" >"$tmp/server.log" 2>&1 &
server_pid=$!

failed=0
ready=0
for _ in $(seq 1 300); do
    kill -0 "$server_pid" 2>/dev/null || break
    if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$base/health" || true)" = 200 ]; then ready=1; break; fi
    sleep 0.1
done
if [ "$ready" -eq 1 ]; then
    for path in /health /ta/.well-known/openid-federation "/ta/fetch?sub=$base/intermediate" /ta/list \
                "/ta/resolve?sub=$base/pid-provider&trust_anchor=$base/ta" /intermediate/.well-known/openid-federation \
                /pid-provider/.well-known/openid-federation /no-such-entity "/ta/fetch?sub=nonsense" \
                "/ta/resolve?sub=http://localhost:$((port + 1))/elsewhere&trust_anchor=$base/ta"; do
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$base$path" || true)
        printf '  GET %-60s %s\n' "$path" "$code"
    done
    # A body over the 1 MiB limit must be refused, not crash anything.
    code=$(head -c 1100000 /dev/zero | curl -s -o /dev/null -w '%{http_code}' --max-time 10 --data-binary @- "$base/ta/resolve" || true)
    printf '  POST %-59s %s\n' "/ta/resolve (1.1 MB body)" "$code"
    if command -v wrk >/dev/null; then
        timeout 20 wrk -t2 -c32 -d3s "$base/ta/resolve?sub=$base/pid-provider&trust_anchor=$base/ta" | awk '/Requests\/sec/ { print "  wrk resolve: " $2 " req/s" }' || true
    fi
    kill -0 "$server_pid" 2>/dev/null || { echo "server died during the requests"; failed=1; }
else
    echo "server did not answer 200 on /health"
    failed=1
fi

# A clean stop (SIGTERM, SQLite close) must pass the filter too.
kill -TERM "$server_pid" 2>/dev/null || true
status=""
for _ in $(seq 1 100); do
    if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    sleep 0.1
done
if kill -0 "$server_pid" 2>/dev/null; then
    echo "server did not stop within 10 s of SIGTERM"
    failed=1
else
    wait "$server_pid" && status=0 || status=$?
    server_pid=""
    echo "server exit status after SIGTERM: $status"
    case "$status" in
        0) ;;
        159) echo "killed by SIGSYS: a refused system call (see 'dmesg | grep -i seccomp' for its number)"; failed=1 ;;
        *) failed=1 ;;
    esac
fi
if [ "$failed" -ne 0 ]; then
    echo "--- server log (last 30 lines)"
    tail -n 30 "$tmp/server.log"
    exit 1
fi
echo "no refused system call; the server ran and stopped cleanly under the unit's filters"
