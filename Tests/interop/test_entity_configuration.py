"""Entity Configurations of the demo federation (OpenID Federation 1.0, sections 3 and 9)."""
from __future__ import annotations

import pytest
import requests

from fedlib import (EC_TYPE, PID_MARK, RP_MARK, assert_ok, assert_public_jwks, assert_times, decode_jws, describe,
                    fetch_entity_configuration, get, thumbprint, verify_jws, verify_trust_mark)

ALL = ["ta", "intermediate", "pid-provider", "wallet-provider", "relying-party"]
SUPERIORS = ["ta", "intermediate"]
LEAVES = ["pid-provider", "wallet-provider", "relying-party"]
TM_ISSUERS = ["ta", "intermediate"]
AUTHORITY_HINTS = {
    "intermediate": ["ta"],
    "pid-provider": ["intermediate"],
    "wallet-provider": ["intermediate"],
    "relying-party": ["intermediate", "ta"],
}


@pytest.mark.parametrize("name", ALL)
def test_entity_configuration_is_a_valid_self_signed_statement(fed, name):
    eid = fed.id(name)
    resp = get(eid + "/.well-known/openid-federation")
    assert_ok(resp, EC_TYPE)
    assert resp.headers.get("Access-Control-Allow-Origin") == "*", f"missing CORS header: {describe(resp)} headers={dict(resp.headers)}"
    token = resp.text.strip()
    header, claims = decode_jws(token, f"EC of {name}")
    assert header.get("typ") == "entity-statement+jwt", f"EC typ: {header}"
    assert header.get("alg") == "ES256", f"EC alg: {header}"
    keys = assert_public_jwks(claims.get("jwks"), f"EC of {name}")
    for k in keys:
        assert k["kty"] == "EC" and k.get("crv") == "P-256", f"EC of {name}: expected P-256 EC keys, got {k}"
        assert k["kid"] == thumbprint(k), f"EC of {name}: kid {k['kid']} is not the RFC 7638 thumbprint {thumbprint(k)}"
    assert header.get("kid") in [k["kid"] for k in keys], f"EC of {name}: header kid {header.get('kid')} not in own jwks"
    verify_jws(token, claims["jwks"], f"EC of {name}", typ="entity-statement+jwt", algs=["ES256"])
    assert claims.get("iss") == eid and claims.get("sub") == eid, f"EC of {name}: iss/sub must be {eid}: {claims.get('iss')}/{claims.get('sub')}"
    assert_times(claims, f"EC of {name}")
    assert claims["exp"] - claims["iat"] == 86400, f"EC of {name}: default lifetime 86400 expected, got exp-iat={claims['exp'] - claims['iat']}"
    assert isinstance(claims.get("metadata"), dict) and "federation_entity" in claims["metadata"], f"EC of {name}: metadata.federation_entity missing: {claims.get('metadata')}"


@pytest.mark.parametrize("name", ALL)
def test_authority_hints(fed, name):
    _, _, claims = fetch_entity_configuration(fed.id(name))
    if name == "ta":
        assert "authority_hints" not in claims, f"the trust anchor must not have authority_hints: {claims.get('authority_hints')}"
    else:
        expected = [fed.id(h) for h in AUTHORITY_HINTS[name]]
        assert claims.get("authority_hints") == expected, f"{name}: authority_hints {claims.get('authority_hints')} != {expected}"


@pytest.mark.parametrize("name", ALL)
def test_federation_entity_endpoints(fed, name):
    eid = fed.id(name)
    _, _, claims = fetch_entity_configuration(eid)
    fe = claims["metadata"]["federation_entity"]
    assert fe.get("federation_historical_keys_endpoint") == eid + "/historical-keys", f"{name}: {fe}"
    superior = {"federation_fetch_endpoint": "/fetch", "federation_list_endpoint": "/list", "federation_resolve_endpoint": "/resolve"}
    tm = {"federation_trust_mark_endpoint": "/trust-mark", "federation_trust_mark_status_endpoint": "/trust-mark-status",
          "federation_trust_mark_list_endpoint": "/trust-mark-list"}
    for key, path in superior.items():
        if name in SUPERIORS:
            assert fe.get(key) == eid + path, f"{name}: {key} should be {eid + path}, metadata: {fe}"
        elif key != "federation_resolve_endpoint":
            assert key not in fe, f"leaf {name} advertises {key} but has no subordinates: {fe}"
    for key, path in tm.items():
        if name in TM_ISSUERS:
            assert fe.get(key) == eid + path, f"{name}: {key} should be {eid + path}, metadata: {fe}"
        else:
            assert key not in fe, f"{name} issues no trust marks but advertises {key}"
    # Every advertised endpoint exists (answers something other than 404/405/5xx without parameters).
    for key, url in fe.items():
        if key.startswith("federation_") and key.endswith("_endpoint"):
            r = requests.post(url, timeout=10) if key == "federation_trust_mark_status_endpoint" else get(url)
            assert r.status_code not in (404, 405) and r.status_code < 500, f"{name}: advertised {key} does not work: {describe(r)}"


