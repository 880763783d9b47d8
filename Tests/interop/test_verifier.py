"""The mock verifier (issue 22, items 1-3) against the real server, with an independent Python
wallet written from OpenID4VP 1.0 (joserfc, cryptography, sd-jwt): it obtains a PID from the demo
PID Provider, fetches the request object (signature and x5c / trust_chain checked on its own),
answers with a key-bound SD-JWT VC in both response modes (the direct_post.jwt JWE built with
joserfc) and is verified; then a tampered answer for each check is refused with its reason, and a
replayed or foreign response is 400.
"""
from __future__ import annotations

import base64
import hashlib
import json
import time
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc import jwe
from joserfc.jwk import ECKey

from fedlib import assert_json_error, decode_jws, describe, validate_trust_chain
from walletlib import (Wallet, admin_credentials, admin_offer, admin_set_status, b64url, decode_disclosure, new_key, persona,
                       sign_jwt, split_sd_jwt, start_pid_server, verify_es256)

SD = "urn:eudi:pid:1"
NL = "urn:eudi:pid:nl:1"
TIMEOUT = 15


# ---------------------------------------------------------------------------- fixtures and helpers

@pytest.fixture(scope="module")
def vp(session_tmp):
    """A server of its own (requests and answers change state) from the demo entities."""
    server = start_pid_server(session_tmp / f"verifier-{time.monotonic_ns()}", label="verifier")
    yield server
    server.stop()


def rp(server) -> str:
    return server.id("relying-party")


def obtain_pid(server, vct: str = SD, index: int = 0) -> tuple[str, ECKey, dict]:
    """A PID from the demo PID Provider by the pre-authorized code flow: (SD-JWT VC, holder key, persona)."""
    issuer = server.id("pid-provider")
    who = persona(server, index)
    answer = admin_offer(issuer, server.admin_token, who["id"], [vct], tx_code=False)
    wallet = Wallet(issuer)
    token = wallet.pre_authorized_token(wallet.fetch_offer(answer))
    out, keys = wallet.credential(token["access_token"], configuration_id=vct, anonymous=True)
    return out["credentials"][0]["credential"], keys[0], who


def create_request(server, body: dict) -> dict:
    r = requests.post(rp(server) + "/admin/presentation-requests", json=body,
                      headers={"Authorization": f"Bearer {server.admin_token}"}, timeout=TIMEOUT)
    assert r.status_code == 201, describe(r)
    return r.json()


def result(server, request_id: str) -> dict:
    r = requests.get(rp(server) + "/admin/presentation-requests/" + request_id,
                     headers={"Authorization": f"Bearer {server.admin_token}"}, timeout=TIMEOUT)
    assert r.status_code == 200, describe(r)
    return r.json()


def fetch_request_object(server, created: dict) -> tuple[dict, dict, str]:
    """Follows the openid4vp:// link as a wallet: GET request_uri, check typ and the signature by
    the client identifier prefix's rules independently.  Returns (header, claims, client_id)."""
    link = urlsplit(created["request_link"])
    assert link.scheme == "openid4vp", created
    query = parse_qs(link.query)
    client_id, request_uri = query["client_id"][0], query["request_uri"][0]
    assert request_uri == created["request_uri"]
    r = requests.get(request_uri, timeout=TIMEOUT)
    assert r.status_code == 200, describe(r)
    assert r.headers["Content-Type"].startswith("application/oauth-authz-req+jwt"), r.headers
    token = r.text
    header, claims = decode_jws(token, "request object")
    assert header["typ"] == "oauth-authz-req+jwt" and header["alg"] == "ES256", header
    prefix = client_id.split(":", 1)[0]
    if prefix in ("x509_hash", "x509_san_dns"):
        leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
        ca = x509.load_pem_x509_certificate(requests.get(rp(server) + "/verifier-ca.pem", timeout=TIMEOUT).content)
        ca.public_key().verify(leaf.signature, leaf.tbs_certificate_bytes, ec.ECDSA(leaf.signature_hash_algorithm))
        if prefix == "x509_hash":
            assert client_id == "x509_hash:" + b64url(hashlib.sha256(base64.b64decode(header["x5c"][0])).digest())
        else:
            names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
            assert client_id == "x509_san_dns:" + urlsplit(rp(server)).hostname and urlsplit(rp(server)).hostname in names, names
        # By hand with `cryptography`: joserfc refuses headers over 512 bytes, and x5c is larger.
        verify_es256(token, leaf.public_key())
    else:
        assert prefix == "openid_federation" and client_id == "openid_federation:" + rp(server), client_id
        chain = header["trust_chain"]
        statements = validate_trust_chain(chain, rp(server), server.id("ta"))
        verifier_jwks = statements[0]["metadata"]["openid_credential_verifier"]["jwks"]
        match = [k for k in verifier_jwks["keys"] if k["kid"] == header["kid"]]
        assert match and match[0].get("use") == "sig", (header, verifier_jwks)
        verify_es256(token, ECKey.import_key(match[0]).public_key)
    assert claims["client_id"] == client_id
    assert claims["response_type"] == "vp_token"
    assert claims["response_uri"] == rp(server) + "/response"
    assert claims["nonce"] and claims["state"] and claims["dcql_query"]["credentials"], claims
    return header, claims, client_id


