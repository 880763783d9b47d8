"""A remote federation in Python: entities hosted by a threaded HTTP server outside trustbed.

Statements are hand-made and signed with joserfc, so a test can put any claim (valid or not,
OpenID Federation 1.0 section 3) into an Entity Configuration or a Subordinate Statement that
trustbed then fetches while resolving.  Every request is recorded (`hits`), so a test can prove
that trustbed did, or did not, contact this host.  Paths can be made hostile (slow, silent,
huge, redirecting, failing) to check that trustbed stays responsive.
"""
from __future__ import annotations

import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from joserfc import jws
from joserfc.jwk import ECKey

LIFETIME = 3600
MIB = 1024 * 1024


def new_key() -> ECKey:
    return ECKey.generate_key("P-256", private=True, auto_kid=True)


def public_jwks(key: ECKey) -> dict:
    return {"keys": [key.as_dict(private=False)]}


def sign(key: ECKey, typ: str, claims: dict) -> str:
    header = {"alg": "ES256", "typ": typ, "kid": key.kid}
    return jws.serialize_compact(header, json.dumps(claims).encode(), key)


@dataclass
class RemoteEntity:
    """One entity on the remote host.  `ec_extra` is merged into its Entity Configuration (a key
    with value None removes a claim); `subordinates` maps a subject ID to its jwks and the extra
    claims of this entity's Subordinate Statement about it."""

    name: str
    entity_id: str
    key: ECKey
    authority_hints: list[str]
    metadata: dict
    ec_extra: dict = field(default_factory=dict)
    subordinates: dict[str, dict] = field(default_factory=dict)
    # trust mark (JWT) -> status, answered by <id>/trust-mark-status; unknown marks are "invalid".
    mark_status: dict[str, str] = field(default_factory=dict)

    @property
    def jwks(self) -> dict:
        return public_jwks(self.key)

    def entity_configuration(self) -> str:
        t = int(time.time())
        claims: dict[str, Any] = {"iss": self.entity_id, "sub": self.entity_id, "iat": t, "exp": t + LIFETIME, "jwks": self.jwks,
                                  "metadata": self.metadata}
        if self.authority_hints:
            claims["authority_hints"] = self.authority_hints
        for k, v in self.ec_extra.items():
            if v is None:
                claims.pop(k, None)
            else:
                claims[k] = v
        return sign(self.key, "entity-statement+jwt", claims)

    def subordinate_statement(self, sub: str) -> str | None:
        entry = self.subordinates.get(sub)
        if entry is None:
            return None
        t = int(time.time())
        claims = {"iss": self.entity_id, "sub": sub, "iat": t, "exp": t + LIFETIME, "jwks": entry["jwks"], **entry.get("extra", {})}
        return sign(self.key, "entity-statement+jwt", claims)

    def trust_mark(self, mark_type: str, sub: str, status: str = "active") -> str:
        t = int(time.time())
        token = sign(self.key, "trust-mark+jwt", {"iss": self.entity_id, "sub": sub, "trust_mark_type": mark_type, "iat": t,
                                                  "exp": t + LIFETIME})
        self.mark_status[token] = status
        return token


@dataclass
class Hit:
    at: float
    method: str
    path: str
    query: str


