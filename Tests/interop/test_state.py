"""State changes made by the CLI while a server runs, and what survives a hard restart.

These tests use their own server (module scope) so the shared demo server stays pristine.
They run in file order: rotation, revocation, then the SIGKILL restart that checks both.
"""
from __future__ import annotations

import stat

import pytest
import requests

from fedlib import (JWKSET_JWT_TYPE, decode_jws, PID_MARK, RP_MARK, TM_STATUS_TYPE, TRUST_MARK_TYPE, assert_ok, assert_public_jwks,
                    fetch_entity_configuration, get, thumbprint, validate_trust_chain, verify_jws, wait_for)
from harness import TrustbedServer

ENTITIES = ["ta", "intermediate", "pid-provider", "wallet-provider", "relying-party"]

# What earlier tests in this module did, for the restart test to re-check.
done: dict = {}


@pytest.fixture(scope="module")
def state(trustbed_bin, session_tmp):
    server = TrustbedServer(session_tmp / "state", label="state-server").start()
    yield server
    server.stop()


def issue(server, issuer, mark, subject) -> str:
    r = get(server.id(issuer) + "/trust-mark", params={"trust_mark_type": mark, "sub": server.id(subject)})
    assert_ok(r, TRUST_MARK_TYPE)
    return r.text.strip()


def mark_status(server, issuer, token) -> str:
    r = requests.post(server.id(issuer) + "/trust-mark-status", data={"trust_mark": token}, timeout=15)
    assert_ok(r, TM_STATUS_TYPE)
    _, _, ec = fetch_entity_configuration(server.id(issuer))
    _, claims = verify_jws(r.text.strip(), ec["jwks"], "trust mark status", typ="trust-mark-status-response+jwt")
    assert claims.get("trust_mark") == token
    return claims.get("status")


def historical_keys(server, name) -> list[dict]:
    r = get(server.id(name) + "/historical-keys")
    assert_ok(r, JWKSET_JWT_TYPE)
    _, _, ec = fetch_entity_configuration(server.id(name))
    _, claims = verify_jws(r.text.strip(), ec["jwks"], f"historical keys of {name}", typ="jwk-set+jwt")
    assert claims.get("iss") == server.id(name)
    assert isinstance(claims.get("keys"), list), f"keys must be an array: {claims}"
    return claims["keys"]


def test_key_files_are_private(state):
    # Keys are created on first use: ask every entity for its configuration first.
    for name in ENTITIES:
        fetch_entity_configuration(state.id(name))
    for name in ENTITIES:
        d = state.keys / name
        assert d.is_dir(), f"no key directory {d}; Keys contains {sorted(p.name for p in state.keys.iterdir())}"
        files = [p for p in d.iterdir() if p.is_file()]
        assert files, f"no key files in {d}"
        for p in files:
            mode = stat.S_IMODE(p.stat().st_mode)
            assert mode == 0o600, f"{p} has mode {oct(mode)}, expected 0o600"


def test_key_rotation_is_picked_up_by_the_running_server(state):
    name = "intermediate"
    eid = state.id(name)
    _, h0, c0 = fetch_entity_configuration(eid)
    old_kid = h0["kid"]
    old_jwk = next(k for k in c0["jwks"]["keys"] if k["kid"] == old_kid)
    p = state.cli("keys", "rotate", name, *state.state_args, "--base-url", state.base, timeout=30)
    assert p.returncode == 0, f"keys rotate exited {p.returncode}: {p.stderr[-800:]} {p.stdout[-300:]}"

    def rotated():
        _, h, c = fetch_entity_configuration(eid)
        return h["kid"] != old_kid, (h["kid"], [k["kid"] for k in c["jwks"]["keys"]])

    new_kid, kids = wait_for(rotated, f"{name} EC signed with a new key after `keys rotate`")
    assert new_kid in kids, f"new kid {new_kid} not in jwks {kids}"
    _, _, c1 = fetch_entity_configuration(eid)
    new_jwk = next(k for k in c1["jwks"]["keys"] if k["kid"] == new_kid)
    assert thumbprint(new_jwk) == new_kid, "new kid is not the RFC 7638 thumbprint of the new key"
    assert_public_jwks(c1["jwks"], "rotated jwks")
    for p_ in (state.keys / name).iterdir():
        if p_.is_file():
            assert stat.S_IMODE(p_.stat().st_mode) == 0o600, f"{p_} mode {oct(stat.S_IMODE(p_.stat().st_mode))} after rotation"

    def listed():
        keys = historical_keys(state, name)
        return any(k.get("kid") == old_kid for k in keys), keys

    keys = wait_for(listed, f"old kid {old_kid} in {name}/historical-keys")
    old = next(k for k in keys if k.get("kid") == old_kid)
    assert isinstance(old.get("exp"), int), f"historical key must carry an integer exp: {old}"
    assert "d" not in old, "historical key leaks the private key"
    for member in ("kty", "crv", "x", "y"):
        assert old.get(member) == old_jwk.get(member), f"historical key {member} differs from the key that was published"

    # The superior now vouches for the new key, and chains through the intermediate still validate.
    def superior_knows():
        r = get(state.id("ta") + "/fetch", params={"sub": eid})
        _, _, ta = fetch_entity_configuration(state.id("ta"))
        _, c = verify_jws(r.text.strip(), ta["jwks"], "ta statement about intermediate")
        return new_kid in [k["kid"] for k in c["jwks"]["keys"]], [k["kid"] for k in c["jwks"]["keys"]]

    wait_for(superior_knows, "new intermediate key in the trust anchor's subordinate statement")

    def chain_ok():
        r = get(state.id("ta") + "/resolve", params={"sub": state.id("pid-provider"), "trust_anchor": state.id("ta")})
        if r.status_code != 200:
            return False, r.text[:300]
        _, _, ta = fetch_entity_configuration(state.id("ta"))
        _, claims = verify_jws(r.text.strip(), ta["jwks"], "resolve after rotation", typ="resolve-response+jwt")
        validate_trust_chain(claims["trust_chain"], state.id("pid-provider"), state.id("ta"))
        h, _ = decode_jws(claims["trust_chain"][1])
        return h["kid"] == new_kid, h["kid"]

    wait_for(chain_ok, "resolved chain with the intermediate's statement signed by the new key")
    done["rotated"] = (name, old_kid, new_kid)