def present(credential: str, holder: ECKey, *, names: set[str] | None, aud: str, nonce: str, iat: int | None = None,
            tamper=None) -> str:
    """RFC 9901 §4.3 by hand: the issuer JWT, the disclosures whose claim names are in `names`
    (None: all), and a KB-JWT (typ kb+jwt) over aud, nonce, iat and sd_hash."""
    jwt, disclosures, _ = split_sd_jwt(credential)
    chosen = [d for d in disclosures if names is None or (len(decode_disclosure(d)) == 3 and decode_disclosure(d)[1] in names)]
    if tamper:
        chosen = tamper(chosen)
    body = jwt + "~" + "".join(d + "~" for d in chosen)
    sd_hash = b64url(hashlib.sha256(body.encode()).digest())
    kb = sign_jwt({"typ": "kb+jwt", "alg": "ES256"},
                  {"aud": aud, "nonce": nonce, "iat": iat or int(time.time()), "sd_hash": sd_hash}, holder)
    return body + kb


def post_response(server, claims: dict, vp_token: dict | None, *, encrypt: bool | None = None, state: str | None = None,
                  extra: dict | None = None, enc: str = "A128GCM") -> requests.Response:
    """Posts to response_uri in the request's mode: direct_post form parameters, or (direct_post.jwt)
    one `response` JWE built with joserfc (ECDH-ES to the client_metadata jwks key)."""
    payload: dict = {"state": claims["state"] if state is None else state}
    if vp_token is not None:
        payload["vp_token"] = vp_token
    payload.update(extra or {})
    encrypt = claims["response_mode"] == "direct_post.jwt" if encrypt is None else encrypt
    if encrypt:
        metadata = claims.get("client_metadata")
        if metadata is None:
            # openid_federation: the verifier's metadata comes from its entity configuration.
            r = requests.get(claims["client_id"].split(":", 1)[1] + "/.well-known/openid-federation", timeout=TIMEOUT)
            metadata = decode_jws(r.text, "entity configuration")[1]["metadata"]["openid_credential_verifier"]
        keys = [k for k in metadata["jwks"]["keys"] if k.get("use") == "enc"]
        assert keys, metadata
        assert enc in metadata["encrypted_response_enc_values_supported"]
        key = ECKey.import_key(keys[0])
        token = jwe.encrypt_compact({"alg": "ECDH-ES", "enc": enc, "kid": keys[0]["kid"]}, json.dumps(payload).encode(), key,
                                    algorithms=["ECDH-ES", enc])
        form = {"response": token}
    else:
        form = {k: json.dumps(v) if isinstance(v, dict) else v for k, v in payload.items()}
    return requests.post(claims["response_uri"], data=form, timeout=TIMEOUT)


def check(res: dict, suffix: str) -> dict:
    found = [c for c in res["checks"] if c["name"].endswith(suffix)]
    assert found, f"no check {suffix} in {res}"
    return found[-1]


def refused(server, created: dict, response: requests.Response, suffix: str, words: str) -> dict:
    body = assert_json_error(response, 400, "invalid_request")
    assert words in body["error_description"], body
    res = result(server, created["id"])
    assert res["state"] == "refused", res
    failed = check(res, suffix)
    assert not failed["ok"] and words in failed["detail"], failed
    assert res["claims"] == {}, res
    return res


# ---------------------------------------------------------------------------- metadata and request objects