def test_demo_metadata_substitution(fed):
    _, _, pid = fetch_entity_configuration(fed.id("pid-provider"))
    eid = fed.id("pid-provider")
    ci = pid["metadata"]["openid_credential_issuer"]
    assert ci["credential_issuer"] == eid and ci["credential_endpoint"] == eid + "/credential", f"{{entity_id}} not substituted: {ci}"
    assert pid["metadata"]["oauth_authorization_server"]["issuer"] == eid
    _, _, ta = fetch_entity_configuration(fed.id("ta"))
    fe = ta["metadata"]["federation_entity"]
    assert fe["homepage_uri"] == fed.base + "/", f"{{base_url}} not substituted: {fe}"
    assert fe["policy_uri"] == fed.id("ta") + "/policy"


def test_trust_anchor_declares_trust_mark_issuers_and_owners(fed):
    ta_id = fed.id("ta")
    _, _, ta = fetch_entity_configuration(ta_id)
    assert ta.get("trust_mark_issuers") == {PID_MARK: [ta_id], RP_MARK: [fed.id("intermediate")]}, f"trust_mark_issuers: {ta.get('trust_mark_issuers')}"
    owners = ta.get("trust_mark_owners")
    assert isinstance(owners, dict) and set(owners) == {RP_MARK}, f"trust_mark_owners: {owners}"
    owner = owners[RP_MARK]
    assert owner.get("sub") == ta_id, f"owner sub: {owner}"
    assert_public_jwks(owner.get("jwks"), "trust_mark_owners jwks")


def _marks(claims: dict) -> dict:
    marks = claims.get("trust_marks") or []
    assert isinstance(marks, list), f"trust_marks must be an array: {marks!r}"
    out = {}
    for m in marks:
        assert isinstance(m, dict) and set(m) >= {"trust_mark_type", "trust_mark"}, f"trust_marks entry must be {{trust_mark_type, trust_mark}}: {m!r:.300}"
        out[m["trust_mark_type"]] = m["trust_mark"]
    return out


def test_pid_provider_carries_trust_mark_from_ta(fed):
    _, _, ta = fetch_entity_configuration(fed.id("ta"))
    _, _, pid = fetch_entity_configuration(fed.id("pid-provider"))
    marks = _marks(pid)
    assert set(marks) == {PID_MARK}, f"pid-provider trust_marks types: {sorted(marks)}"
    c = verify_trust_mark(marks[PID_MARK], ta, expected_type=PID_MARK, expected_sub=fed.id("pid-provider"))
    assert c["iss"] == fed.id("ta")
    assert c.get("exp", 0) - c["iat"] == 86400, f"pid-provider mark lifetime: {c}"
    assert c.get("logo_uri") == fed.id("ta") + "/static/pid-provider-mark.svg", f"logo_uri: {c}"
    assert c.get("ref") == fed.id("ta") + "/trust-marks/pid-provider", f"ref: {c}"
    assert "delegation" not in c, "pid-provider mark type has no owner, so no delegation expected"


def test_relying_party_carries_delegated_trust_mark(fed):
    _, _, ta = fetch_entity_configuration(fed.id("ta"))
    _, _, rp = fetch_entity_configuration(fed.id("relying-party"))
    marks = _marks(rp)
    assert set(marks) == {RP_MARK}, f"relying-party trust_marks types: {sorted(marks)}"
    c = verify_trust_mark(marks[RP_MARK], ta, expected_type=RP_MARK, expected_sub=fed.id("relying-party"))
    assert c["iss"] == fed.id("intermediate")
    assert c.get("exp", 0) - c["iat"] == 43200, f"certified-relying-party mark lifetime 43200 expected: {c}"
    assert "delegation" in c


@pytest.mark.parametrize("name", ["ta", "intermediate", "wallet-provider"])
def test_entities_without_marks_carry_none(fed, name):
    _, _, claims = fetch_entity_configuration(fed.id(name))
    assert not claims.get("trust_marks"), f"{name} should carry no trust marks: {claims.get('trust_marks')}"


def test_head_request(fed):
    url = fed.id("ta") + "/.well-known/openid-federation"
    r = requests.head(url, timeout=10)
    assert r.status_code == 200, describe(r)
    assert r.headers.get("Content-Type", "").startswith(EC_TYPE), f"HEAD Content-Type: {r.headers}"
    assert r.content == b"", "HEAD must not return a body"


def test_health(fed):
    r = get(fed.base + "/health")
    assert r.status_code == 200, describe(r)
    assert r.json().get("status") == "ok", describe(r)
