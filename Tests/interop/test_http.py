"""HTTP-level behaviour: errors, CORS, limits and robustness under bad or heavy input."""
from __future__ import annotations

import json
import random
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from fedlib import EC_TYPE, RESOLVE_TYPE, assert_json_error, content_type, describe, get, verify_jws

MIB = 1024 * 1024


def raw_http(port: int, head: bytes, body_chunks=(), timeout: float = 15.0) -> tuple[int | None, dict, bytes, str]:
    """Sends a hand-made request; reads the answer concurrently so an early response is not lost.

    Returns (status or None, headers, body, note)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    received = bytearray()
    note = []

    def reader():
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received.extend(chunk)
        except OSError as e:
            note.append(f"recv: {e!r}")

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    try:
        sock.sendall(head)
        for c in body_chunks:
            sock.sendall(c)
    except OSError as e:  # the server may stop reading once it has answered
        note.append(f"send: {e!r}")
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    t.join(timeout)
    sock.close()
    data = bytes(received)
    if not data:
        return None, {}, b"", "; ".join(note) or "no response"
    head_part, _, body = data.partition(b"\r\n\r\n")
    lines = head_part.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split(" ")[1])
    except (IndexError, ValueError):
        return None, {}, data, f"unparseable status line {lines[0]!r}"
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, body, "; ".join(note)


def assert_raw_json_error(status, headers, body, note, expected_status: int):
    assert status == expected_status, f"expected HTTP {expected_status}, got {status} ({note}) headers={headers} body={body[:300]!r}"
    assert headers.get("content-type", "").split(";")[0] == "application/json", f"error must be JSON: {headers}"
    if headers.get("transfer-encoding", "").lower() == "chunked":
        return  # keep it simple: status and type were checked
    payload = json.loads(body.decode() or "{}")
    assert isinstance(payload.get("error"), str) and payload.get("error_description") is not None, f"error shape: {payload}"


def test_unknown_paths_are_json_404(fed):
    for url in (fed.base + "/nope", fed.id("ta") + "/nope", fed.base + "/", fed.id("nobody") + "/.well-known/openid-federation"):
        r = get(url)
        if url == fed.base + "/" and r.status_code == 200:
            continue  # a landing page at the root is fine
        assert_json_error(r, 404, "not_found")


def test_put_is_method_not_allowed(fed):
    r = requests.put(fed.id("ta") + "/.well-known/openid-federation", data="x", timeout=10)
    assert_json_error(r, 405, ("method_not_allowed", "invalid_request", "unsupported_method"))


def test_delete_is_method_not_allowed(fed):
    r = requests.delete(fed.id("ta") + "/list", timeout=10)
    assert_json_error(r, 405, ("method_not_allowed", "invalid_request", "unsupported_method"))


def test_cors_preflight(fed):
    r = requests.options(fed.id("ta") + "/resolve", headers={
        "Origin": "https://wallet.example", "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "accept"}, timeout=10)
    assert r.status_code == 204, describe(r)
    assert r.headers.get("Access-Control-Allow-Origin") in ("*", "https://wallet.example"), f"preflight headers: {dict(r.headers)}"
    methods = r.headers.get("Access-Control-Allow-Methods", "")
    assert "GET" in methods, f"Access-Control-Allow-Methods should include GET: {dict(r.headers)}"


def test_cors_on_errors(fed):
    r = get(fed.id("ta") + "/fetch")
    assert r.headers.get("Access-Control-Allow-Origin") == "*", f"CORS header missing on an error response: {dict(r.headers)}"


def test_cors_on_post_results_and_405(fed):
    """A browser wallet must be able to read every answer, not only GET results."""
    r = requests.post(fed.id("ta") + "/trust-mark-status", data={"trust_mark": "not.a.jwt"}, timeout=10)
    assert r.headers.get("Access-Control-Allow-Origin") == "*", f"CORS header missing on a POST answer: {describe(r)} {dict(r.headers)}"
    r = requests.put(fed.id("ta") + "/list", data="x", timeout=10)
    assert r.status_code == 405, describe(r)
    assert r.headers.get("Access-Control-Allow-Origin") == "*", f"CORS header missing on 405: {dict(r.headers)}"


def _wait_for_log(server, needle: str, timeout: float = 3.0) -> str:
    """The log is written in batches (every 100 ms), so poll for a line rather than read once."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = server.log_path.read_text(errors="replace")
        if needle in text:
            break
        time.sleep(0.05)
    return text