def test_generated_verifier_metadata_replaces_the_hand_written_one(vp):
    r = requests.get(rp(vp) + "/.well-known/openid-federation", timeout=TIMEOUT)
    _, ec_claims = decode_jws(r.text, "entity configuration")
    md = ec_claims["metadata"]["openid_credential_verifier"]
    assert md["client_name"] == "Trustbed Demo Verifier"            # the file's member
    assert md["response_modes_supported"] == ["direct_post", "direct_post.jwt"], md
    assert md["encrypted_response_enc_values_supported"] == ["A128GCM", "A256GCM"], md
    uses = sorted(k["use"] for k in md["jwks"]["keys"])
    assert uses == ["enc", "sig"], md["jwks"]
    assert "redirect_uris" not in md, md


def test_unknown_verifier_member_refused_at_load(make_server):
    server = make_server("verifier-bad")
    doc = json.loads((server.entities / "relying-party.json").read_text())
    doc["services"]["verifier"]["response_mod"] = "direct_post"
    (server.entities / "relying-party.json").write_text(json.dumps(doc))
    with pytest.raises(Exception):
        server.start(timeout=20)
    assert "response_mod" in server.log_tail(), server.log_tail()


@pytest.mark.parametrize("prefix", ["x509_hash", "x509_san_dns", "openid_federation"])
def test_request_object_by_reference_for_each_client_id_prefix(vp, prefix):
    created = create_request(vp, {"template": "name_and_birth_date", "client_id_prefix": prefix, "response_mode": "direct_post"})
    header, claims, client_id = fetch_request_object(vp, created)
    assert claims["aud"] == "https://self-issued.me/v2"
    assert claims["response_mode"] == "direct_post"
    assert [c["path"] for c in claims["dcql_query"]["credentials"][0]["claims"]] == [["given_name"], ["family_name"], ["birthdate"]]
    if prefix == "openid_federation":
        assert "client_metadata" not in claims and "x5c" not in header
    else:
        assert claims["client_metadata"]["vp_formats_supported"]["dc+sd-jwt"], claims


def test_request_uri_method_post_echoes_wallet_nonce(vp):
    created = create_request(vp, {"template": "age_over_18"})
    r = requests.post(created["request_uri"], data={"wallet_nonce": "wn-123", "wallet_metadata": json.dumps({"vp_formats_supported": {}})},
                      timeout=TIMEOUT)
    assert r.status_code == 200, describe(r)
    _, claims = decode_jws(r.text, "request object")
    assert claims["wallet_nonce"] == "wn-123"
    r = requests.post(created["request_uri"], data={"wallet_metadata": "[not an object"}, timeout=TIMEOUT)
    assert "wallet_metadata" in assert_json_error(r, 400, "invalid_request")["error_description"]
    r = requests.get(rp(vp) + "/request/unknown", timeout=TIMEOUT)
    assert_json_error(r, 404, "not_found")


def test_admin_api_needs_the_token_and_refuses_bad_queries(vp):
    r = requests.post(rp(vp) + "/admin/presentation-requests", json={"template": "full_pid"}, timeout=TIMEOUT)
    assert_json_error(r, 401, "unauthorized")
    for body, words in [({"template": "nope"}, "unknown template"),
                        ({"dcql_query": {"credentials": []}}, "credentials"),
                        ({"dcql_query": {"credentials": [{"id": "a", "format": "jwt_vc_json", "meta": {}}]}}, "format"),
                        ({"template": "full_pid", "response_mode": "fragment"}, "response_mode"),
                        ({"template": "full_pid", "extra": 1}, "extra")]:
        r = requests.post(rp(vp) + "/admin/presentation-requests", json=body,
                          headers={"Authorization": f"Bearer {vp.admin_token}"}, timeout=TIMEOUT)
        assert words in assert_json_error(r, 400, "invalid_request")["error_description"], (body, r.text)
    r = requests.get(rp(vp) + "/admin/presentation-requests/nope", headers={"Authorization": f"Bearer {vp.admin_token}"},
                     timeout=TIMEOUT)
    assert_json_error(r, 404, "not_found")


# ---------------------------------------------------------------------------- verified presentations

@pytest.mark.parametrize("mode,enc,prefix", [("direct_post", None, "x509_hash"), ("direct_post.jwt", "A128GCM", "x509_san_dns"),
                                             ("direct_post.jwt", "A256GCM", "x509_hash"), ("direct_post", None, "openid_federation"),
                                             ("direct_post.jwt", "A128GCM", "openid_federation")])
