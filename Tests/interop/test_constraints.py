"""Negative resolution cases on a purpose-built federation: constraints and policy errors must
stop a chain (4xx JSON error, never a 5xx, never a silently wrong answer)."""
from __future__ import annotations

import pytest

from fedlib import (RESOLVE_TYPE, assert_json_error, assert_ok, build_trust_chain, describe, diff, fetch_entity_configuration,
                    get, resolve_metadata_independently, validate_trust_chain, verify_jws)

CI = lambda extra=None: dict({"credential_issuer": "{entity_id}", "credential_endpoint": "{entity_id}/credential"}, **(extra or {}))

ENTITIES = {
    # Trust anchor 1: no intermediates allowed, only credential issuers.
    "ta": {
        "trust_anchor": True,
        "metadata": {"federation_entity": {"organization_name": "Constrained TA"}},
        "subordinate_statement": {"constraints": {"max_path_length": 0, "allowed_entity_types": ["openid_credential_issuer"]}},
    },
    "intermediate": {"authority_hints": ["ta"], "metadata": {"federation_entity": {"organization_name": "Intermediate"}}},
    "deep": {"authority_hints": ["intermediate"], "metadata": {"openid_credential_issuer": CI()}},
    "direct": {"authority_hints": ["ta"], "metadata": {
        "openid_credential_issuer": CI(),
        "wallet_provider": {"wallet_attestation_signing_alg_values_supported": ["ES256"]}}},
    # Trust anchor 2: policies that conflict or that metadata violates.
    "ta2": {
        "trust_anchor": True,
        "metadata": {"federation_entity": {"organization_name": "Strict TA"}},
        "subordinate_statement": {"metadata_policy": {"openid_credential_issuer": {
            "credential_issuer": {"value": "https://x.example"},
            "display": {"essential": True}}}},
    },
    "int2": {"authority_hints": ["ta2"], "metadata": {"federation_entity": {"organization_name": "Conflicting intermediate"}},
             "subordinate_statement": {"metadata_policy": {"openid_credential_issuer": {"credential_issuer": {"value": "https://y.example"}}}}},
    "conflicted": {"authority_hints": ["int2"], "metadata": {"openid_credential_issuer": CI({"display": [{"name": "c"}]})}},
    "bare": {"authority_hints": ["ta2"], "metadata": {"openid_credential_issuer": CI()}},
    "good2": {"authority_hints": ["ta2"], "metadata": {"openid_credential_issuer": CI({"display": [{"name": "g"}]})}},
}


@pytest.fixture(scope="module")
def cfed(trustbed_bin, session_tmp):
    from harness import TrustbedServer

    server = TrustbedServer(session_tmp / "constraints", entities=ENTITIES, label="constraints-server").start()
    yield server
    server.stop()


def _resolve(server, subject, ta):
    return get(server.id("ta") + "/resolve" if ta == "ta" else server.id("ta2") + "/resolve",
               params={"sub": server.id(subject), "trust_anchor": server.id(ta)})


def _refused(resp):
    assert 400 <= resp.status_code < 500, f"an invalid chain must be refused with a 4xx: {describe(resp)}"
    assert_json_error(resp, resp.status_code, ("invalid_trust_chain", "invalid_subject", "not_found", "invalid_metadata", "invalid_request"))


def test_max_path_length_is_enforced(cfed):
    # The only chain from deep to ta passes through an intermediate, which ta's max_path_length 0 forbids.
    _refused(_resolve(cfed, "deep", "ta"))


def test_allowed_entity_types_removes_other_types(cfed):
    r = _resolve(cfed, "direct", "ta")
    if r.status_code != 200:
        _refused(r)  # rejecting the entity outright is also defensible
        return
    assert_ok(r, RESOLVE_TYPE)
    _, _, ta = fetch_entity_configuration(cfed.id("ta"))
    _, claims = verify_jws(r.text.strip(), ta["jwks"], "resolve response", typ="resolve-response+jwt")
    assert "wallet_provider" not in claims["metadata"], f"wallet_provider is not an allowed entity type but was resolved: {sorted(claims['metadata'])}"
    assert "openid_credential_issuer" in claims["metadata"], sorted(claims["metadata"])
    statements = validate_trust_chain(claims["trust_chain"], cfed.id("direct"), cfed.id("ta"))
    assert not diff(resolve_metadata_independently(statements), claims["metadata"])


def test_policy_merge_conflict_is_refused(cfed):
    _refused(_resolve(cfed, "conflicted", "ta2"))


def test_metadata_violating_policy_is_refused(cfed):
    _refused(_resolve(cfed, "bare", "ta2"))


def test_compliant_entity_resolves_with_policy_applied(cfed):
    r = _resolve(cfed, "good2", "ta2")
    assert_ok(r, RESOLVE_TYPE)
    _, _, ta2 = fetch_entity_configuration(cfed.id("ta2"))
    _, claims = verify_jws(r.text.strip(), ta2["jwks"], "resolve response", typ="resolve-response+jwt")
    assert claims["metadata"]["openid_credential_issuer"]["credential_issuer"] == "https://x.example", claims["metadata"]
    own = build_trust_chain(cfed.id("good2"), cfed.id("ta2"))
    statements = validate_trust_chain(own, cfed.id("good2"), cfed.id("ta2"))
    assert not diff(resolve_metadata_independently(statements), claims["metadata"])


def test_wrong_trust_anchor_for_subject(cfed):
    # good2 only chains to ta2; asking for ta must fail cleanly.
    _refused(_resolve(cfed, "good2", "ta"))


def test_cli_resolve_refuses_invalid_chain(cfed):
    from harness import run_cli

    p = run_cli("resolve", cfed.id("conflicted"), "--trust-anchor", cfed.id("ta2"), timeout=60)
    assert p.returncode != 0, f"CLI resolved a chain with conflicting policies: {p.stdout[:500]}"
    assert p.stderr.strip(), "CLI must explain the failure on stderr"
