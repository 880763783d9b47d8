"""The PID Provider's published metadata, checked over HTTP with independent libraries:
OpenID4VCI 1.0 Final §12.2 (both placements, signed metadata), RFC 8414, SD-JWT VC §5, the
IACA certificate and CRL (ISO 18013-5 Annex B, parsed by `cryptography`), and the same
metadata through the federation (entity configuration and resolve at the Trust Anchor)."""
from __future__ import annotations

import base64
import json
from urllib.parse import quote, urlsplit

import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, utils
from cryptography.x509.oid import ExtendedKeyUsageOID, ExtensionOID
from fedlib import assert_ok, b64url_decode, decode_jws, fetch_entity_configuration, get

JSON = "application/json"


def insertion(url: str, doc: str) -> str:
    """RFC 8414 §3.1: <origin>/.well-known/<doc>/<path>."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/.well-known/{doc}{parts.path}"


def issuer_metadata(fed) -> dict:
    r = get(fed.id("pid-provider") + "/.well-known/openid-credential-issuer")
    assert_ok(r, JSON)
    return r.json()


def test_credential_issuer_metadata_both_placements(fed):
    issuer = fed.id("pid-provider")
    md = issuer_metadata(fed)
    r = get(insertion(issuer, "openid-credential-issuer"))
    assert_ok(r, JSON)
    assert r.json() == md, "the RFC 8414-style placement must serve the same document"
    assert md["credential_issuer"] == issuer and md["authorization_servers"] == [issuer]
    for key, path in [("credential_endpoint", "/credential"), ("nonce_endpoint", "/nonce"),
                      ("deferred_credential_endpoint", "/deferred_credential"), ("notification_endpoint", "/notification")]:
        assert md[key] == issuer + path, f"{key}: {md[key]}"
    assert md["batch_credential_issuance"]["batch_size"] >= 1
    assert isinstance(md["display"], list) and md["display"][0]["name"]
    configs = md["credential_configurations_supported"]
    mdoc = configs["eu.europa.ec.eudi.pid.1"]
    assert mdoc["format"] == "mso_mdoc" and mdoc["doctype"] == "eu.europa.ec.eudi.pid.1"
    assert mdoc["credential_signing_alg_values_supported"] == [-7], "mdoc signing algs are COSE integers"
    assert mdoc["cryptographic_binding_methods_supported"] == ["cose_key"]
    sd = configs["urn:eudi:pid:1"]
    assert sd["format"] == "dc+sd-jwt" and sd["vct"] == "urn:eudi:pid:1"
    assert sd["credential_signing_alg_values_supported"] == ["ES256"]
    nl = configs["urn:eudi:pid:nl:1"]
    for c in (mdoc, sd, nl):
        assert c["scope"], c
        assert c["proof_types_supported"]["jwt"]["proof_signing_alg_values_supported"] == ["ES256"]
        claims = c["credential_metadata"]["claims"]
        assert all(isinstance(x["path"], list) and x["path"] for x in claims), claims
    sd_paths = [x["path"] for x in sd["credential_metadata"]["claims"]]
    assert ["given_name"] in sd_paths and ["address", "street_address"] in sd_paths and ["recovery_code"] in sd_paths
    assert ["bsn"] in [x["path"] for x in nl["credential_metadata"]["claims"]] and ["bsn"] not in sd_paths
    assert ["eu.europa.ec.eudi.pid.1", "birth_date"] in [x["path"] for x in mdoc["credential_metadata"]["claims"]]


def test_signed_metadata_when_asked_for_jwt(fed):
    issuer = fed.id("pid-provider")
    r = requests.get(issuer + "/.well-known/openid-credential-issuer", headers={"Accept": "application/jwt"}, timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/jwt"), r.text[:200]
    header, claims = decode_jws(r.text, "signed metadata")
    assert header["typ"] == "openidvci-issuer-metadata+jwt" and header["alg"] == "ES256"
    leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
    signing_input, _, sig = r.text.rpartition(".")
    raw = b64url_decode(sig)
    der = utils.encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    leaf.public_key().verify(der, signing_input.encode(), ec.ECDSA(hashes.SHA256()))
    assert claims["sub"] == issuer and isinstance(claims["iat"], int)
    unsigned = issuer_metadata(fed)
    for k, v in unsigned.items():
        assert claims[k] == v, f"signed metadata differs at {k}"
    # JSON stays the default, and an explicit JSON preference wins.
    r = requests.get(issuer + "/.well-known/openid-credential-issuer", headers={"Accept": "application/json, application/jwt"}, timeout=10)
    assert r.headers["Content-Type"].startswith(JSON)


def test_authorization_server_metadata(fed):
    issuer = fed.id("pid-provider")
    r = get(insertion(issuer, "oauth-authorization-server"))
    assert_ok(r, JSON)
    md = r.json()
    assert get(issuer + "/.well-known/oauth-authorization-server").json() == md
    assert md["issuer"] == issuer
    assert md["pushed_authorization_request_endpoint"] == issuer + "/par"
    assert md["token_endpoint"] == issuer + "/token" and md["authorization_endpoint"] == issuer + "/authorize"
    assert md["code_challenge_methods_supported"] == ["S256"]
    assert "ES256" in md["dpop_signing_alg_values_supported"]
    assert md["pre-authorized_grant_anonymous_access_supported"] is True
    assert md["authorization_response_iss_parameter_supported"] is True
    assert "attest_jwt_client_auth" in md["token_endpoint_auth_methods_supported"]
    assert md["client_attestation_signing_alg_values_supported"] == ["ES256"]
    assert md["client_attestation_pop_signing_alg_values_supported"] == ["ES256"]
    assert "urn:ietf:params:oauth:grant-type:pre-authorized_code" in md["grant_types_supported"]


def test_jwt_vc_issuer_metadata_and_iaca(fed):
    issuer = fed.id("pid-provider")
    md = get(insertion(issuer, "jwt-vc-issuer")).json()
    assert md["issuer"] == issuer and md["jwks"]["keys"][0]["kty"] == "EC" and "d" not in md["jwks"]["keys"][0]
    iaca = x509.load_pem_x509_certificate(get(issuer + "/iaca.pem").content)
    bc = iaca.extensions.get_extension_for_oid(ExtensionOID.BASIC_CONSTRAINTS)
    assert bc.critical and bc.value.ca and bc.value.path_length == 0
    ku = iaca.extensions.get_extension_for_oid(ExtensionOID.KEY_USAGE).value
    assert ku.key_cert_sign and ku.crl_sign
    cdp = iaca.extensions.get_extension_for_oid(ExtensionOID.CRL_DISTRIBUTION_POINTS).value
    crl_url = cdp[0].full_name[0].value
    assert crl_url == issuer + "/iaca.crl"
    r = get(crl_url)
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/pkix-crl"
    crl = x509.load_der_x509_crl(r.content)
    assert crl.is_signature_valid(iaca.public_key())
    # The signer of the signed metadata chains to this IACA and is not the mdoc document signer
    # (no EKU 1.0.18013.5.1.2: one certificate per use).
    header, _ = decode_jws(requests.get(issuer + "/.well-known/openid-credential-issuer",
                                        headers={"Accept": "application/jwt"}, timeout=10).text, "signed metadata")
    ds = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
    assert ds.issuer == iaca.subject
    iaca.public_key().verify(ds.signature, ds.tbs_certificate_bytes, ec.ECDSA(hashes.SHA256()))
    ekus = [e for e in ds.extensions if e.oid == ExtensionOID.EXTENDED_KEY_USAGE]
    assert not ekus or "1.0.18013.5.1.2" not in [o.dotted_string for o in ekus[0].value]
    assert len(header["x5c"]) == 1, "x5c carries the signer without the IACA root (HAIP)"
    san = ds.extensions.get_extension_for_oid(ExtensionOID.SUBJECT_ALTERNATIVE_NAME).value
    assert [n.value for n in san] == [issuer], "SD-JWT VC verifiers match iss against the leaf SAN URI"


def test_federation_carries_the_generated_metadata(fed):
    issuer = fed.id("pid-provider")
    _, _, ec_claims = fetch_entity_configuration(issuer)
    assert ec_claims["metadata"]["openid_credential_issuer"]["credential_configurations_supported"] == \
        issuer_metadata(fed)["credential_configurations_supported"]
    ta = fed.id("ta")
    r = get(f"{ta}/resolve?sub={quote(issuer, safe='')}&trust_anchor={quote(ta, safe='')}")
    _, resolved = decode_jws(r.text, "resolve response")
    md = resolved["metadata"]
    assert md["openid_credential_issuer"]["credential_endpoint"] == issuer + "/credential"
    # The TA's policy (subset_of attest_jwt_client_auth, private_key_jwt) applies on top.
    assert md["oauth_authorization_server"]["token_endpoint_auth_methods_supported"] == ["attest_jwt_client_auth"]