def test_key_bound_sd_jwt_is_verified(vp, mode, enc, prefix):
    credential, holder, who = obtain_pid(vp)
    created = create_request(vp, {"template": "name_and_birth_date", "response_mode": mode, "client_id_prefix": prefix})
    assert result(vp, created["id"])["state"] == "pending"
    _, claims, client_id = fetch_request_object(vp, created)
    token = present(credential, holder, names={"given_name", "family_name", "birthdate"}, aud=client_id, nonce=claims["nonce"])
    r = post_response(vp, claims, {"pid": [token]}, enc=enc or "A128GCM")
    assert r.status_code == 200, describe(r)
    assert r.json() == {}, r.json()           # cross-device: no redirect_uri
    res = result(vp, created["id"])
    assert res["state"] == "verified", res
    assert all(c["ok"] for c in res["checks"]), res
    names = [c["name"] for c in res["checks"]]
    for expected in ["response_mode", "pid.format", "pid.issuer_trust", "pid.issuer_signature", "pid.disclosures",
                     "pid.key_binding", "pid.claims", "pid.status"]:
        assert expected in names, names
    assert "trust chain from " + vp.id("pid-provider") in check(res, "issuer_trust")["detail"]
    pid = res["claims"]["pid"]
    assert pid["given_name"] and pid["family_name"], pid
    assert set(pid) >= {"given_name", "family_name", "birthdate", "vct", "iss"}, pid
    assert "cnf" not in pid and "address" not in pid, pid


def test_sd_jwt_reference_holder_presentation_is_verified(vp):
    """The presentation made by the `sd-jwt` reference implementation's holder, not by hand."""
    from sd_jwt.holder import SDJWTHolder
    from walletlib import jwcrypto_private
    credential, holder_key, _ = obtain_pid(vp)
    created = create_request(vp, {"template": "recovery_code", "response_mode": "direct_post"})
    _, claims, client_id = fetch_request_object(vp, created)
    holder = SDJWTHolder(credential)
    holder.create_presentation({"recovery_code": True}, nonce=claims["nonce"], aud=client_id,
                               holder_key=jwcrypto_private(holder_key), sign_alg="ES256")
    r = post_response(vp, claims, {"pid": [holder.sd_jwt_presentation]})
    assert r.status_code == 200, describe(r)
    res = result(vp, created["id"])
    assert res["state"] == "verified", res
    assert res["claims"]["pid"]["recovery_code"], res


def test_same_device_answer_carries_redirect_uri_with_response_code(vp):
    credential, holder, _ = obtain_pid(vp)
    created = create_request(vp, {"template": "age_over_18", "response_mode": "direct_post",
                                  "redirect_uri": rp(vp) + "/verify/done"})
    _, claims, client_id = fetch_request_object(vp, created)
    token = present(credential, holder, names={"age_equal_or_over", "18"}, aud=client_id, nonce=claims["nonce"])
    r = post_response(vp, claims, {"pid": [token]})
    assert r.status_code == 200, describe(r)
    redirect = r.json()["redirect_uri"]
    assert redirect.startswith(rp(vp) + "/verify/done#response_code="), redirect
    res = result(vp, created["id"])
    assert res["state"] == "verified" and res["claims"]["pid"]["age_equal_or_over"]["18"] in (True, False), res


def test_nl_bsn_template(vp):
    credential, holder, who = obtain_pid(vp, NL, index=1)   # sanne has a BSN
    created = create_request(vp, {"template": "nl_bsn", "response_mode": "direct_post.jwt"})
    _, claims, client_id = fetch_request_object(vp, created)
    r = post_response(vp, claims, {"pid": [present(credential, holder, names={"bsn"}, aud=client_id, nonce=claims["nonce"])]})
    assert r.status_code == 200, describe(r)
    res = result(vp, created["id"])
    assert res["state"] == "verified" and res["claims"]["pid"]["bsn"], res


# ---------------------------------------------------------------------------- refusals

def fresh(vp, template="name_and_birth_date", mode="direct_post"):
    created = create_request(vp, {"template": template, "response_mode": mode})
    _, claims, client_id = fetch_request_object(vp, created)
    return created, claims, client_id


