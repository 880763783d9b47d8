"""Fetch, list and historical-keys endpoints (OpenID Federation 1.0, sections 8.1, 8.2, 8.7)."""
from __future__ import annotations

import pytest

from fedlib import (EC_TYPE, JWKSET_JWT_TYPE, PID_MARK, RP_MARK, assert_json_error, assert_ok, assert_public_jwks, assert_times,
                    content_type, describe, fetch_entity_configuration, get, verify_jws)

SUBORDINATES = {
    "ta": ["intermediate", "relying-party"],
    "intermediate": ["pid-provider", "pid-provider-haip", "relying-party", "wallet-provider"],
}
PAIRS = [(sup, sub) for sup, subs in SUBORDINATES.items() for sub in subs]


def _policy_from_entities_file(fed, superior: str) -> dict:
    import json

    raw = json.loads((fed.entities / f"{superior}.json").read_text())
    text = json.dumps(raw.get("subordinate_statement", {})).replace("{entity_id}", fed.id(superior)).replace("{base_url}", fed.base)
    return json.loads(text)


@pytest.mark.parametrize("superior,subject", PAIRS)
def test_fetch_subordinate_statement(fed, superior, subject):
    sup_id, sub_id = fed.id(superior), fed.id(subject)
    r = get(sup_id + "/fetch", params={"sub": sub_id})
    assert_ok(r, EC_TYPE)
    assert r.headers.get("Access-Control-Allow-Origin") == "*", f"CORS header missing on fetch: {dict(r.headers)}"
    _, _, sup_ec = fetch_entity_configuration(sup_id)
    _, sub_hdr, sub_ec = fetch_entity_configuration(sub_id)
    header, claims = verify_jws(r.text.strip(), sup_ec["jwks"], f"{superior} statement about {subject}", typ="entity-statement+jwt", algs=["ES256"])
    assert claims.get("iss") == sup_id and claims.get("sub") == sub_id, f"iss/sub: {claims.get('iss')} / {claims.get('sub')}"
    assert_times(claims, f"{superior} statement about {subject}")
    assert_public_jwks(claims.get("jwks"), "subordinate statement")
    own = {k["kid"]: k for k in sub_ec["jwks"]["keys"]}
    stated = {k["kid"]: k for k in claims["jwks"]["keys"]}
    assert stated == own, f"statement jwks must be the subordinate's own jwks: stated kids {sorted(stated)}, EC kids {sorted(own)}"
    assert sub_hdr["kid"] in stated, "the subordinate's current signing kid is not in its superior's statement"
    assert claims.get("source_endpoint") == sup_id + "/fetch", f"source_endpoint: {claims.get('source_endpoint')}"
    expected = _policy_from_entities_file(fed, superior)
    if "metadata_policy" in expected:
        assert claims.get("metadata_policy") == expected["metadata_policy"], f"metadata_policy differs from {superior}.json: {claims.get('metadata_policy')}"
    if "constraints" in expected:
        assert claims.get("constraints") == expected["constraints"], f"constraints differ from {superior}.json: {claims.get('constraints')}"
    for forbidden in ("authority_hints", "trust_marks", "trust_anchor_hints"):
        assert forbidden not in claims, f"{forbidden} must not appear in a subordinate statement"


def test_fetch_unknown_subject_is_not_found(fed):
    assert_json_error(get(fed.id("ta") + "/fetch", params={"sub": fed.id("nobody")}), 404, "not_found")


def test_fetch_of_a_non_subordinate_is_not_found(fed):
    # pid-provider exists but is not an immediate subordinate of the trust anchor.
    assert_json_error(get(fed.id("ta") + "/fetch", params={"sub": fed.id("pid-provider")}), 404, "not_found")


def test_fetch_without_sub_is_invalid_request(fed):
    assert_json_error(get(fed.id("ta") + "/fetch"), 400, "invalid_request")


def test_fetch_about_itself_is_invalid_request(fed):
    assert_json_error(get(fed.id("ta") + "/fetch", params={"sub": fed.id("ta")}), 400, "invalid_request")