class RemoteFederation:
    """A ThreadingHTTPServer on 127.0.0.1 hosting RemoteEntity objects at /<name>.

    `behaviour[path]` overrides the answer for a path (query ignored): "hang" (never answers
    within a minute), ("slow", seconds) (valid answer after a delay), "huge" (5 MB body),
    "redirect-loop", "error" (HTTP 500) or "close" (drops the connection)."""

    def __init__(self):
        self.entities: dict[str, RemoteEntity] = {}
        self.behaviour: dict[str, Any] = {}
        self.hits: list[Hit] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                outer._handle(self, "GET")

            def do_POST(self):
                outer._handle(self, "POST")

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    # -- lifecycle

    def start(self) -> "RemoteFederation":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- content

    def id(self, name: str) -> str:
        return f"{self.base}/{name}"

    def add(self, name: str, authority_hints: list[str] | None = None, metadata: dict | None = None, **kw) -> RemoteEntity:
        eid = self.id(name)
        md = metadata if metadata is not None else {"federation_entity": {"organization_name": f"Remote {name}"}}
        e = RemoteEntity(name, eid, new_key(), list(authority_hints or []), md, **kw)
        self.entities[name] = e
        return e

    def add_superior(self, name: str, authority_hints: list[str], **kw) -> RemoteEntity:
        """An intermediate that advertises its fetch endpoint (and a trust mark status endpoint)."""
        eid = self.id(name)
        md = {"federation_entity": {"organization_name": f"Remote {name}", "federation_fetch_endpoint": eid + "/fetch",
                                    "federation_trust_mark_status_endpoint": eid + "/trust-mark-status"}}
        return self.add(name, authority_hints, md, **kw)

    def hits_for(self, path_prefix: str = "/") -> list[Hit]:
        with self._lock:
            return [h for h in self.hits if h.path.startswith(path_prefix)]

    def clear_hits(self) -> None:
        with self._lock:
            self.hits.clear()

    # -- serving

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        parsed = urllib.parse.urlsplit(h.path)
        path, query = parsed.path, parsed.query
        with self._lock:
            self.hits.append(Hit(time.monotonic(), method, path, query))
        body = b""
        length = int(h.headers.get("Content-Length") or 0)
        if length:
            body = h.rfile.read(min(length, MIB))
        try:
            special = self.behaviour.get(path)
            if special is not None and self._special(h, special, path, query):
                return
            status, ctype, payload = self._answer(method, path, query, body)
            self._send(h, status, ctype, payload)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _special(self, h, special, path: str, query: str) -> bool:
        """Answers a hostile path; returns False when the normal answer should follow (slow)."""
        if special == "hang":
            self._stopping.wait(60)
            h.close_connection = True
            return True
        if isinstance(special, tuple) and special[0] == "slow":
            self._stopping.wait(special[1])
            return False
        if special == "huge":
            self._send(h, 200, "application/entity-statement+jwt", b"a" * (5 * MIB))
            return True
        if special == "redirect-loop":
            n = int(urllib.parse.parse_qs(query).get("n", ["0"])[0])
            h.send_response(302)
            h.send_header("Location", f"{path}?n={n + 1}")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return True
        if isinstance(special, tuple) and special[0] == "redirect":
            h.send_response(302)
            h.send_header("Location", special[1])
            h.send_header("Content-Length", "0")
            h.end_headers()
            return True
        if special == "error":
            self._send(h, 500, "text/plain", b"boom")
            return True
        if special == "close":
            h.close_connection = True
            h.wfile.flush()
            try:
                h.connection.shutdown(2)
            except OSError:
                pass
            return True
        raise ValueError(f"unknown behaviour {special!r}")

    def _answer(self, method: str, path: str, query: str, body: bytes) -> tuple[int, str, bytes]:
        params = urllib.parse.parse_qs(query)
        for e in self.entities.values():
            prefix = "/" + e.name
            if path == prefix + "/.well-known/openid-federation" and method == "GET":
                return 200, "application/entity-statement+jwt", e.entity_configuration().encode()
            if path == prefix + "/fetch" and method == "GET":
                stmt = e.subordinate_statement((params.get("sub") or [""])[0])
                if stmt is None:
                    return 404, "application/json", b'{"error":"not_found","error_description":"unknown sub"}'
                return 200, "application/entity-statement+jwt", stmt.encode()
            if path == prefix + "/trust-mark-status" and method == "POST":
                form = urllib.parse.parse_qs(body.decode(errors="replace"))
                token = (form.get("trust_mark") or [""])[0]
                status = e.mark_status.get(token, "invalid")
                t = int(time.time())
                reply = sign(e.key, "trust-mark-status-response+jwt",
                             {"iss": e.entity_id, "iat": t, "trust_mark": token, "status": status})
                return 200, "application/trust-mark-status-response+jwt", reply.encode()
        return 404, "application/json", b'{"error":"not_found","error_description":"no such path"}'

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, ctype: str, payload: bytes) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload)


def trust_anchor_entities(remote_subordinates: dict[str, dict], **ta_extra) -> dict:
    """A temporary Entities dir for trustbed: one Trust Anchor `ta` whose subordinates are remote
    (entity ID -> {"jwks": ...}); fetches from their origins are allowed by default."""
    ta = {"trust_anchor": True, "metadata": {"federation_entity": {"organization_name": "Interop TA"}},
          "subordinates": remote_subordinates}
    ta.update(ta_extra)
    return {"ta": ta}