NAMES = {"given_name", "family_name", "birthdate"}


def test_wrong_nonce_refused(vp):
    credential, holder, _ = obtain_pid(vp)
    created, claims, client_id = fresh(vp)
    r = post_response(vp, claims, {"pid": [present(credential, holder, names=NAMES, aud=client_id, nonce="not-the-nonce")]})
    refused(vp, created, r, "pid.key_binding", "nonce does not match")


def test_wrong_aud_refused(vp):
    credential, holder, _ = obtain_pid(vp)
    created, claims, _ = fresh(vp, mode="direct_post.jwt")
    token = present(credential, holder, names=NAMES, aud="x509_hash:someone-else", nonce=claims["nonce"])
    r = post_response(vp, claims, {"pid": [token]})
    refused(vp, created, r, "pid.key_binding", "aud does not match")


def test_stale_iat_refused(vp):
    credential, holder, _ = obtain_pid(vp)
    created, claims, client_id = fresh(vp)
    token = present(credential, holder, names=NAMES, aud=client_id, nonce=claims["nonce"], iat=int(time.time()) - 3600)
    refused(vp, created, post_response(vp, claims, {"pid": [token]}), "pid.key_binding", "iat too old")


def test_tampered_disclosure_refused(vp):
    credential, holder, _ = obtain_pid(vp)
    created, claims, client_id = fresh(vp)

    def tamper(chosen):
        out = []
        for d in chosen:
            salt, name, value = decode_disclosure(d)
            if name == "family_name":
                d = b64url(json.dumps([salt, name, "Mallory"]).encode())
            out.append(d)
        return out
    token = present(credential, holder, names=NAMES, aud=client_id, nonce=claims["nonce"], tamper=tamper)
    refused(vp, created, post_response(vp, claims, {"pid": [token]}), "pid.disclosures", "not referenced")


def test_extra_disclosure_refused(vp):
    credential, holder, _ = obtain_pid(vp)
    created, claims, client_id = fresh(vp)
    token = present(credential, holder, names=NAMES | {"nationalities"}, aud=client_id, nonce=claims["nonce"])
    refused(vp, created, post_response(vp, claims, {"pid": [token]}), "pid.claims", "discloses nationalities")


def test_missing_requested_claim_refused(vp):
    credential, holder, _ = obtain_pid(vp)
    created, claims, client_id = fresh(vp)
    token = present(credential, holder, names={"given_name", "birthdate"}, aud=client_id, nonce=claims["nonce"])
    refused(vp, created, post_response(vp, claims, {"pid": [token]}), "pid.claims", "family_name is missing")


def test_tampered_issuer_signature_refused(vp):
    credential, holder, _ = obtain_pid(vp)
    created, claims, client_id = fresh(vp)
    jwt, disclosures, _ = split_sd_jwt(credential)
    h, p, s = jwt.split(".")
    sig = bytearray(base64.urlsafe_b64decode(s + "=" * (-len(s) % 4)))
    sig[5] ^= 1
    forged = ".".join([h, p, b64url(bytes(sig))]) + "~" + "".join(d + "~" for d in disclosures)
    token = present(forged, holder, names=NAMES, aud=client_id, nonce=claims["nonce"])
    refused(vp, created, post_response(vp, claims, {"pid": [token]}), "pid.issuer_signature", "signature")


def test_plain_response_to_an_encrypted_request_refused(vp):
    credential, holder, _ = obtain_pid(vp)
    created, claims, client_id = fresh(vp, mode="direct_post.jwt")
    token = present(credential, holder, names=NAMES, aud=client_id, nonce=claims["nonce"])
    refused(vp, created, post_response(vp, claims, {"pid": [token]}, encrypt=False), "response_mode", "direct_post.jwt")


def test_wallet_error_response_recorded_as_refused(vp):
    created, claims, _ = fresh(vp)
    r = post_response(vp, claims, None, extra={"error": "access_denied", "error_description": "the user said no"})
    assert r.status_code == 200, describe(r)
    res = result(vp, created["id"])
    assert res["state"] == "refused" and "access_denied" in check(res, "wallet_response")["detail"], res


