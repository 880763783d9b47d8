#!/usr/bin/env bash
# Static checks of the deployment files, runnable on any machine:
#   bash Deploy/check.sh                      unit, nginx config, Containerfile
#   bash Deploy/check.sh --binary PATH        also runs PATH under the unit's seccomp and
#                                             MemoryDenyWriteExecute rules (Deploy/sandbox_probe.c)
# Each check that lacks its tool (systemd-analyze, nginx, openssl, hadolint, cc) is skipped
# with a message; a check that runs and fails makes the script exit 1.
set -euo pipefail

deploy=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$deploy")
binary=""
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary=${2:?--binary needs a path}; shift 2 ;;
        -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done

tmp=$(mktemp -d)
dummy=""
cleanup() {
    [ -n "$dummy" ] && rm -f "$dummy"
    rm -rf "$tmp"
}
trap cleanup EXIT

failures=0
pass() { echo "PASS  $1"; }
fail() { echo "FAIL  $1"; failures=$((failures + 1)); }
skip() { echo "SKIP  $1"; }

# --- systemd unit --------------------------------------------------------------------------
# verify exits 0 even on unknown keys or unparsable values (it only warns), so any output
# counts as a failure. It also insists that ExecStart's binary exists: without an installed
# /usr/local/bin/trustbed, root gets a dummy there for the duration of the check, anyone else
# verifies a copy whose ExecStart points at a dummy in the temp dir.
check_unit() {
    local unit="$deploy/trustbed.service" out
    if ! command -v systemd-analyze >/dev/null; then
        skip "trustbed.service: systemd-analyze not installed"
        return
    fi
    if [ ! -e /usr/local/bin/trustbed ]; then
        if [ "$(id -u)" -eq 0 ] && [ -d /usr/local/bin ] && [ -w /usr/local/bin ]; then
            dummy=/usr/local/bin/trustbed
            printf '#!/bin/sh\nexit 0\n' > "$dummy"
            chmod 0755 "$dummy"
        else
            printf '#!/bin/sh\nexit 0\n' > "$tmp/trustbed"
            chmod 0755 "$tmp/trustbed"
            sed "s#/usr/local/bin/trustbed#$tmp/trustbed#" "$deploy/trustbed.service" > "$tmp/trustbed.service"
            unit="$tmp/trustbed.service"
        fi
    fi
    echo "+ systemd-analyze verify $unit"
    if out=$(systemd-analyze verify "$unit" 2>&1) && [ -z "$out" ]; then
        pass "trustbed.service: systemd-analyze verify"
    else
        printf '%s\n' "$out"
        fail "trustbed.service: systemd-analyze verify"
    fi
    out=$(systemd-analyze security --offline=yes "$unit" 2>/dev/null | tail -n 1 || true)
    [ -n "$out" ] && echo "      ${out#→ }"
    if [ -n "$dummy" ]; then rm -f "$dummy"; dummy=""; fi
}

# --- nginx ---------------------------------------------------------------------------------
# The include file is tested as nginx would load it from conf.d: inside http {} of a
# throwaway top-level configuration. Only its two certificate paths are rewritten, to a
# self-signed pair made here, so the check needs neither root nor a real certificate.
check_nginx() {
    if ! command -v nginx >/dev/null || ! command -v openssl >/dev/null; then
        skip "nginx.conf: needs nginx and openssl"
        return
    fi
    local cert="$tmp/ssl/federation.example.org.pem" key="$tmp/ssl/federation.example.org.key" out
    mkdir -p "$tmp/ssl" "$tmp/nginx"
    if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
            -subj /CN=federation.example.org -keyout "$key" -out "$cert" >"$tmp/openssl.log" 2>&1; then
        cat "$tmp/openssl.log"
        fail "nginx.conf: could not make a self-signed certificate"
        return
    fi
    sed -e "s#/etc/ssl/certs/federation.example.org.pem#$cert#" \
        -e "s#/etc/ssl/private/federation.example.org.key#$key#" \
        "$deploy/nginx.conf" > "$tmp/nginx/trustbed.conf"
    if [ "$(grep -c "$tmp/ssl/" "$tmp/nginx/trustbed.conf")" -ne 2 ] || grep -q '/etc/ssl/' "$tmp/nginx/trustbed.conf"; then
        fail "nginx.conf: certificate paths are not the expected /etc/ssl ones (update check.sh)"
        return
    fi
    # nginx -t binds the listen ports (a port already in use is fine, a denied one is not):
    # without root, test on unprivileged ports instead of 80 and 443.
    if [ "$(id -u)" -ne 0 ]; then
        sed -i -E 's/^([[:space:]]*listen[[:space:]]+(\[::\]:)?)80([; ])/\110080\3/; s/^([[:space:]]*listen[[:space:]]+(\[::\]:)?)443([; ])/\110443\3/' \
            "$tmp/nginx/trustbed.conf"
        echo "      (not root: listen ports 80/443 tested as 10080/10443)"
    fi
    cat > "$tmp/nginx/nginx.conf" <<EOF
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log;
events {}
http {
    access_log $tmp/nginx/access.log;
    client_body_temp_path $tmp/nginx/body;
    proxy_temp_path $tmp/nginx/proxy;
    include $tmp/nginx/trustbed.conf;
}
EOF
    echo "+ nginx -t -p $tmp/nginx/ -e $tmp/nginx/error.log -c $tmp/nginx/nginx.conf"
    if out=$(nginx -t -p "$tmp/nginx/" -e "$tmp/nginx/error.log" -c "$tmp/nginx/nginx.conf" 2>&1); then
        printf '%s\n' "$out" | sed 's/^/      /'
        pass "nginx.conf: nginx -t"
    else
        printf '%s\n' "$out"
        fail "nginx.conf: nginx -t"
    fi
}

# --- Containerfile -------------------------------------------------------------------------
check_containerfile() {
    local src missing=0
    # Every COPY from the build context must name something that exists in the repository.
    while IFS= read -r src; do
        # A bracket glob (Package.resolve[d]) marks an optional file.
        case "$src" in *\[*) continue ;; esac
        if [ ! -e "$repo/$src" ]; then echo "      COPY source missing: $src"; missing=1; fi
    done < <(awk '$1 == "COPY" && $2 !~ /^--from/ { for (i = 2; i < NF; i++) if ($i !~ /^--/) print $i }' "$deploy/Containerfile")
    if [ "$missing" -eq 0 ]; then pass "Containerfile: COPY sources exist"; else fail "Containerfile: COPY sources exist"; fi
    if command -v hadolint >/dev/null; then
        echo "+ hadolint $deploy/Containerfile"
        if hadolint "$deploy/Containerfile"; then pass "Containerfile: hadolint"; else fail "Containerfile: hadolint"; fi
    else
        skip "Containerfile: hadolint not installed (no container engine needed for the other checks)"
    fi
}

# --- sandbox probe (optional) --------------------------------------------------------------
check_sandbox() {
    if [ -z "$binary" ]; then
        skip "sandbox probe: pass --binary PATH to run a trustbed build under the unit's filters"
        return
    fi
    if ! command -v cc >/dev/null || ! command -v systemd-analyze >/dev/null || ! echo '#include <seccomp.h>' | cc -E - >/dev/null 2>&1; then
        skip "sandbox probe: needs cc, systemd-analyze and libseccomp-dev"
        return
    fi
    echo "+ bash $deploy/sandbox_probe.sh $binary"
    if bash "$deploy/sandbox_probe.sh" "$binary"; then pass "sandbox probe"; else fail "sandbox probe"; fi
}

check_unit
check_nginx
check_containerfile
check_sandbox

if [ "$failures" -gt 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
