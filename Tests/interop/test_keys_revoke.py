"""`trustbed keys revoke <name> <kid> --reason R` against a running server.

A revoked key leaves the entity's published `jwks` at once (a compromised key must not be trusted
until statements signed with it expire, unlike a rotated-out key), and `historical-keys`
(OpenID Federation 1.0 section 8.7) lists it with `revoked: {revoked_at, reason}`.  Revoking the
active signing key rotates first, so the entity keeps signing with a new key."""
from __future__ import annotations

import time

import pytest

from fedlib import JWKSET_JWT_TYPE, assert_ok, fetch_entity_configuration, get, validate_trust_chain, verify_jws, wait_for



@pytest.fixture
def server(make_server):
    return make_server("keys-revoke").start()


def revoke(server, name: str, kid: str, reason: str = "compromised"):
    return server.cli("keys", "revoke", name, kid, "--reason", reason, *server.state_args, "--base-url", server.base, timeout=30)


def historical(server, name: str) -> list[dict]:
    r = get(server.id(name) + "/historical-keys")
    assert_ok(r, JWKSET_JWT_TYPE)
    _, _, ec = fetch_entity_configuration(server.id(name))
    _, claims = verify_jws(r.text.strip(), ec["jwks"], f"historical keys of {name}", typ="jwk-set+jwt")
    return claims.get("keys") or []


def assert_listed_as_revoked(server, name: str, kid: str, reason: str, before: int) -> None:
    def listed():
        keys = historical(server, name)
        k = next((k for k in keys if k.get("kid") == kid), None)
        return k is not None and "revoked" in k, keys

    keys = wait_for(listed, f"{kid} listed as revoked in {name}/historical-keys")
    entry = next(k for k in keys if k.get("kid") == kid)
    revoked = entry["revoked"]
    assert isinstance(revoked, dict), f"revoked must be an object: {entry}"
    assert isinstance(revoked.get("revoked_at"), int) and before - 5 <= revoked["revoked_at"] <= time.time() + 5, \
        f"revoked_at must be the time of revocation as a NumericDate: {revoked}"
    assert revoked.get("reason") == reason, f"reason: {revoked}"
    assert "d" not in entry, "historical key leaks the private key"


def test_revoking_the_active_key_rotates_and_unpublishes_it(server):
    name = "intermediate"
    _, h0, c0 = fetch_entity_configuration(server.id(name))
    old = h0["kid"]
    before = int(time.time())
    p = revoke(server, name, old)
    assert p.returncode == 0, f"keys revoke exited {p.returncode}: {p.stderr[-800:]} {p.stdout[-300:]}"

    def unpublished():
        _, h, c = fetch_entity_configuration(server.id(name))
        kids = [k["kid"] for k in c["jwks"]["keys"]]
        return old not in kids and h["kid"] != old, (h["kid"], kids)

    new, kids = wait_for(unpublished, f"{old} gone from {name}'s jwks")
    assert new in kids and new != old, f"a new signing key must be published: signed by {new}, jwks {kids}"
    assert_listed_as_revoked(server, name, old, "compromised", before)

    # The superior stops vouching for the revoked key, and chains through the intermediate validate.
    def superior_updated():
        r = get(server.id("ta") + "/fetch", params={"sub": server.id(name)})
        _, _, ta = fetch_entity_configuration(server.id("ta"))
        _, c = verify_jws(r.text.strip(), ta["jwks"], "ta about intermediate")
        kids = [k["kid"] for k in c["jwks"]["keys"]]
        return old not in kids and new in kids, kids

    wait_for(superior_updated, "the trust anchor's statement about the intermediate without the revoked key")
    r = get(server.id("ta") + "/resolve", params={"sub": server.id("pid-provider"), "trust_anchor": server.id("ta")})
    assert r.status_code == 200, r.text[:300]
    _, _, ta = fetch_entity_configuration(server.id("ta"))
    _, claims = verify_jws(r.text.strip(), ta["jwks"], "resolve after revocation", typ="resolve-response+jwt")
    validate_trust_chain(claims["trust_chain"], server.id("pid-provider"), server.id("ta"))


def test_revoking_a_rotated_out_key(server):
    name = "wallet-provider"
    _, h0, _ = fetch_entity_configuration(server.id(name))
    old = h0["kid"]
    p = server.cli("keys", "rotate", name, *server.state_args, "--base-url", server.base, timeout=30)
    assert p.returncode == 0, f"keys rotate exited {p.returncode}: {p.stderr[-800:]}"

    def rotated():
        _, h, c = fetch_entity_configuration(server.id(name))
        kids = [k["kid"] for k in c["jwks"]["keys"]]
        return h["kid"] != old and old in kids, (h["kid"], kids)

    wait_for(rotated, "rotation picked up with the old key still published")
    before = int(time.time())
    p = revoke(server, name, old, reason="compromised")
    assert p.returncode == 0, f"keys revoke exited {p.returncode}: {p.stderr[-800:]}"

    def gone():
        _, _, c = fetch_entity_configuration(server.id(name))
        kids = [k["kid"] for k in c["jwks"]["keys"]]
        return old not in kids, kids

    wait_for(gone, f"revoked {old} gone from {name}'s jwks")
    assert_listed_as_revoked(server, name, old, "compromised", before)


def test_unknown_kid_exits_1(server):
    p = revoke(server, "intermediate", "no-such-kid")
    assert p.returncode == 1, f"revoking an unknown kid must exit 1, got {p.returncode}: {p.stderr[-500:]}"
    assert p.stderr.strip(), "the failure should say why on standard error"
    _, _, c = fetch_entity_configuration(server.id("intermediate"))
    assert c["jwks"]["keys"], "nothing was revoked"
