"""PID Provider fixes of issue 18, each checked over HTTP against the real server with
independent libraries:

- unknown members of an `openid_credential` authorization detail are ignored (OpenID4VCI 1.0
  §5.1.1, RFC 9396 §2), at PAR and at the token endpoint; the members we know are still checked;
- one certificate per use: the mdoc document signer (critical EKU 1.0.18013.5.1.2) signs mdocs
  only; SD-JWT VCs, status list tokens and signed metadata carry a certificate without that EKU,
  both under the published IACA (Python `cryptography`);
- Bearer errors: 403 `insufficient_scope` for a token that does not cover the configuration
  (OpenID4VCI §8.3.1.1, RFC 6750 §3.1), a 401 without `error` in the challenge for a request
  without credentials, `error_description` within RFC 6749 §5.2's characters;
- the mdoc `recovery_code` in the domestic nameSpace (ARF Annex 2 PID_06), checked with cbor2
  and pymdoccbor; the NL profile's `bsn` only for personas that have one (sd-jwt);
- `Vary: Accept` on the negotiated issuer metadata, gzip on the status list."""
from __future__ import annotations

import base64
import gzip
import json
import re
import secrets
import time

import cbor2
import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtensionOID
from fedlib import assert_json_error, describe
from walletlib import (PRE_AUTH_GRANT, ClientInstance, Wallet, WalletProvider, admin_offer, b64url_decode,
                       decode_jwt_unverified, iaca_certificate, key_proof, new_key, persona, personas, pkce_pair,
                       recovery_code, recovery_secret, start_pid_server, verify_mdoc, verify_sd_jwt_vc)

SD = "urn:eudi:pid:1"
NL = "urn:eudi:pid:nl:1"
MDOC = "eu.europa.ec.eudi.pid.1"
DOMESTIC = "eu.europa.ec.eudi.pid.nl.1"  # the demo's issuing_country is NL
MDOC_DS_EKU = "1.0.18013.5.1.2"
REDIRECT = "eu.trustbed.test-wallet:/callback"
# RFC 6749 §5.2: error_description = 1*( %x20-21 / %x23-5B / %x5D-7E )
DESCRIPTION = re.compile(r"[\x20\x21\x23-\x5B\x5D-\x7E]*")


@pytest.fixture(scope="module")
def env(session_tmp):
    """(server, wallet provider whose client attestations the issuer trusts)."""
    provider = WalletProvider(entity_id="")
    server = start_pid_server(session_tmp / f"pid-fixes-{time.monotonic_ns()}", label="pid-fixes", wallet_provider=provider)
    yield server, provider
    server.stop()


def issuer_of(env) -> str:
    return env[0].id("pid-provider")


def client_for(provider: WalletProvider) -> ClientInstance:
    key = new_key()
    client_id = "test-wallet-" + secrets.token_hex(4)
    return ClientInstance(client_id=client_id, key=key, attestation=provider.attestation(client_id, key))


def pre_auth_code(server, ids, who=None) -> str:
    who = who or persona(server)
    answer = admin_offer(server.id("pid-provider"), server.admin_token, who["id"], list(ids))
    return answer["credential_offer"]["grants"][PRE_AUTH_GRANT]["pre-authorized_code"]


def issue(server, configuration_id: str, who=None, *, dpop: bool = False) -> tuple[dict, dict, object]:
    """Pre-authorized flow for one configuration: (token response, credential response, holder key)."""
    issuer = server.id("pid-provider")
    wallet = Wallet(issuer, use_dpop=dpop)
    token = wallet.token({"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": pre_auth_code(server, [configuration_id], who)})
    body, keys = wallet.credential(token["access_token"], configuration_id=configuration_id, anonymous=True)
    return token, body, keys[0]


def with_unknown_members(*ids: str) -> list[dict]:
    return [{"type": "openid_credential", "credential_configuration_id": i, "future_extension": {"x": [1, 2]},
             "format": "ignored-by-1.0", "claims": [{"path": ["given_name"], "mandatory": True, "unknown": 1}]}
            for i in ids]


def cert_b64(der_b64: str) -> x509.Certificate:
    return x509.load_der_x509_certificate(base64.b64decode(der_b64))