def test_trust_mark_revocation_is_picked_up_by_the_running_server(state):
    token = issue(state, "ta", PID_MARK, "pid-provider")
    _, _, pid = fetch_entity_configuration(state.id("pid-provider"))
    carried = next((m["trust_mark"] for m in pid.get("trust_marks", []) if m["trust_mark_type"] == PID_MARK), None)
    assert carried, "pid-provider EC should carry the pid-provider mark before revocation"
    assert mark_status(state, "ta", token) == "active"
    assert mark_status(state, "ta", carried) == "active"

    p = state.cli("trust-mark", "revoke", "--issuer", "ta", "--type", PID_MARK, "--subject", "pid-provider",
                  "--database", str(state.database), "--entities", str(state.entities), "--base-url", state.base,
                  "--reason", "interop test", timeout=30)
    assert p.returncode == 0, f"trust-mark revoke exited {p.returncode}: {p.stderr[-800:]} {p.stdout[-300:]}"

    wait_for(lambda: ((s := mark_status(state, "ta", token)) == "revoked", s), "status revoked for the fetched mark")
    assert mark_status(state, "ta", carried) == "revoked", "the mark carried in the EC must also report revoked"

    def dropped():
        _, _, c = fetch_entity_configuration(state.id("pid-provider"))
        types = [m.get("trust_mark_type") for m in c.get("trust_marks") or []]
        return PID_MARK not in types, types

    wait_for(dropped, "pid-provider EC without the revoked mark")
    r = get(state.id("ta") + "/trust-mark-list", params={"trust_mark_type": PID_MARK})
    assert r.status_code == 200 and state.id("pid-provider") not in r.json(), f"revoked subject still in trust-mark-list: {r.text[:300]}"
    done["revoked"] = [("ta", token)]


def test_state_survives_sigkill_restart(state):
    # One more revocation just before the crash, so nothing depends on test order.
    rp_token = issue(state, "intermediate", RP_MARK, "relying-party")
    assert mark_status(state, "intermediate", rp_token) == "active"
    p = state.cli("trust-mark", "revoke", "--issuer", "intermediate", "--type", RP_MARK, "--subject", "relying-party",
                  "--database", str(state.database), "--entities", str(state.entities), "--base-url", state.base, timeout=30)
    assert p.returncode == 0, f"trust-mark revoke exited {p.returncode}: {p.stderr[-800:]}"
    wait_for(lambda: ((s := mark_status(state, "intermediate", rp_token)) == "revoked", s), "RP mark revoked")

    before = {}
    for name in ENTITIES:
        _, h, c = fetch_entity_configuration(state.id(name))
        before[name] = (h["kid"], sorted(k["kid"] for k in c["jwks"]["keys"]))

    state.kill9()
    state.start()

    for name in ENTITIES:
        _, h, c = fetch_entity_configuration(state.id(name))
        after = (h["kid"], sorted(k["kid"] for k in c["jwks"]["keys"]))
        assert after == before[name], f"{name}: keys changed across a restart: before {before[name]}, after {after}"
    assert mark_status(state, "intermediate", rp_token) == "revoked", "revocation lost across a restart"
    _, _, rp = fetch_entity_configuration(state.id("relying-party"))
    assert RP_MARK not in [m.get("trust_mark_type") for m in rp.get("trust_marks") or []], "revoked RP mark is back after restart"
    for issuer, token in done.get("revoked", []):
        assert mark_status(state, issuer, token) == "revoked", "earlier revocation lost across a restart"
    if "rotated" in done:
        name, old_kid, _ = done["rotated"]
        assert old_kid in [k.get("kid") for k in historical_keys(state, name)], "historical key lost across a restart"
