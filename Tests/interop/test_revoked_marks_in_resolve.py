"""A revoked trust mark disappears from `resolve` answers within about a second.

(1) A mark our own server issues (demo: `ta` issues the pid-provider mark), revoked with
`trustbed trust-mark revoke`.  (2) A remote subject carrying a mark from a remote issuer (Python)
that our Trust Anchor lists in `trust_mark_issuers`: the issuer's trust mark status endpoint
(OpenID Federation 1.0 section 8.4) says `active`, then `revoked`."""
from __future__ import annotations

import time

from fedlib import PID_MARK, RESOLVE_TYPE, assert_ok, fetch_entity_configuration, get, verify_jws, verify_trust_mark
from remotefed import RemoteFederation, trust_anchor_entities

PICKUP = 1.6  # "within ~1.5 s", plus one polling step
REMOTE_MARK = "https://remote.example/trust-marks/remote-certified"


def resolved_marks(server, sub: str, n: list[int]) -> tuple[dict, dict]:
    # The very same query each time: the one-second response memo is part of the ~1.5 s budget.
    n[0] += 1
    r = get(server.id("ta") + "/resolve", params={"sub": sub, "trust_anchor": server.id("ta")})
    assert_ok(r, RESOLVE_TYPE)
    _, _, ta = fetch_entity_configuration(server.id("ta"))
    _, claims = verify_jws(r.text.strip(), ta["jwks"], "resolve response", typ="resolve-response+jwt")
    return {m.get("trust_mark_type"): m.get("trust_mark") for m in claims.get("trust_marks") or []}, ta


def wait_until_gone(server, sub: str, mark_type: str, since: float) -> float:
    n = [0]
    while True:
        marks, _ = resolved_marks(server, sub, n)
        elapsed = time.monotonic() - since
        if mark_type not in marks:
            return elapsed
        assert elapsed < PICKUP, f"revoked mark {mark_type} still in resolve for {sub} {elapsed:.2f}s after revocation ({n[0]} resolves)"
        time.sleep(0.1)


def test_locally_issued_mark_revoked_by_the_cli(make_server):
    server = make_server("revoke-local").start()
    sub = server.id("pid-provider")
    marks, ta = resolved_marks(server, sub, [0])
    assert PID_MARK in marks, f"pid-provider should resolve with its mark before revocation: {sorted(marks)}"
    verify_trust_mark(marks[PID_MARK], ta, expected_type=PID_MARK, expected_sub=sub)
    p = server.cli("trust-mark", "revoke", "--issuer", "ta", "--type", PID_MARK, "--subject", "pid-provider",
                   "--database", str(server.database), "--entities", str(server.entities), "--base-url", server.base,
                   "--reason", "interop test", timeout=30)
    since = time.monotonic()
    assert p.returncode == 0, f"trust-mark revoke exited {p.returncode}: {p.stderr[-800:]}"
    wait_until_gone(server, sub, PID_MARK, since)


def test_remote_mark_follows_its_issuers_status_endpoint(make_server):
    with RemoteFederation() as remote:
        issuer = remote.add_superior("issuer", [])
        subject = remote.add("subject", [], metadata={"openid_relying_party": {"client_name": "Marked RP",
                                                                                "redirect_uris": ["https://rp.example/cb"]}})
        server = make_server("revoke-remote", entities=trust_anchor_entities(
            {issuer.entity_id: {"jwks": issuer.jwks}, subject.entity_id: {"jwks": subject.jwks}},
            trust_mark_issuers={REMOTE_MARK: [issuer.entity_id]})).start()
        issuer.authority_hints = [server.id("ta")]
        subject.authority_hints = [server.id("ta")]
        token = issuer.trust_mark(REMOTE_MARK, subject.entity_id, status="active")
        subject.ec_extra["trust_marks"] = [{"trust_mark_type": REMOTE_MARK, "trust_mark": token}]

        marks, ta = resolved_marks(server, subject.entity_id, [0])
        assert ta.get("trust_mark_issuers", {}).get(REMOTE_MARK) == [issuer.entity_id], ta.get("trust_mark_issuers")
        assert marks.get(REMOTE_MARK) == token, f"an active remote mark must be in resolve: {sorted(marks)}"

        issuer.mark_status[token] = "revoked"
        since = time.monotonic()
        wait_until_gone(server, subject.entity_id, REMOTE_MARK, since)
        assert remote.hits_for("/issuer/trust-mark-status"), "the issuer's status endpoint was never asked"

        # Active again: the mark comes back (the status is asked, not remembered forever).
        issuer.mark_status[token] = "active"
        deadline = time.monotonic() + PICKUP
        while REMOTE_MARK not in resolved_marks(server, subject.entity_id, [0])[0]:
            assert time.monotonic() < deadline, "the mark did not come back after its status returned to active"
            time.sleep(0.1)