def test_access_log_line_without_query_and_log_level_turns_it_off(make_server):
    server = make_server("access-log").start()
    r = get(server.id("ta") + "/fetch?sub=" + server.id("intermediate") + "&secret=TOPSECRET")
    assert r.status_code == 200, describe(r)
    line = "GET /ta/fetch 200 " + str(len(r.content)) + " "
    text = _wait_for_log(server, line)
    assert line in text, f"no access line {line!r} in the log:\n{text[-1500:]}"
    assert "TOPSECRET" not in text and "sub=" not in text, "the query string must not be logged"

    quiet = make_server("quiet-log", extra_args=["--log-level", "notice"]).start()
    assert get(quiet.id("ta") + "/.well-known/openid-federation").status_code == 200
    time.sleep(0.5)  # five flush intervals
    assert "GET /ta/" not in quiet.log_path.read_text(errors="replace"), "--log-level notice must turn the access log off"
    quiet.stop()
    assert "GET /ta/" not in quiet.log_path.read_text(errors="replace"), "nothing may be flushed at exit either"


def _post_head(fed, path: str, length: int | None, chunked: bool = False) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{fed.port}", "Content-Type: application/x-www-form-urlencoded", "Connection: close"]
    lines.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_body_over_one_mib_is_413(fed):
    size = MIB + 64 * 1024
    body = b"trust_mark=" + b"A" * (size - 11)
    chunks = [body[i:i + 65536] for i in range(0, len(body), 65536)]
    status, headers, rbody, note = raw_http(fed.port, _post_head(fed, "/ta/trust-mark-status", len(body)), chunks)
    assert_raw_json_error(status, headers, rbody, note, 413)
    assert requests.get(fed.base + "/health", timeout=5).status_code == 200


def test_chunked_body_over_one_mib_is_413(fed):
    piece = b"A" * 65536
    first = b"trust_mark=" + piece
    chunks = [f"{len(first):x}\r\n".encode() + first + b"\r\n"]
    chunks += [f"{len(piece):x}\r\n".encode() + piece + b"\r\n" for _ in range(17)] + [b"0\r\n\r\n"]
    status, headers, rbody, note = raw_http(fed.port, _post_head(fed, "/ta/trust-mark-status", None, chunked=True), chunks)
    assert_raw_json_error(status, headers, rbody, note, 413)
    assert requests.get(fed.base + "/health", timeout=5).status_code == 200


def test_body_just_under_limit_is_accepted(fed):
    # 1 MiB minus a little: must be read and answered (not 413), even if the content is nonsense.
    body = "trust_mark=" + "A" * (MIB - 1024)
    r = requests.post(fed.id("ta") + "/trust-mark-status", data=body,
                      headers={"Content-Type": "application/x-www-form-urlencoded"}, timeout=30)
    assert r.status_code != 413 and r.status_code < 500, describe(r)


def _garbage_query(seed: int, size: int = 2048) -> str:
    rnd = random.Random(seed)
    atoms = ["%", "%%", "%zz", "%f", "%C3%28", "%00", "%ff%fe", "%E2%82", "+", "&", "=", "==", "&&", "sub=", "trust_anchor=",
             "entity_type=", "%0d%0a", "%u0041", "%2", "%c0%af", "%ED%A0%80", "a", "Z", "~", "-", ";", "[", "]"]
    out = ""
    while len(out) < size:
        out += rnd.choice(atoms)
    return out[:size]


@pytest.mark.parametrize("path", ["/ta/resolve", "/ta/fetch", "/ta/list", "/intermediate/list", "/ta/trust-mark",
                                  "/ta/trust-mark-list", "/ta/.well-known/openid-federation", "/ta/historical-keys"])
def test_garbage_percent_encoding_does_not_crash(fed, path):
    for seed in range(3):
        q = _garbage_query(seed * 31 + len(path))
        head = f"GET {path}?{q} HTTP/1.1\r\nHost: 127.0.0.1:{fed.port}\r\nConnection: close\r\n\r\n".encode()
        status, headers, body, note = raw_http(fed.port, head)
        assert status is not None, f"no HTTP answer to a garbage query on {path} ({note})"
        assert status < 500, f"garbage query on {path} gave {status}: {body[:300]!r}"
    r = requests.get(fed.base + "/health", timeout=5)
    assert r.status_code == 200, "server unhealthy after garbage queries"
    assert fed.alive(), "server process died"