def test_replayed_and_foreign_responses_are_400(vp):
    credential, holder, _ = obtain_pid(vp)
    created, claims, client_id = fresh(vp)
    token = present(credential, holder, names=NAMES, aud=client_id, nonce=claims["nonce"])
    assert post_response(vp, claims, {"pid": [token]}).status_code == 200
    again = post_response(vp, claims, {"pid": [token]})
    assert "already answered" in assert_json_error(again, 400, "invalid_request")["error_description"]
    # The same presentation under another request's state: a foreign state, then a foreign nonce.
    foreign = post_response(vp, claims, {"pid": [token]}, state="no-such-state")
    assert "foreign" in assert_json_error(foreign, 400, "invalid_request")["error_description"]
    other, other_claims, _ = fresh(vp)
    refused(vp, other, post_response(vp, other_claims, {"pid": [token]}), "pid.key_binding", "nonce does not match")
    assert result(vp, created["id"])["state"] == "verified"


def test_malformed_responses_are_400_without_a_record(vp):
    created, claims, _ = fresh(vp, mode="direct_post.jwt")
    url = claims["response_uri"]
    cases = [
        ({"response": "not.a.jwe"}, "cannot be decrypted"),
        ({"response": "a.b.c.d.e", "state": claims["state"]}, "only the response parameter"),
        ({"vp_token": "{not json", "state": claims["state"]}, "vp_token is not JSON"),
        ({"vp_token": json.dumps({"pid": []}), "state": claims["state"]}, "non-empty array"),
        ({"vp_token": json.dumps({"pid": ["x"]})}, "state is missing"),
    ]
    for form, words in cases:
        r = requests.post(url, data=form, timeout=TIMEOUT)
        assert words in assert_json_error(r, 400, "invalid_request")["error_description"], (form, r.text)
    r = requests.post(url, json={"state": claims["state"]}, timeout=TIMEOUT)
    assert_json_error(r, 400, "invalid_request")
    assert result(vp, created["id"])["state"] == "pending"


MDOC = "eu.europa.ec.eudi.pid.1"


def mdoc_query(elements=("family_name", "given_name")) -> dict:
    return {"credentials": [{"id": "pid", "format": "mso_mdoc", "meta": {"doctype_value": MDOC},
                             "claims": [{"path": [MDOC, e]} for e in elements]}]}


def device_response(issuer_signed_b64: str, holder: ECKey, *, elements: set[str] | None, client_id: str, nonce: str,
                    response_uri: str, encryption_jwk: dict | None) -> str:
    """ISO 18013-5 §8.3.2.1.2.2 by hand with cbor2: the chosen IssuerSignedItems as received (tag 24
    bytes untouched), and a detached COSE_Sign1 (ES256, raw r||s) over DeviceAuthentication with
    OpenID4VP 1.0's SessionTranscript (B.2.6.1: SHA-256 of [client_id, nonce, jwk thumbprint or
    null, response_uri])."""
    import cbor2
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
    issuer_signed = cbor2.loads(base64.urlsafe_b64decode(issuer_signed_b64 + "=" * (-len(issuer_signed_b64) % 4)))
    selected = {}
    for ns, items in issuer_signed["nameSpaces"].items():
        chosen = [t for t in items if elements is None or cbor2.loads(t.value)["elementIdentifier"] in elements]
        if chosen:
            selected[ns] = chosen
    thumb = None
    if encryption_jwk is not None:
        t = ECKey.import_key(encryption_jwk).thumbprint()
        thumb = base64.urlsafe_b64decode(t + "=" * (-len(t) % 4))
    info = cbor2.dumps([client_id, nonce, thumb, response_uri])
    transcript = [None, None, ["OpenID4VPHandover", hashlib.sha256(info).digest()]]
    device_ns = cbor2.CBORTag(24, cbor2.dumps({}))
    auth = cbor2.dumps(cbor2.CBORTag(24, cbor2.dumps(["DeviceAuthentication", transcript, MDOC, device_ns])))
    protected = cbor2.dumps({1: -7})
    der = holder.private_key.sign(cbor2.dumps(["Signature1", protected, b"", auth]), ec.ECDSA(hashes.SHA256()))
    r, s_ = decode_dss_signature(der)
    signature = r.to_bytes(32, "big") + s_.to_bytes(32, "big")
    document = {"docType": MDOC, "issuerSigned": {"nameSpaces": selected, "issuerAuth": issuer_signed["issuerAuth"]},
                "deviceSigned": {"nameSpaces": device_ns, "deviceAuth": {"deviceSignature": [protected, {}, None, signature]}}}
    return b64url(cbor2.dumps({"version": "1.0", "documents": [document], "status": 0}))


