"""A federation spread over two servers: B hosts only a Trust Anchor whose subordinate (an
intermediate) lives on server A together with a leaf.  Resolution has to cross HTTP."""
from __future__ import annotations

import json

from fedlib import (EC_TYPE, RESOLVE_TYPE, assert_ok, diff, fetch_entity_configuration, get, resolve_metadata_independently,
                    validate_trust_chain, verify_jws)
from harness import free_port, run_cli

B_POLICY = {"openid_credential_issuer": {"batch_credential_issuance": {"default": {"batch_size": 3}}}}


def test_resolve_across_two_servers(make_server):
    q = free_port()
    b_ta = f"http://127.0.0.1:{q}/ta"
    a_port = free_port()
    while a_port == q:
        a_port = free_port()
    a = make_server("server-a", port=a_port, entities={
        "intermediate": {
            "authority_hints": [b_ta],
            "metadata": {"federation_entity": {"organization_name": "Intermediate on A"}},
        },
        "leaf": {
            "authority_hints": ["intermediate"],
            "metadata": {
                "federation_entity": {"organization_name": "Leaf on A"},
                "openid_credential_issuer": {
                    "credential_issuer": "{entity_id}",
                    "credential_endpoint": "{entity_id}/credential",
                    "credential_configurations_supported": {"x": {"format": "dc+sd-jwt", "vct": "urn:x"}},
                },
            },
        },
    })
    a.start()
    _, _, a_int = fetch_entity_configuration(a.id("intermediate"))
    assert a_int.get("authority_hints") == [b_ta], f"A's intermediate authority_hints: {a_int.get('authority_hints')}"

    b = make_server("server-b", port=q, entities={
        "ta": {
            "trust_anchor": True,
            "metadata": {"federation_entity": {"organization_name": "Trust Anchor on B"}},
            "subordinate_statement": {"metadata_policy": B_POLICY},
            "subordinates": {a.id("intermediate"): {"jwks": a_int["jwks"], "entity_types": ["federation_entity"]}},
        },
    })
    b.start()
    assert b.id("ta") == b_ta

    # B vouches for A's intermediate with the configured keys.
    r = get(b_ta + "/fetch", params={"sub": a.id("intermediate")})
    assert_ok(r, EC_TYPE)
    _, _, b_ec = fetch_entity_configuration(b_ta)
    _, stmt = verify_jws(r.text.strip(), b_ec["jwks"], "B's statement about A's intermediate", typ="entity-statement+jwt")
    assert stmt["jwks"] == a_int["jwks"], f"B's statement jwks {stmt['jwks']} != configured {a_int['jwks']}"
    assert stmt.get("metadata_policy") == B_POLICY, f"B's subordinate_statement policy missing from its statement: {stmt.get('metadata_policy')}"
    r = get(b_ta + "/list")
    assert r.status_code == 200 and r.json() == [a.id("intermediate")], f"B's list: {r.text[:300]}"

    # Resolve at B: leaf EC, A-intermediate about leaf, B-TA about A-intermediate, B-TA EC.
    r = get(b_ta + "/resolve", params={"sub": a.id("leaf"), "trust_anchor": b_ta})
    assert_ok(r, RESOLVE_TYPE)
    _, claims = verify_jws(r.text.strip(), b_ec["jwks"], "resolve response from B", typ="resolve-response+jwt")
    assert claims["iss"] == b_ta and claims["sub"] == a.id("leaf")
    statements = validate_trust_chain(claims["trust_chain"], a.id("leaf"), b_ta, ta_jwks=b_ec["jwks"])
    route = [(s["iss"], s["sub"]) for s in statements]
    assert route == [(a.id("leaf"), a.id("leaf")), (a.id("intermediate"), a.id("leaf")), (b_ta, a.id("intermediate")), (b_ta, b_ta)], f"chain route: {route}"
    expected = resolve_metadata_independently(statements)
    problems = diff(expected, claims["metadata"])
    assert not problems, "cross-server resolved metadata differs:\n  " + "\n  ".join(problems)
    assert claims["metadata"]["openid_credential_issuer"].get("batch_credential_issuance") == {"batch_size": 3}, \
        f"B's policy default not applied: {claims['metadata']['openid_credential_issuer']}"

    # The same resolution from the CLI client.
    p = run_cli("resolve", a.id("leaf"), "--trust-anchor", b_ta, timeout=60)
    assert p.returncode == 0, f"`trustbed resolve` across servers exited {p.returncode}: {p.stderr[-1000:]}"
    out = json.loads(p.stdout)
    cli_statements = validate_trust_chain(out["trust_chain"], a.id("leaf"), b_ta, ta_jwks=b_ec["jwks"])
    assert len(cli_statements) == 4, f"CLI chain length {len(cli_statements)}"
    problems = diff(resolve_metadata_independently(cli_statements), out["metadata"])
    assert not problems, "CLI cross-server metadata differs:\n  " + "\n  ".join(problems)

    # A's intermediate resolves the same leaf against B's anchor too.
    r = get(a.id("intermediate") + "/resolve", params={"sub": a.id("leaf"), "trust_anchor": b_ta})
    assert_ok(r, RESOLVE_TYPE)
    _, c2 = verify_jws(r.text.strip(), a_int["jwks"], "resolve response from A's intermediate", typ="resolve-response+jwt")
    validate_trust_chain(c2["trust_chain"], a.id("leaf"), b_ta, ta_jwks=b_ec["jwks"])


def test_fetch_allow_keeps_the_resolver_to_listed_prefixes(make_server, fed):
    """A resolver started with --fetch-allow refuses to fetch a subject elsewhere; one whose
    prefix is listed is fetched (and then fails only for having no chain to the anchor)."""
    guarded = make_server("guarded", extra_args=["--fetch-allow", "http://allowed.invalid/"]).start()
    foreign = fed.id("pid-provider")  # on another port: remote for the guarded server
    r = get(guarded.id("ta") + "/resolve", params={"sub": foreign, "trust_anchor": guarded.id("ta")})
    # A subject outside the allow-list is a bad request, refused before any fetch.
    assert r.status_code == 400 and r.json().get("error") == "invalid_request", f"{r.status_code} {r.text[:300]}"
    assert "--fetch-allow" in r.json().get("error_description", ""), r.text[:300]

    open_ = make_server("open", extra_args=["--fetch-allow", fed.base + "/"]).start()
    r = get(open_.id("ta") + "/resolve", params={"sub": foreign, "trust_anchor": open_.id("ta")})
    assert r.status_code != 200 and "--fetch-allow" not in r.text, f"a listed prefix must be fetched: {r.status_code} {r.text[:300]}"