def test_fetch_on_a_leaf_does_not_exist(fed):
    r = get(fed.id("pid-provider") + "/fetch", params={"sub": fed.id("wallet-provider")})
    assert_json_error(r, 404, ("not_found", "invalid_request"))


# ---------------------------------------------------------------------------- list


def _list(fed, superior: str, params=None):
    r = get(fed.id(superior) + "/list", params=params)
    assert r.status_code == 200, describe(r)
    assert content_type(r) == "application/json", describe(r)
    assert r.headers.get("Access-Control-Allow-Origin") == "*", f"CORS header missing on list: {dict(r.headers)}"
    body = r.json()
    assert isinstance(body, list) and all(isinstance(x, str) for x in body), f"list must be a JSON array of strings: {body!r}"
    assert len(set(body)) == len(body), f"duplicates in list: {body}"
    return set(body)


@pytest.mark.parametrize("superior", sorted(SUBORDINATES))
def test_list_all_subordinates(fed, superior):
    assert _list(fed, superior) == {fed.id(n) for n in SUBORDINATES[superior]}


@pytest.mark.parametrize("superior,params,expected", [
    ("intermediate", {"entity_type": "openid_credential_issuer"}, ["pid-provider", "pid-provider-haip"]),
    ("intermediate", {"entity_type": "wallet_provider"}, ["wallet-provider"]),
    ("intermediate", {"entity_type": ["openid_credential_issuer", "wallet_provider"]},
     ["pid-provider", "pid-provider-haip", "wallet-provider"]),
    ("intermediate", {"entity_type": "openid_credential_verifier"}, ["relying-party"]),
    ("ta", {"entity_type": "openid_credential_issuer"}, []),
    ("ta", {"intermediate": "true"}, ["intermediate"]),
    ("intermediate", {"intermediate": "true"}, []),
    ("intermediate", {"trust_marked": "true"}, ["pid-provider", "relying-party"]),
    ("intermediate", {"trust_mark_type": PID_MARK}, ["pid-provider"]),
    ("intermediate", {"trust_mark_type": RP_MARK}, ["relying-party"]),
    ("ta", {"trust_mark_type": RP_MARK}, ["relying-party"]),
    ("ta", {"trust_mark_type": PID_MARK}, []),
])
def test_list_filters(fed, superior, params, expected):
    got = _list(fed, superior, params)
    assert got == {fed.id(n) for n in expected}, f"{superior}/list {params}: got {sorted(got)}, expected {expected}"


def test_list_unknown_parameter_is_ignored(fed):
    """Section 8: parameters a server does not understand are ignored (unsupported_parameter is for
    defined filters the server does not support)."""
    r = get(fed.id("ta") + "/list", params={"colour": "blue"})
    assert r.status_code == 200, f"an unknown parameter must be ignored: {r.status_code} {r.text[:300]}"
    assert set(r.json()) == _list(fed, "ta", {}), f"list?colour=blue differs from list: {r.text[:300]}"


@pytest.mark.parametrize("param", ["trust_marked", "intermediate"])
def test_list_bad_boolean(fed, param):
    assert_json_error(get(fed.id("ta") + "/list", params={param: "maybe"}), 400, "invalid_request")


def test_list_on_a_leaf_does_not_exist(fed):
    assert_json_error(get(fed.id("wallet-provider") + "/list"), 404, ("not_found", "invalid_request"))


# ---------------------------------------------------------------------------- historical keys


@pytest.mark.parametrize("name", ["ta", "intermediate", "pid-provider", "wallet-provider", "relying-party"])
def test_historical_keys_initially_empty(fed, name):
    eid = fed.id(name)
    r = get(eid + "/historical-keys")
    assert_ok(r, JWKSET_JWT_TYPE)
    _, _, ec = fetch_entity_configuration(eid)
    header, claims = verify_jws(r.text.strip(), ec["jwks"], f"historical keys of {name}", typ="jwk-set+jwt")
    assert claims.get("iss") == eid, f"iss: {claims.get('iss')}"
    assert_times(claims, "historical keys", require_exp=False)
    assert claims.get("keys") == [], f"a fresh federation has no historical keys, got {claims.get('keys')}"