@pytest.mark.parametrize("mode", ["direct_post", "direct_post.jwt"])
def test_mdoc_device_response_is_verified(vp, mode):
    credential, holder, _ = obtain_pid(vp, MDOC)
    created = create_request(vp, {"dcql_query": mdoc_query(), "response_mode": mode})
    _, claims, client_id = fetch_request_object(vp, created)
    enc = [k for k in claims["client_metadata"]["jwks"]["keys"] if k.get("use") == "enc"][0] if mode == "direct_post.jwt" else None
    token = device_response(credential, holder, elements={"family_name", "given_name"}, client_id=client_id, nonce=claims["nonce"],
                            response_uri=claims["response_uri"], encryption_jwk=enc)
    r = post_response(vp, claims, {"pid": [token]})
    assert r.status_code == 200, describe(r)
    res = result(vp, created["id"])
    assert res["state"] == "verified", res
    names = [c["name"] for c in res["checks"]]
    for expected in ["pid.issuer_trust", "pid.issuer_certificate", "pid.issuer_signature", "pid.value_digests", "pid.device_signature",
                     "pid.claims", "pid.status"]:
        assert expected in names, names
    assert set(res["claims"]["pid"][MDOC]) == {"family_name", "given_name"}, res["claims"]


def test_mdoc_refusals(vp):
    credential, holder, _ = obtain_pid(vp, MDOC)
    # A device signature over another request's transcript (the nonce differs).
    created = create_request(vp, {"dcql_query": mdoc_query(), "response_mode": "direct_post"})
    _, claims, client_id = fetch_request_object(vp, created)
    token = device_response(credential, holder, elements={"family_name", "given_name"}, client_id=client_id, nonce="other",
                            response_uri=claims["response_uri"], encryption_jwk=None)
    refused(vp, created, post_response(vp, claims, {"pid": [token]}), "pid.device_signature", "DeviceAuthentication")
    # More elements than asked.
    created = create_request(vp, {"dcql_query": mdoc_query(), "response_mode": "direct_post"})
    _, claims, client_id = fetch_request_object(vp, created)
    token = device_response(credential, holder, elements={"family_name", "given_name", "birth_date"}, client_id=client_id,
                            nonce=claims["nonce"], response_uri=claims["response_uri"], encryption_jwk=None)
    refused(vp, created, post_response(vp, claims, {"pid": [token]}), "pid.claims", "birth_date")
    # Not a DeviceResponse at all.
    created = create_request(vp, {"dcql_query": mdoc_query(), "response_mode": "direct_post"})
    _, claims, _ = fetch_request_object(vp, created)
    refused(vp, created, post_response(vp, claims, {"pid": ["o2d2ZXJzaW9u"]}), "pid.format", "not a DeviceResponse")


def test_revoked_pid_refused_and_status_list_cached_within_ttl(session_tmp):
    """Its own server, so the verifier's status list cache starts cold: the revoked PID is refused
    from a freshly fetched list, and the next presentation reads the list from the cache (ttl)."""
    server = start_pid_server(session_tmp / f"verifier-status-{time.monotonic_ns()}", label="verifier-status")
    try:
        issuer = server.id("pid-provider")
        credential, holder, who = obtain_pid(server)
        newest = max(admin_credentials(issuer, server.admin_token, who["id"]), key=lambda c: c["issued_at"])
        assert admin_set_status(issuer, server.admin_token, newest["id"], "invalid").status_code == 200
        created, claims, client_id = fresh(server)
        token = present(credential, holder, names=NAMES, aud=client_id, nonce=claims["nonce"])
        res = refused(server, created, post_response(server, claims, {"pid": [token]}), "pid.status", "INVALID (revoked)")
        assert "(fetched)" in check(res, "pid.status")["detail"], res
        good, good_holder, _ = obtain_pid(server, index=1)
        created, claims, client_id = fresh(server)
        token = present(good, good_holder, names=NAMES, aud=client_id, nonce=claims["nonce"])
        assert post_response(server, claims, {"pid": [token]}).status_code == 200
        res = result(server, created["id"])
        assert res["state"] == "verified" and "VALID (cached" in check(res, "pid.status")["detail"], res
    finally:
        server.stop()