def eku_oids(cert: x509.Certificate) -> tuple[list[str], bool] | None:
    try:
        ext = cert.extensions.get_extension_for_oid(ExtensionOID.EXTENDED_KEY_USAGE)
    except x509.ExtensionNotFound:
        return None
    return [o.dotted_string for o in ext.value], ext.critical


def assert_issued_by(cert: x509.Certificate, iaca: x509.Certificate) -> None:
    assert cert.issuer == iaca.subject, f"{cert.subject} is not under the IACA {iaca.subject}"
    cert.verify_directly_issued_by(iaca)
    iaca.public_key().verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(hashes.SHA256()))


# ---------------------------------------------------------------------------- authorization_details


def test_unknown_authorization_detail_members_are_ignored_at_par_and_token(env):
    server, provider = env
    issuer = issuer_of(env)
    wallet = Wallet(issuer, use_dpop=True, client=client_for(provider))
    token, _ = wallet.authorization_code_flow(persona=persona(server)["id"], redirect_uri=REDIRECT,
                                              authorization_details=with_unknown_members(SD))
    details = token.get("authorization_details")
    assert isinstance(details, list) and len(details) == 1, f"§6.2 authorization_details expected: {token}"
    assert details[0]["credential_configuration_id"] == SD and details[0]["credential_identifiers"], details
    body, keys = wallet.credential(token["access_token"], identifier=details[0]["credential_identifiers"][0])
    verify_sd_jwt_vc(body["credentials"][0]["credential"], issuer=issuer, iaca=iaca_certificate(issuer), holder_key=keys[0],
                     vct=SD)


def test_known_authorization_detail_members_are_still_checked_at_par(env):
    server, provider = env
    wallet = Wallet(issuer_of(env), use_dpop=False, client=client_for(provider))
    _, challenge = pkce_pair()
    bad = [
        [{"type": "openid_credential", "credential_configuration_id": SD, "claims": []}],
        [{"type": "openid_credential", "credential_configuration_id": SD, "claims": [{"path": []}]}],
        [{"type": "openid_credential", "credential_configuration_id": SD, "claims": [{"path": ["a"], "mandatory": "yes"}]}],
        [{"type": "openid_credential", "credential_configuration_id": "no.such.configuration", "extra": 1}],
        [{"type": "something_else", "credential_configuration_id": SD}],
        [{"type": "openid_credential", "credential_configuration_id": SD, "locations": ["https://elsewhere.example"]}],
    ]
    for details in bad:
        r = wallet.par(redirect_uri=REDIRECT, code_challenge=challenge, state="s", authorization_details=details)
        assert_json_error(r, 400, "invalid_authorization_details")


def test_unknown_authorization_detail_members_are_ignored_at_the_pre_authorized_token_endpoint(env):
    server, _ = env
    issuer = issuer_of(env)
    wallet = Wallet(issuer, use_dpop=False)
    token = wallet.token({"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": pre_auth_code(server, [SD, MDOC]),
                          "authorization_details": json.dumps(with_unknown_members(MDOC))})
    details = token["authorization_details"]
    assert [d["credential_configuration_id"] for d in details] == [MDOC], details
    assert "future_extension" not in details[0], "the response describes what was granted"
    body, keys = wallet.credential(token["access_token"], identifier=details[0]["credential_identifiers"][0], anonymous=True)
    verify_mdoc(body["credentials"][0]["credential"], iaca=iaca_certificate(issuer), holder_key=keys[0])
    # A known member with a bad value is still refused at the token endpoint.
    r = requests.post(issuer + "/token", timeout=10, data={
        "grant_type": PRE_AUTH_GRANT, "pre-authorized_code": pre_auth_code(server, [SD]),
        "authorization_details": json.dumps([{"type": "openid_credential", "credential_configuration_id": SD, "claims": {}}])})
    assert_json_error(r, 400, "invalid_authorization_details")


# ---------------------------------------------------------------------------- certificates per use