def test_garbage_form_body_does_not_crash(fed):
    body = _garbage_query(7, 4096).encode()
    status, headers, rbody, note = raw_http(fed.port, _post_head(fed, "/ta/trust-mark-status", len(body)), [body])
    assert status is not None and status < 500, f"garbage form body: {status} {note} {rbody[:200]!r}"
    assert requests.get(fed.base + "/health", timeout=5).status_code == 200


def test_many_concurrent_requests(fed):
    ta, inter = fed.id("ta"), fed.id("intermediate")
    urls = [
        (ta + "/.well-known/openid-federation", EC_TYPE),
        (fed.id("pid-provider") + "/.well-known/openid-federation", EC_TYPE),
        (ta + "/fetch?sub=" + requests.utils.quote(inter, safe=""), EC_TYPE),
        (inter + "/list", "application/json"),
        (ta + "/resolve?sub=" + requests.utils.quote(fed.id("pid-provider"), safe="") + "&trust_anchor=" + requests.utils.quote(ta, safe=""), RESOLVE_TYPE),
    ]
    jobs = [urls[i % len(urls)] for i in range(200)]

    def one(job):
        url, ctype = job
        try:
            r = requests.get(url, timeout=30)
            return url, r.status_code, content_type(r), r.text
        except requests.RequestException as e:
            return url, None, None, repr(e)

    with ThreadPoolExecutor(max_workers=32) as pool:
        results = list(pool.map(one, jobs))
    failures = [(u, s, c, t[:200]) for (u, s, c, t), (_, ctype) in zip(results, jobs) if s != 200 or c != ctype]
    assert not failures, f"{len(failures)} of 200 concurrent requests failed, e.g. {failures[:3]}"
    # The signed answers under load still verify.
    ec_jwt = next(t for (u, s, c, t) in results if u == urls[0][0])
    import fedlib
    _, claims = fedlib.decode_jws(ec_jwt)
    verify_jws(ec_jwt, claims["jwks"], "EC served under load")


@pytest.mark.parametrize("target", [
    "/ta/../intermediate/.well-known/openid-federation",
    "/%2e%2e/ta/.well-known/openid-federation",
    "//ta//fetch",
    "/ta/.well-known/openid-federation/../../../etc/passwd",
    "/ta%00/list",
    "/" + "a" * 12000,
    "/ta/list?" + "entity_type=x&" * 3000,
    "*",
    "http://127.0.0.1/ta/list",
])
def test_odd_request_targets_are_answered_without_server_error(fed, target):
    head = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{fed.port}\r\nConnection: close\r\n\r\n".encode()
    status, headers, body, note = raw_http(fed.port, head)
    assert status is not None, f"no HTTP answer for target {target[:60]!r} ({note})"
    assert status < 500, f"target {target[:60]!r} gave {status}: {body[:300]!r}"
    assert requests.get(fed.base + "/health", timeout=5).status_code == 200


def test_huge_header_is_refused_without_crash(fed):
    head = (f"GET /ta/list HTTP/1.1\r\nHost: 127.0.0.1:{fed.port}\r\nX-Big: {'b' * 200_000}\r\nConnection: close\r\n\r\n").encode()
    status, headers, body, note = raw_http(fed.port, head)
    assert status is None or 400 <= status < 500, f"200 KB header: {status} {note}"
    assert requests.get(fed.base + "/health", timeout=5).status_code == 200
    assert fed.alive()


def test_malformed_requests_do_not_crash(fed):
    for raw in (b"GARBAGE\r\n\r\n", b"GET\r\n\r\n", b"GET /ta/list HTTP/9.9\r\n\r\n", b"\x00\xff\xfe\r\n\r\n",
                b"POST /ta/trust-mark-status HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                b"POST /ta/trust-mark-status HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
                b"POST /ta/trust-mark-status HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n"):
        status, _, body, note = raw_http(fed.port, raw, timeout=5)
        allowed_5xx = {505} if b"HTTP/9.9" in raw else set()  # 505 HTTP Version Not Supported is the right answer there
        assert status is None or status < 500 or status in allowed_5xx, f"{raw[:40]!r} gave {status}: {body[:200]!r}"
    assert requests.get(fed.base + "/health", timeout=5).status_code == 200
    assert fed.alive()


