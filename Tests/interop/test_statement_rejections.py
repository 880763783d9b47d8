"""OpenID Federation 1.0 section 3 rules checked while resolving remote statements.

A Python host acts as a remote intermediate (`int`, a subordinate of our Trust Anchor) and its
leaves.  Each leaf's Entity Configuration, or `int`'s Subordinate Statement about it, carries
one defect that section 3 forbids; resolving it must fail with a 4xx JSON error that section
8.9 allows for a chain that does not validate.  A clean control leaf resolves."""
from __future__ import annotations

import pytest

from fedlib import RESOLVE_TYPE, assert_json_error, assert_ok, describe, fetch_entity_configuration, get, verify_jws
from harness import TrustbedServer
from remotefed import RemoteFederation, trust_anchor_entities

REFUSAL_CODES = ("invalid_trust_chain", "invalid_subject", "invalid_metadata", "not_found")
RP_METADATA = {"openid_relying_party": {"client_name": "Remote RP", "redirect_uris": ["https://rp.example/cb"],
                                        "response_types": ["code"]}}
POLICY = {"openid_relying_party": {"response_types": {"subset_of": ["code"]}}}
MARK_TYPE = "https://trustbed.example/trust-marks/remote-test"

# name -> (where the defect is, claims added).  "ec": the leaf's Entity Configuration;
# "sub": int's Subordinate Statement about the leaf.
CASES = {
    # 3: crit lists extension claims only; a claim this specification defines must not be listed.
    "crit-spec-claim": ("ec", {"crit": ["jwks"]}),
    # 3: metadata_policy, metadata_policy_crit and constraints appear only in Subordinate Statements.
    "ec-metadata-policy": ("ec", {"metadata_policy": POLICY}),
    "ec-metadata-policy-crit": ("ec", {"metadata_policy_crit": ["regexp"]}),
    "ec-constraints": ("ec", {"constraints": {"max_path_length": 1}}),
    # 3 / 5: metadata parameters with null values must not be used.
    "null-metadata-value": ("ec", {"metadata": {"openid_relying_party": {"client_name": None, "redirect_uris": ["https://rp.example/cb"]}}}),
    # 3: authority_hints, trust_marks, trust_mark_issuers and trust_mark_owners only in Entity Configurations.
    "sub-authority-hints": ("sub", {"authority_hints": ["https://elsewhere.example"]}),
    "sub-trust-marks": ("sub", {"trust_marks": [{"trust_mark_type": MARK_TYPE, "trust_mark": "x.y.z"}]}),
    "sub-trust-mark-issuers": ("sub", {"trust_mark_issuers": {MARK_TYPE: ["https://issuer.example"]}}),
    "sub-trust-mark-owners": ("sub", {"trust_mark_owners": {MARK_TYPE: {"sub": "https://owner.example", "jwks": {"keys": []}}}}),
    # 3 / 6.1.4: metadata_policy_crit must not be empty and must not name standard operators.
    "empty-policy-crit": ("sub", {"metadata_policy": POLICY, "metadata_policy_crit": []}),
    "policy-crit-standard-operator": ("sub", {"metadata_policy": POLICY, "metadata_policy_crit": ["value"]}),
    # 3: source_endpoint is a URL (of the fetch endpoint that issued the statement).
    "source-endpoint-not-url": ("sub", {"source_endpoint": "not a url"}),
}


@pytest.fixture(scope="module")
def rejecting(trustbed_bin, session_tmp):
    remote = RemoteFederation().start()
    inter = remote.add_superior("int", [])
    server = TrustbedServer(session_tmp / "rejections", label="rejections-server",
                            entities=trust_anchor_entities({inter.entity_id: {"jwks": inter.jwks, "entity_types": ["federation_entity"]}}))
    server.start()
    inter.authority_hints = [server.id("ta")]
    for name in ["control", *CASES]:
        where, extra = CASES.get(name, ("ec", {}))
        leaf = remote.add(name, [inter.entity_id], metadata=dict(RP_METADATA))
        if where == "ec":
            leaf.ec_extra.update(extra)
        inter.subordinates[leaf.entity_id] = {"jwks": leaf.jwks, "extra": extra if where == "sub" else {}}
    yield server, remote
    server.stop()
    remote.stop()


def _resolve(server, remote, name):
    return get(server.id("ta") + "/resolve", params={"sub": remote.id(name), "trust_anchor": server.id("ta")})


def test_clean_control_resolves(rejecting):
    server, remote = rejecting
    r = _resolve(server, remote, "control")
    assert_ok(r, RESOLVE_TYPE)
    _, _, ta = fetch_entity_configuration(server.id("ta"))
    _, claims = verify_jws(r.text.strip(), ta["jwks"], "control resolve", typ="resolve-response+jwt")
    assert len(claims["trust_chain"]) == 4, f"control chain: leaf EC, int about leaf, TA about int, TA EC; got {len(claims['trust_chain'])}"
    assert claims["metadata"]["openid_relying_party"]["client_name"] == "Remote RP", claims["metadata"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_statement_defect_stops_resolution(rejecting, name):
    server, remote = rejecting
    r = _resolve(server, remote, name)
    where, extra = CASES[name]
    statement = "the leaf's Entity Configuration" if where == "ec" else "the intermediate's Subordinate Statement"
    assert 400 <= r.status_code < 500, f"{name}: {statement} with {extra} must stop resolution with a 4xx: {describe(r)}"
    assert_json_error(r, r.status_code, REFUSAL_CODES)
    # The remote statement was really looked at (the refusal is not the allow-list or a fetch error).
    assert remote.hits_for(f"/{name}/.well-known/openid-federation"), f"{name}: the leaf's configuration was never fetched"