def test_certificates_per_use(env):
    server, _ = env
    issuer = issuer_of(env)
    iaca = iaca_certificate(issuer)
    # SD-JWT VC: x5c leaf without the mdoc EKU, under the IACA, iss in its SAN.
    _, body, key = issue(server, SD)
    credential = body["credentials"][0]["credential"]
    header, payload = decode_jwt_unverified(credential.split("~")[0])
    sd_leaf = cert_b64(header["x5c"][0])
    assert eku_oids(sd_leaf) is None or MDOC_DS_EKU not in eku_oids(sd_leaf)[0], "SD-JWT VC signer must not be an mdoc DS"
    assert_issued_by(sd_leaf, iaca)
    san = sd_leaf.extensions.get_extension_for_oid(ExtensionOID.SUBJECT_ALTERNATIVE_NAME).value
    assert payload["iss"] in san.get_values_for_type(x509.UniformResourceIdentifier)
    verify_sd_jwt_vc(credential, issuer=issuer, iaca=iaca, holder_key=key, vct=SD)
    # The status list token it names: the same certificate.
    uri = payload["status"]["status_list"]["uri"]
    token = requests.get(uri, timeout=10).text
    sl_header, _ = decode_jwt_unverified(token)
    sl_leaf = cert_b64(sl_header["x5c"][0])
    assert eku_oids(sl_leaf) is None or MDOC_DS_EKU not in eku_oids(sl_leaf)[0], "status list signer must not be an mdoc DS"
    assert_issued_by(sl_leaf, iaca)
    # Signed metadata.
    r = requests.get(issuer + "/.well-known/openid-credential-issuer", headers={"Accept": "application/jwt"}, timeout=10)
    md_header, _ = decode_jwt_unverified(r.text)
    md_leaf = cert_b64(md_header["x5c"][0])
    assert eku_oids(md_leaf) is None or MDOC_DS_EKU not in eku_oids(md_leaf)[0], "metadata signer must not be an mdoc DS"
    assert_issued_by(md_leaf, iaca)
    # The mdoc: x5chain leaf with the critical DS EKU, under the same IACA, a different key.
    _, body, key = issue(server, MDOC)
    checked = verify_mdoc(body["credentials"][0]["credential"], iaca=iaca, holder_key=key)
    ds = checked["ds"]
    assert eku_oids(ds) == ([MDOC_DS_EKU], True), f"the document signer keeps its critical EKU: {eku_oids(ds)}"
    assert_issued_by(ds, iaca)
    assert ds.public_key().public_numbers() != sd_leaf.public_key().public_numbers(), "one key per use"
    # jwt-vc-issuer publishes the SD-JWT VC key, not the document signer's.
    jwks = requests.get(issuer + "/.well-known/jwt-vc-issuer", timeout=10).json()["jwks"]["keys"]
    x = sd_leaf.public_key().public_numbers().x.to_bytes(32, "big")
    assert [b64url_decode(k["x"]) for k in jwks] == [x]


# ---------------------------------------------------------------------------- Bearer errors


def credential_body(issuer: str, configuration_id: str) -> dict:
    c_nonce = requests.post(issuer + "/nonce", timeout=10).json()["c_nonce"]
    return {"credential_configuration_id": configuration_id, "proofs": {"jwt": [key_proof(new_key(), issuer, c_nonce)]}}


def test_token_not_covering_the_configuration_is_403_insufficient_scope(env):
    server, _ = env
    issuer = issuer_of(env)
    for dpop in (False, True):
        wallet = Wallet(issuer, use_dpop=dpop)
        token = wallet.token({"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": pre_auth_code(server, [SD])})
        r = wallet.credential_request(token["access_token"], credential_body(issuer, MDOC))
        assert_json_error(r, 403, "insufficient_scope")
        scheme = "DPoP" if dpop else "Bearer"
        challenge = r.headers.get("WWW-Authenticate", "")
        assert challenge.startswith(f'{scheme} error="insufficient_scope"'), describe(r)
        assert DESCRIPTION.fullmatch(r.json()["error_description"])


def test_request_without_authorization_gets_a_challenge_without_error(env):
    issuer = issuer_of(env)
    for headers in ({}, {"Authorization": "Basic Zm9vOmJhcg=="}):
        r = requests.post(issuer + "/credential", data=json.dumps(credential_body(issuer, SD)), timeout=10,
                          headers={"Content-Type": "application/json", **headers})
        assert r.status_code == 401, describe(r)
        challenge = r.headers.get("WWW-Authenticate", "")
        assert challenge.split(" ")[0] in ("Bearer", "DPoP"), describe(r)
        assert "error=" not in challenge and "error_description" not in challenge, \
            f"RFC 6750 §3.1: no error code without authentication information: {challenge!r}"
    # A token that is presented but unknown still names the error.
    r = requests.post(issuer + "/credential", data=json.dumps(credential_body(issuer, SD)), timeout=10,
                      headers={"Content-Type": "application/json", "Authorization": "Bearer unknown-token"})
    assert_json_error(r, 401, "invalid_token")
    assert 'error="invalid_token"' in r.headers.get("WWW-Authenticate", ""), describe(r)


