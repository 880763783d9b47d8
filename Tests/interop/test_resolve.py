"""Resolve endpoint (OpenID Federation 1.0, section 8.3) with independent chain validation."""
from __future__ import annotations

import pytest

from fedlib import (PID_MARK, build_trust_chain, RESOLVE_TYPE, RP_MARK, assert_json_error, assert_ok, assert_times, decode_jws, describe, diff,
                    fetch_entity_configuration, get, resolve_metadata_independently, validate_trust_chain, verify_jws,
                    verify_trust_mark)

# subject -> expected chain (issuers of statements after the subject's EC, the last being the TA's EC)
CHAIN_LENGTH = {"pid-provider": 4, "wallet-provider": 4, "relying-party": 3, "intermediate": 3, "ta": 1}


def resolve(fed, subject: str, resolver: str = "ta", trust_anchor: str = "ta", entity_types=None):
    params = {"sub": fed.id(subject), "trust_anchor": fed.id(trust_anchor)}
    if entity_types:
        params["entity_type"] = entity_types
    r = get(fed.id(resolver) + "/resolve", params=params)
    assert_ok(r, RESOLVE_TYPE)
    assert r.headers.get("Access-Control-Allow-Origin") == "*", f"CORS header missing on resolve: {dict(r.headers)}"
    _, _, resolver_ec = fetch_entity_configuration(fed.id(resolver))
    header, claims = verify_jws(r.text.strip(), resolver_ec["jwks"], f"resolve response from {resolver}", typ="resolve-response+jwt", algs=["ES256"])
    assert claims.get("iss") == fed.id(resolver), f"resolve iss {claims.get('iss')} != resolver {fed.id(resolver)}"
    assert claims.get("sub") == fed.id(subject), f"resolve sub {claims.get('sub')} != {fed.id(subject)}"
    assert_times(claims, "resolve response")
    for c in ("metadata", "trust_chain"):
        assert c in claims, f"resolve response lacks {c}: {sorted(claims)}"
    return claims


def check_resolution(fed, subject: str, claims: dict) -> list[dict]:
    """Validates the returned chain independently and recomputes the metadata."""
    chain = claims["trust_chain"]
    statements = validate_trust_chain(chain, fed.id(subject), fed.id("ta"))
    assert len(chain) == CHAIN_LENGTH[subject], (
        f"{subject}: expected the shortest chain of {CHAIN_LENGTH[subject]} statements, got {len(chain)}: "
        + " -> ".join(f"{s.get('iss')} about {s.get('sub')}" for s in statements))
    min_exp = min(s["exp"] for s in statements)
    assert claims["exp"] <= min_exp, f"resolve exp {claims['exp']} is later than the chain's earliest exp {min_exp}"
    # The chain is the live one: the TA EC in it is signed with the key the TA publishes now.
    _, _, ta_live = fetch_entity_configuration(fed.id("ta"))
    verify_jws(chain[-1], ta_live["jwks"], "TA EC in chain against the live TA keys")
    return statements


@pytest.mark.parametrize("subject", ["pid-provider", "wallet-provider", "relying-party", "intermediate"])
def test_resolved_metadata_matches_independent_policy_application(fed, subject):
    claims = resolve(fed, subject)
    statements = check_resolution(fed, subject, claims)
    expected = resolve_metadata_independently(statements)
    problems = diff(expected, claims["metadata"])
    assert not problems, f"{subject}: resolved metadata differs from independent policy application:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("subject", ["pid-provider", "wallet-provider", "relying-party", "intermediate"])
def test_resolve_agrees_with_an_independently_crawled_chain(fed, subject):
    """Build the chain ourselves (EC + fetch endpoints), validate it, resolve its metadata, compare."""
    own = build_trust_chain(fed.id(subject), fed.id("ta"))
    statements = validate_trust_chain(own, fed.id(subject), fed.id("ta"))
    claims = resolve(fed, subject)
    server_route = [(c.get("iss"), c.get("sub")) for c in (decode_jws(s)[1] for s in claims["trust_chain"])]
    own_route = [(c["iss"], c["sub"]) for c in statements]
    assert server_route == own_route, f"server chain route {server_route} differs from the crawled shortest chain {own_route}"
    problems = diff(resolve_metadata_independently(statements), claims["metadata"])
    assert not problems, f"{subject}: server metadata differs from our own resolution:\n  " + "\n  ".join(problems)


def test_pid_provider_concrete_resolved_values(fed):
    md = resolve(fed, "pid-provider")["metadata"]
    asrv = md["oauth_authorization_server"]
    assert set(asrv["grant_types_supported"]) == {"authorization_code", "urn:ietf:params:oauth:grant-type:pre-authorized_code"}, asrv["grant_types_supported"]
    assert len(asrv["grant_types_supported"]) == 2, asrv["grant_types_supported"]
    assert asrv["code_challenge_methods_supported"] == ["S256"], asrv
    assert asrv["require_pushed_authorization_requests"] is True, asrv
    assert asrv["dpop_signing_alg_values_supported"] == ["ES256"], asrv
    assert asrv["token_endpoint_auth_methods_supported"] == ["attest_jwt_client_auth"], asrv
    ci = md["openid_credential_issuer"]
    assert ci["batch_credential_issuance"] == {"batch_size": 10}, ci.get("batch_credential_issuance")
    assert ci["display"] == [{"name": "Trustbed Demo PID Provider", "locale": "en"}], ci.get("display")
    assert ci["credential_issuer"] == fed.id("pid-provider")
    fe = md["federation_entity"]
    assert "federation-ops@trustbed.example" in fe.get("contacts", []), fe
    assert fe.get("policy_uri") == fed.id("ta") + "/policy", fe


