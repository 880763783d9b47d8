#!/usr/bin/env bash
# The PID Provider's database cost per pre-authorized flow (issue 7 item 16): what the
# server's SQLite writes for one offer -> token -> nonce -> credential flow. The server runs
# natively; after a warm-up strace follows all its threads for `trustbed wallet bench --count N`
# and counts, divided by N:
#   write txns  write transactions (each takes SQLite's WAL write lock: an fcntl F_WRLCK on
#               byte 120 of the -shm file); a read-only BEGIN IMMEDIATE counts too
#   WAL frames  1 KiB pages appended to the WAL (one pwrite64 of a page per frame; the 24-byte
#               frame headers are written separately and only counted in the bytes)
#   WAL bytes   all bytes written to the -wal file
#   ckpt pages  pages a checkpoint copied from the WAL into the database file (random-key
#               inserts dirty a different leaf each time, so these follow the WAL frames)
#   fcntl       all fcntl calls on the database's files (SQLite's POSIX locks)
#   fsync       fsync + fdatasync calls (checkpoints; none per commit with synchronous=NORMAL)
#   page reads  pread64 calls on the database and the WAL: pages missing from SQLite's cache
# Counts are close to deterministic: only where a background checkpoint falls varies.
# Instructions inside libsqlite3 per flow come from issuance-callgrind.sh.
#
#   bash Tests/bench/issuance-db.sh [path/to/trustbed]
#
# DB_GROW=N first runs N untraced flows of the scenario (16 clients): random keys cost most
# once the file outgrows SQLite's 2 MiB page cache, which the 2,000 traced flows alone do not
# reach (a flow adds about 1 KiB to the file).
#
# Environment: DB_FLOWS (2000), DB_GROW (0), BENCH_PORT (18290), DB_OUT (a scratch directory):
# strace logs; DB_SCENARIOS (all): a regular expression, runs only the scenarios it matches.
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
bin=$(realpath "${1:-.build/release/trustbed}")
flows=${DB_FLOWS:-2000}
grow=${DB_GROW:-0}
port=${BENCH_PORT:-18290}
base="http://127.0.0.1:$port"
token=bench-admin-token

die() { echo "db bench: $*" >&2; exit 1; }
. Tests/bench/lib.sh
[ -x "$bin" ] || die "no executable at $bin"
command -v strace >/dev/null || die "needs strace"
port_in_use "$port" && die "something already answers on 127.0.0.1:$port (set BENCH_PORT)"

scratch
out=${DB_OUT:-$tmp/out}
mkdir -p "$out"

# One scenario on a fresh server and database: prints the counts per flow.
scenario() {
    local name=$1 count=$2; shift 2
    [[ $name =~ ${DB_SCENARIOS:-.} ]] || return 0
    fresh_state
    start_issuer "$out/$name-server.log"
    "$bin" wallet bench --issuer "$base/pid-provider" --admin-token "$token" --concurrency 2 --count 50 "$@" >/dev/null 2>&1 \
        || die "warm-up of $name failed"
    if [ "$grow" -gt 0 ]; then
        "$bin" wallet bench --issuer "$base/pid-provider" --admin-token "$token" --concurrency 16 --count "$grow" \
            --verify-every 0 "$@" >/dev/null 2>&1 || die "growing the database for $name failed"
    fi
    # -f with -p follows every thread of the server, the checkpointer's included.
    strace -f -qq -y -s 0 -e signal=none -e trace=pread64,pwrite64,pwritev,write,fcntl,fsync,fdatasync \
        -o "$out/$name.strace" -p "$server" 2>/dev/null &
    local tracer=$!
    pids+=("$tracer")
    sleep 1
    "$bin" wallet bench --issuer "$base/pid-provider" --admin-token "$token" --concurrency 2 --count "$count" \
        --verify-every 0 "$@" >"$out/$name-bench.txt" 2>&1 || die "scenario $name failed (see $out/$name-bench.txt)"
    kill -INT "$tracer" 2>/dev/null || true
    wait "$tracer" 2>/dev/null || true
    kill -TERM "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    awk -v name="$name" -v n="$count" -v grown="$([ "$grow" -gt 0 ] && echo " after $grow")" '
        # "pid syscall(fd</path>, ...) = result"; the path tells the WAL from the database file.
        /trustbed\.sqlite/ {
            file = $0; sub(/^[^<]*</, "", file); sub(/>.*/, "", file)
            wal = file ~ /-wal$/; shm = file ~ /-shm$/; main = !wal && !shm
            result = $NF + 0
            if ($2 ~ /^pwrite64\(/) {
                if (wal) { walBytes += result; if (result == 1024 || result == 4096) frames++ }
                if (main) { ckpt++ }
            }
            if ($2 ~ /^fcntl\(/) { fcntls++; if (shm && /F_WRLCK/ && /l_start=120,/) txns++ }
            if ($2 ~ /^(fsync|fdatasync)\(/) syncs++
            if ($2 ~ /^pread64\(/ && !shm) reads++
        }
        END {
            printf "%-14s write txns %5.2f  WAL frames %6.2f  WAL bytes %8.0f  ckpt pages %6.2f  fcntl %6.2f  fsync %5.3f  page reads %6.2f  per flow (%d flows%s)\n",
                name, txns / n, frames / n, walBytes / n, ckpt / n, fcntls / n, syncs / n, reads / n, n, grown
        }' "$out/$name.strace"
}

sd="urn:eudi:pid:1"
mdoc="eu.europa.ec.eudi.pid.1"
scenario sdjwt "$flows" --configuration "$sd"
scenario sdjwt-dpop "$flows" --configuration "$sd" --dpop
scenario mdoc "$flows" --configuration "$mdoc"
scenario sdjwt-batch10 $((flows / 5)) --configuration "$sd" --batch 10