def test_error_description_holds_only_allowed_characters(env):
    server, provider = env
    issuer = issuer_of(env)
    hostile = 'a"b\\c\nd\r\te Zoë 🙂 \x01'
    details = json.dumps([{"type": "openid_credential", "credential_configuration_id": hostile}])
    # Token endpoint (JSON body).
    r = requests.post(issuer + "/token", timeout=10, data={"grant_type": PRE_AUTH_GRANT,
                                                           "pre-authorized_code": pre_auth_code(server, [SD]),
                                                           "authorization_details": details})
    assert_json_error(r, 400, "invalid_authorization_details")
    description = r.json()["error_description"]
    assert DESCRIPTION.fullmatch(description), f"RFC 6749 §5.2 characters only: {description!r}"
    assert "a'b/c d" in description, description
    # PAR (JSON body).
    wallet = Wallet(issuer, use_dpop=False, client=client_for(provider))
    _, challenge = pkce_pair()
    r = wallet.par(redirect_uri=REDIRECT, code_challenge=challenge, state="s",
                   authorization_details=[{"type": "openid_credential", "credential_configuration_id": hostile}])
    assert_json_error(r, 400, "invalid_authorization_details")
    assert DESCRIPTION.fullmatch(r.json()["error_description"]), r.json()
    # A protected resource's challenge.
    r = requests.post(issuer + "/credential", data="{}", timeout=10,
                      headers={"Content-Type": "application/json", "Authorization": "Bearer x"})
    for m in re.finditer(r'error_description="([^"]*)"', r.headers.get("WWW-Authenticate", "")):
        assert DESCRIPTION.fullmatch(m.group(1))


# ---------------------------------------------------------------------------- mdoc namespaces and the NL profile


def test_mdoc_recovery_code_is_in_the_domestic_namespace(env):
    server, _ = env
    issuer = issuer_of(env)
    who = persona(server)
    token, body, key = issue(server, MDOC, who)
    credential = body["credentials"][0]["credential"]
    checked = verify_mdoc(credential, iaca=iaca_certificate(issuer), holder_key=key)  # pymdoccbor: every nameSpace
    namespaces = cbor2.loads(b64url_decode(credential))["nameSpaces"]
    assert set(namespaces) == {MDOC, DOMESTIC}, list(namespaces)
    by_ns = {ns: {cbor2.loads(t.value)["elementIdentifier"]: cbor2.loads(t.value)["elementValue"] for t in items}
             for ns, items in namespaces.items()}
    assert "recovery_code" not in by_ns[MDOC], "ARF PID_06: nothing of ours in eu.europa.ec.eudi.pid.1"
    assert by_ns[DOMESTIC] == {"recovery_code": recovery_code(recovery_secret(server), who["personal_administrative_number"])}
    assert set(checked["mso"]["valueDigests"]) == {MDOC, DOMESTIC}
    # The metadata and the token's preview say the same.
    md = requests.get(issuer + "/.well-known/openid-credential-issuer", timeout=10).json()
    paths = [c["path"] for c in md["credential_configurations_supported"][MDOC]["credential_metadata"]["claims"]]
    assert [DOMESTIC, "recovery_code"] in paths and [MDOC, "recovery_code"] not in paths
    assert all(p[0] in (MDOC, DOMESTIC) for p in paths), paths
    preview = next(p for p in token["credential_previews"] if p["credential_configuration_id"] == MDOC)
    assert preview["claims"][DOMESTIC] == by_ns[DOMESTIC] and "recovery_code" not in preview["claims"][MDOC]