def test_idle_and_slow_connections_do_not_block_others(fed):
    """Half-sent requests (slowloris style) must not tie up the workers that serve everyone else."""
    idle = []
    try:
        for i in range(40):
            s = socket.create_connection(("127.0.0.1", fed.port), timeout=5)
            if i % 2:
                s.sendall(f"GET /ta/list HTTP/1.1\r\nHost: 127.0.0.1:{fed.port}\r\nX-Slow: ".encode())
            else:
                s.sendall(f"POST /ta/trust-mark-status HTTP/1.1\r\nHost: 127.0.0.1:{fed.port}\r\n"
                          "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ntrust_mark=".encode())
            idle.append(s)
        for _ in range(10):
            r = requests.get(fed.id("ta") + "/.well-known/openid-federation", timeout=5)
            assert r.status_code == 200, describe(r)
    finally:
        for s in idle:
            s.close()
    assert requests.get(fed.base + "/health", timeout=5).status_code == 200


def _raw_from(source: str, port: int, request: bytes, timeout: float = 5.0) -> bytes:
    """One request over a connection made from `source` (any of 127.0.0.0/8 is loopback on Linux)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0)) as s:
        s.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return data


def test_one_address_cannot_take_every_connection(make_server):
    """1,100 idle connections from one address (more than the server's 1,024): the excess past the
    per-address cap is closed at once, and another address is answered quickly."""
    server = make_server("per-address").start()
    held = []
    try:
        for _ in range(1100):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", server.port))
            held.append(s)
        started = time.monotonic()
        head = _raw_from("127.0.0.2", server.port, f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
        assert head.startswith(b"HTTP/1.1 200"), head[:200]
        assert time.monotonic() - started < 2.0, "another address waited for the idle connections"

        # The refused ones are closed without a byte of answer (EOF or reset), within a moment.
        import selectors
        selector = selectors.DefaultSelector()  # epoll: select(2) stops at descriptor 1023
        for s in held:
            selector.register(s, selectors.EVENT_READ)
        closed = 0
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and closed < 1100 - 128:
            for key, _ in selector.select(timeout=0.2):
                try:
                    data = key.fileobj.recv(1)
                except (ConnectionResetError, BlockingIOError):
                    data = b""
                assert data == b"", f"a refused connection got data: {data!r}"
                selector.unregister(key.fileobj)
                closed += 1
        selector.close()
        assert closed >= 1100 - 128, f"only {closed} of the excess connections were closed"
    finally:
        for s in held:
            s.close()
    assert requests.get(server.base + "/health", timeout=5).status_code == 200


def test_http11_without_host_is_400_and_http10_is_served(fed):
    status, headers, body, note = raw_http(fed.port, b"GET /health HTTP/1.1\r\n\r\n", timeout=5)
    assert_raw_json_error(status, headers, body, note, 400)
    assert json.loads(body)["error"] == "invalid_request"
    assert headers.get("x-content-type-options") == "nosniff"
    status, headers, body, note = raw_http(fed.port, b"GET /health HTTP/1.0\r\n\r\n", timeout=5)
    assert status == 200, (status, note, body[:200])


def test_error_answers_libmicrohttpd_writes_itself(fed):
    """413 is the server's (JSON with nosniff). 400 for a malformed header line, 414 and 431 come
    from libmicrohttpd 0.9.75 with its fixed HTML body and no hook to change it: the status and
    the closed connection are the contract (docs/federation.md, "Errors and HTTP rules")."""
    host = f"Host: 127.0.0.1:{fed.port}\r\n".encode()
    status, headers, body, note = raw_http(fed.port, b"POST /health HTTP/1.1\r\n" + host + b"Content-Length: 99999999\r\n\r\n", timeout=5)
    assert_raw_json_error(status, headers, body, note, 413)
    assert headers.get("x-content-type-options") == "nosniff"
    cases = [
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n" + host + b"\r\n", 414),
        (b"GET /health HTTP/1.1\r\n" + host + b"X-A: " + b"b" * 70_000 + b"\r\n\r\n", 431),
        (b"GET /health HTTP/1.1\r\n" + host + b"No colon here\r\n\r\n", 400),
    ]
    for request, expected in cases:
        status, headers, body, note = raw_http(fed.port, request, timeout=5)
        assert status == expected, (expected, status, note, body[:200])
        assert headers.get("connection", "").lower() == "close"
