"""Self-check of the test suite's own policy engine (oidf_policy.py) against the public
metadata policy test vectors, so that comparing the server with it means something.
Needs no server."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import oidf_policy
from fedlib import normalize

# Copied into the repository (Tests/Fixtures/README.md names the source), so a clone runs it.
VECTORS = json.loads(
    (Path(__file__).resolve().parents[1] / "Fixtures" / "metadata-policy-test-vectors-2025-02-13.json").read_text())


def test_engine_passes_all_policy_vectors():
    failures = []
    for v in VECTORS:
        try:
            merged = oidf_policy.merge_policies([{"t": v["TA"]}, {"t": v["INT"]}])["t"]
        except oidf_policy.PolicyError as e:
            if v.get("error") != "invalid_policy":
                failures.append((v["n"], f"unexpected policy error {e}"))
            continue
        if "merged" in v and normalize(merged) != normalize(v["merged"]):
            failures.append((v["n"], f"merged {merged} != {v['merged']}"))
        try:
            resolved = oidf_policy.apply_entity_type_policy(merged, v["metadata"])
        except oidf_policy.MetadataError as e:
            if v.get("error") != "invalid_metadata":
                failures.append((v["n"], f"unexpected metadata error {e}"))
            continue
        if "error" in v:
            failures.append((v["n"], f"expected {v['error']}, got {resolved}"))
        elif resolved != v["resolved"]:
            failures.append((v["n"], f"resolved {resolved} != {v['resolved']}"))
    assert not failures, f"{len(failures)} of {len(VECTORS)} vectors fail, e.g. {failures[:3]}"


def test_engine_on_the_demo_policies():
    ta = {"oauth_authorization_server": {
        "grant_types_supported": {"subset_of": ["authorization_code", "pre", "refresh_token"], "superset_of": ["authorization_code"]},
        "code_challenge_methods_supported": {"value": ["S256"]},
        "dpop_signing_alg_values_supported": {"subset_of": ["ES256", "ES384"], "essential": True}}}
    inter = {"oauth_authorization_server": {"grant_types_supported": {"subset_of": ["authorization_code", "pre"]}}}
    merged = oidf_policy.merge_policies([ta, inter])
    md = {"oauth_authorization_server": {"grant_types_supported": ["authorization_code", "pre", "refresh_token", "password"],
                                         "code_challenge_methods_supported": ["S256", "plain"],
                                         "dpop_signing_alg_values_supported": ["ES256", "RS256"]}}
    out = oidf_policy.apply_policy(merged, md)["oauth_authorization_server"]
    assert out == {"grant_types_supported": ["authorization_code", "pre"], "code_challenge_methods_supported": ["S256"],
                   "dpop_signing_alg_values_supported": ["ES256"]}
    with pytest.raises(oidf_policy.MetadataError):
        oidf_policy.apply_policy(merged, {"oauth_authorization_server": {}})