def test_domestic_namespace_is_configurable(session_tmp):
    server = start_pid_server(session_tmp / f"pid-ns-{time.monotonic_ns()}", label="pid-ns", pid_overrides={
        "credential_configurations": {MDOC: {"format": "mso_mdoc", "doctype": MDOC, "domestic_namespace": "org.example.pid.1"}},
    })
    try:
        issuer = server.id("pid-provider")
        _, body, key = issue(server, MDOC)
        credential = body["credentials"][0]["credential"]
        verify_mdoc(credential, iaca=iaca_certificate(issuer), holder_key=key)
        assert set(cbor2.loads(b64url_decode(credential))["nameSpaces"]) == {MDOC, "org.example.pid.1"}
        md = requests.get(issuer + "/.well-known/openid-credential-issuer", timeout=10).json()
        paths = [c["path"] for c in md["credential_configurations_supported"][MDOC]["credential_metadata"]["claims"]]
        assert ["org.example.pid.1", "recovery_code"] in paths
    finally:
        server.stop()


def test_nl_profile_carries_bsn_only_for_personas_that_have_one(env):
    server, _ = env
    issuer = issuer_of(env)
    iaca = iaca_certificate(issuer)
    everyone = [p for p in personas(server) if not p.get("deferred")]
    with_bsn = next(p for p in everyone if "bsn" in p)
    without = next(p for p in everyone if "bsn" not in p)
    for who in (with_bsn, without):
        token, body, key = issue(server, NL, who)
        checked = verify_sd_jwt_vc(body["credentials"][0]["credential"], issuer=issuer, iaca=iaca, holder_key=key, vct=NL)
        names = {d[1] for d in checked["disclosures"] if len(d) == 3}
        if "bsn" in who:
            assert checked["claims"]["bsn"] == who["bsn"]
        else:
            assert "bsn" not in checked["claims"] and "bsn" not in names, f"no invented bsn for {who['id']}"
            assert checked["claims"]["personal_administrative_number"] == who["personal_administrative_number"]
        preview = next(p for p in token["credential_previews"] if p["credential_configuration_id"] == NL)
        assert preview["claims"].get("bsn") == who.get("bsn")
    md = requests.get(issuer + "/.well-known/openid-credential-issuer", timeout=10).json()
    bsn = next(c for c in md["credential_configurations_supported"][NL]["credential_metadata"]["claims"] if c["path"] == ["bsn"])
    assert bsn["mandatory"] is False, "not every NL PID carries a bsn"


# ---------------------------------------------------------------------------- HTTP negotiation


def test_issuer_metadata_varies_on_accept(env):
    issuer = issuer_of(env)
    for accept, media in (("application/json", "application/json"), ("application/jwt", "application/jwt"), (None, "application/json")):
        r = requests.get(issuer + "/.well-known/openid-credential-issuer", timeout=10,
                         headers={"Accept": accept} if accept else {})
        assert r.status_code == 200 and r.headers["Content-Type"].split(";")[0] == media, describe(r)
        vary = [v.strip().lower() for v in r.headers.get("Vary", "").split(",")]
        assert "accept" in vary, f"Vary: Accept expected on the negotiated metadata: {r.headers}"


def test_status_list_is_gzipped_when_asked(env):
    server, _ = env
    _, body, _ = issue(server, SD)
    _, payload = decode_jwt_unverified(body["credentials"][0]["credential"].split("~")[0])
    uri = payload["status"]["status_list"]["uri"]
    plain = requests.get(uri, headers={"Accept-Encoding": "identity"}, timeout=10)
    assert plain.status_code == 200 and "Content-Encoding" not in plain.headers, describe(plain)
    assert "accept-encoding" in plain.headers.get("Vary", "").lower()
    # requests decodes gzip itself; the raw stream shows what was sent.
    r = requests.get(uri, headers={"Accept-Encoding": "gzip"}, timeout=10, stream=True)
    raw = r.raw.read(decode_content=False)
    assert r.status_code == 200 and r.headers.get("Content-Encoding") == "gzip", describe(r)
    assert "accept-encoding" in r.headers.get("Vary", "").lower()
    assert int(r.headers["Content-Length"]) == len(raw) < len(plain.content)
    token = gzip.decompress(raw).decode()
    header, claims = decode_jwt_unverified(token)
    assert header["typ"] == "statuslist+jwt" and claims["sub"] == uri
    assert requests.get(uri, timeout=10).text.count(".") == 2, "requests' default Accept-Encoding (gzip) decodes transparently"
    refused = requests.get(uri, headers={"Accept-Encoding": "gzip;q=0, br"}, timeout=10, stream=True)
    assert "Content-Encoding" not in refused.headers, describe(refused)
