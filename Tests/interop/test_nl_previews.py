"""`token_claims_preview: "nl"`: the token response's `credential_previews` in the NL wallet's own
wire format (MinBZK/nl-wallet `openid4vc::token::CredentialPreview` at commit 15308eedc9ee: per
preview `config_id`, `format`, `batch_size`, `credential_payload` = their PreviewableCredentialPayload
(`vct`, `iss`, optional `exp`/`nbf`, `attestation_qualification`, attributes flattened beside them) and
`issuer_certificate` = standard base64 of the DER certificate). Checked here from the wire: the shape
their serde structs accept, the certificate chains to the published IACA and names `iss` in its SAN
(their `CredentialPreview::verify`), it is the certificate that then signs the credential, and the
previewed recovery code is the issued one. Also: the PID Providers publish `jwks` in their federation
`openid_credential_issuer` metadata (a wallet provider checks disclosed PIDs with it)."""
from __future__ import annotations

import base64
import time

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from fedlib import fetch_entity_configuration
from joserfc.jwk import ECKey as JoseECKey
from walletlib import (Wallet, admin_offer, iaca_certificate, new_key, persona, recovery_code, recovery_secret,
                       start_pid_server, verify_mdoc, verify_sd_jwt_vc)

SD = "urn:eudi:pid:1"
MDOC = "eu.europa.ec.eudi.pid.1"
QUALIFICATIONS = {"QEAA", "PuB-EAA", "EAA"}  # their AttestationQualification's serialized names
FORMATS = {"dc+sd-jwt", "mso_mdoc"}  # their Format enum (snake_case, dc+sd-jwt renamed)


@pytest.fixture(scope="module")
def nl(session_tmp):
    server = start_pid_server(session_tmp / f"pid-nl-previews-{time.monotonic_ns()}", label="pid-nl-previews",
                              pid_overrides={"token_claims_preview": "nl", "batch_size": 3})
    yield server
    server.stop()


def attribute_ok(value) -> bool:
    """Their `Attribute` (untagged): Single(AttributeValue: null, i64, bool, text, array of values)
    or Nested(map of Attribute). No floats."""
    if value is None or isinstance(value, (bool, str)):
        return True
    if isinstance(value, int):
        return -2**63 <= value < 2**63
    if isinstance(value, list):
        return all(attribute_ok(v) and not isinstance(v, dict) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and attribute_ok(v) for k, v in value.items())
    return False


def check_preview_shape(preview: dict, issuer: str, iaca: x509.Certificate, metadata: dict) -> x509.Certificate:
    assert set(preview) == {"config_id", "format", "batch_size", "credential_payload", "issuer_certificate"}, preview
    config = metadata["credential_configurations_supported"][preview["config_id"]]
    assert preview["format"] in FORMATS and preview["format"] == config["format"], preview
    # NonZeroU8; the issuer's batch size (their wallet asks for that many copies).
    assert isinstance(preview["batch_size"], int) and 1 <= preview["batch_size"] <= 255
    assert preview["batch_size"] == metadata["batch_credential_issuance"]["batch_size"] == 3
    payload = preview["credential_payload"]
    assert isinstance(payload["vct"], str) and payload["iss"] == issuer
    assert payload["attestation_qualification"] in QUALIFICATIONS
    for optional in ("exp", "nbf"):
        assert optional not in payload or isinstance(payload[optional], int)
    attributes = {k: v for k, v in payload.items() if k not in ("vct", "iss", "exp", "nbf", "attestation_qualification")}
    assert attributes and all(attribute_ok(v) for v in attributes.values()), attributes
    # serde_with Base64 (standard alphabet, padded) of the DER certificate.
    der = base64.b64decode(preview["issuer_certificate"], validate=True)
    certificate = x509.load_der_x509_certificate(der)
    certificate.verify_directly_issued_by(iaca)
    san = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    names = san.get_values_for_type(x509.UniformResourceIdentifier) + san.get_values_for_type(x509.DNSName)
    assert issuer in names, f"their wallet requires iss among the certificate's SAN URIs/DNS names: {names}"
    return certificate