def test_relying_party_concrete_resolved_values(fed):
    md = resolve(fed, "relying-party")["metadata"]
    v = md["openid_credential_verifier"]
    assert v["authorization_signed_response_alg"] == "ES256", v
    assert v["response_types"] == ["vp_token"], v
    assert "federation-ops@trustbed.example" in v.get("contacts", []), v


@pytest.mark.parametrize("subject,mark,issuer", [("pid-provider", PID_MARK, "ta"), ("relying-party", RP_MARK, "intermediate")])
def test_resolve_returns_verified_trust_marks(fed, subject, mark, issuer):
    claims = resolve(fed, subject)
    tms = claims.get("trust_marks")
    assert isinstance(tms, list), f"trust_marks must be an array: {tms!r}"
    by_type = {t.get("trust_mark_type"): t.get("trust_mark") for t in tms}
    assert set(by_type) == {mark}, f"{subject}: expected trust mark types {[mark]}, got {sorted(by_type)}"
    _, _, ta = fetch_entity_configuration(fed.id("ta"))
    c = verify_trust_mark(by_type[mark], ta, expected_type=mark, expected_sub=fed.id(subject))
    assert c["iss"] == fed.id(issuer)


def test_wallet_provider_has_no_trust_marks(fed):
    claims = resolve(fed, "wallet-provider")
    assert not claims.get("trust_marks"), f"wallet-provider has no marks: {claims.get('trust_marks')}"


def test_resolve_entity_type_filter(fed):
    claims = resolve(fed, "pid-provider", entity_types="openid_credential_issuer")
    assert set(claims["metadata"]) == {"openid_credential_issuer"}, f"entity_type filter: got {sorted(claims['metadata'])}"
    check_resolution(fed, "pid-provider", claims)


def test_resolve_entity_type_filter_repeated(fed):
    claims = resolve(fed, "pid-provider", entity_types=["openid_credential_issuer", "oauth_authorization_server"])
    assert set(claims["metadata"]) == {"openid_credential_issuer", "oauth_authorization_server"}, sorted(claims["metadata"])


def test_resolve_at_intermediate(fed):
    claims = resolve(fed, "pid-provider", resolver="intermediate")
    statements = check_resolution(fed, "pid-provider", claims)
    assert not diff(resolve_metadata_independently(statements), claims["metadata"])


def test_resolve_trust_anchor_itself(fed):
    claims = resolve(fed, "ta")
    chain = claims["trust_chain"]
    assert len(chain) == 1, f"resolving the TA against itself is a chain of one, got {len(chain)}"
    statements = validate_trust_chain(chain, fed.id("ta"), fed.id("ta"))
    assert not diff(statements[0]["metadata"], claims["metadata"]), diff(statements[0]["metadata"], claims["metadata"])


def test_resolve_unknown_trust_anchor(fed):
    r = get(fed.id("ta") + "/resolve", params={"sub": fed.id("pid-provider"), "trust_anchor": fed.id("not-a-ta")})
    assert_json_error(r, 404, "invalid_trust_anchor")


def test_resolve_with_a_non_anchor_as_trust_anchor(fed):
    # intermediate exists but is not a trust anchor: no chain to it.
    r = get(fed.id("ta") + "/resolve", params={"sub": fed.id("pid-provider"), "trust_anchor": fed.id("intermediate")})
    assert_json_error(r, 404, "invalid_trust_anchor")


@pytest.mark.parametrize("missing", ["sub", "trust_anchor"])
def test_resolve_missing_parameter(fed, missing):
    params = {"sub": fed.id("pid-provider"), "trust_anchor": fed.id("ta")}
    del params[missing]
    assert_json_error(get(fed.id("ta") + "/resolve", params=params), 400, "invalid_request")


def test_resolve_unknown_subject(fed):
    r = get(fed.id("ta") + "/resolve", params={"sub": fed.id("nobody"), "trust_anchor": fed.id("ta")})
    assert 400 <= r.status_code < 500, f"unknown subject must be a 4xx: {describe(r)}"
    assert_json_error(r, r.status_code, ("invalid_subject", "not_found"))


def test_resolve_unreachable_subject_is_not_a_server_error(fed):
    r = get(fed.id("ta") + "/resolve", params={"sub": "http://127.0.0.1:9/nowhere", "trust_anchor": fed.id("ta")})
    assert 400 <= r.status_code < 500, f"unresolvable subject must be a 4xx: {describe(r)}"
    assert_json_error(r, r.status_code, ("invalid_subject", "not_found", "invalid_request"))