def test_token_response_carries_nl_previews(nl):
    issuer = nl.id("pid-provider")
    who = persona(nl)
    iaca = iaca_certificate(issuer)
    metadata = requests.get(issuer + "/.well-known/openid-credential-issuer", timeout=10).json()
    answer = admin_offer(issuer, nl.admin_token, who["id"], [SD, MDOC], tx_code=False)
    wallet = Wallet(issuer, use_dpop=True)
    token = wallet.pre_authorized_token(wallet.fetch_offer(answer))
    previews = token["credential_previews"]
    assert isinstance(previews, list) and len(previews) == 2, token
    by_id = {p["config_id"]: p for p in previews}
    assert set(by_id) == {SD, MDOC}
    certificates = {cid: check_preview_shape(p, issuer, iaca, metadata) for cid, p in by_id.items()}
    code = recovery_code(recovery_secret(nl), who["personal_administrative_number"])

    sd_payload = by_id[SD]["credential_payload"]
    assert sd_payload["vct"] == SD and sd_payload["given_name"] == who["given_name"]
    assert sd_payload["recovery_code"] == code
    key = new_key()
    body, _ = wallet.credential(token["access_token"], configuration_id=SD, keys=[key], anonymous=True)
    sd = verify_sd_jwt_vc(body["credentials"][0]["credential"], issuer=issuer, iaca=iaca, holder_key=key, vct=SD)
    assert sd["leaf"] == certificates[SD], "the previewed certificate signs the SD-JWT VC"
    for name, value in sd["claims"].items():
        if name in sd_payload:
            assert sd_payload[name] == value, f"{name}: preview {sd_payload[name]!r} != issued {value!r}"

    md_payload = by_id[MDOC]["credential_payload"]
    assert md_payload["vct"] == MDOC, "vct is the doctype for mdoc"
    assert md_payload["given_name"] == who["given_name"], "the doctype's nameSpace sits at the root"
    domestic = [v for k, v in md_payload.items() if isinstance(v, dict) and "recovery_code" in v]
    assert [d["recovery_code"] for d in domestic] == [code], md_payload
    key = new_key()
    body, _ = wallet.credential(token["access_token"], configuration_id=MDOC, keys=[key], anonymous=True)
    md = verify_mdoc(body["credentials"][0]["credential"], iaca=iaca, holder_key=key)
    assert md["ds"] == certificates[MDOC], "the previewed certificate is the mdoc's document signer"
    assert md["elements"]["recovery_code"] == code


def test_demo_keeps_trustbed_form(pid_demo_token):
    previews = pid_demo_token["credential_previews"]
    assert all("credential_configuration_id" in p and "claims" in p and "config_id" not in p for p in previews)


@pytest.fixture(scope="module")
def pid_demo_token(session_tmp):
    server = start_pid_server(session_tmp / f"pid-demo-previews-{time.monotonic_ns()}", label="pid-demo-previews")
    try:
        issuer = server.id("pid-provider")
        answer = admin_offer(issuer, server.admin_token, persona(server)["id"], [SD], tx_code=False)
        wallet = Wallet(issuer, use_dpop=False)
        yield wallet.pre_authorized_token(wallet.fetch_offer(answer))
    finally:
        server.stop()


@pytest.mark.parametrize("entity", ["pid-provider", "pid-provider-haip"])
def test_federation_metadata_publishes_the_credential_signing_key(nl, entity):
    """Both PID Providers: `jwks` in the federation `openid_credential_issuer` metadata, public keys
    only, the SD-JWT VC key (`/.well-known/jwt-vc-issuer`) among them."""
    issuer = nl.id(entity)
    _, _, claims = fetch_entity_configuration(issuer)
    jwks = claims["metadata"]["openid_credential_issuer"]["jwks"]
    assert jwks["keys"] and all("d" not in k for k in jwks["keys"]), jwks
    published = {JoseECKey.import_key(k).thumbprint() for k in jwks["keys"]}
    signer = requests.get(issuer + "/.well-known/jwt-vc-issuer", timeout=10).json()["jwks"]["keys"]
    assert {JoseECKey.import_key(k).thumbprint() for k in signer} <= published


def test_nl_sd_jwt_leaf_key_is_in_federation_jwks(nl):
    issuer = nl.id("pid-provider")
    who = persona(nl)
    answer = admin_offer(issuer, nl.admin_token, who["id"], [SD], tx_code=False)
    wallet = Wallet(issuer, use_dpop=False)
    token = wallet.pre_authorized_token(wallet.fetch_offer(answer))
    key = new_key()
    body, _ = wallet.credential(token["access_token"], configuration_id=SD, keys=[key], anonymous=True)
    sd = verify_sd_jwt_vc(body["credentials"][0]["credential"], issuer=issuer, iaca=iaca_certificate(issuer),
                          holder_key=key, vct=SD)
    leaf_pem = sd["leaf"].public_key().public_bytes(serialization.Encoding.PEM,
                                                    serialization.PublicFormat.SubjectPublicKeyInfo)
    _, _, claims = fetch_entity_configuration(issuer)
    published = {JoseECKey.import_key(k).thumbprint() for k in claims["metadata"]["openid_credential_issuer"]["jwks"]["keys"]}
    assert JoseECKey.import_key(leaf_pem).thumbprint() in published
