"""Bad input over HTTP at the token, nonce and credential endpoints and the admin API: malformed
JSON, JWTs and CBOR, wrong content types, oversized bodies, wrong proofs, each answered with
the JSON error and status the specifications name (RFC 6749 §5.2, RFC 6750 §3, RFC 9449 §7,
OpenID4VCI 1.0 §6.3 and §8.3.1.2); unknown parameters are ignored (RFC 6749 §3.1, §3.2)."""
from __future__ import annotations

import base64
import json
import time

import cbor2
import pytest
import requests
from fedlib import assert_json_error, describe
from walletlib import (PRE_AUTH_GRANT, Wallet, admin_offer, b64url, key_proof, new_key, persona, public_jwk, sign_jwt,
                       start_pid_server)

SD = "urn:eudi:pid:1"
MDOC = "eu.europa.ec.eudi.pid.1"


@pytest.fixture(scope="module")
def pid(session_tmp):
    server = start_pid_server(session_tmp / f"pid-bad-{time.monotonic_ns()}", label="pid-bad")
    yield server
    server.stop()


def code(server, *, tx_code: bool = False, ids=(SD,)) -> tuple[str, str | None]:
    answer = admin_offer(server.id("pid-provider"), server.admin_token, persona(server)["id"], list(ids), tx_code=tx_code)
    return answer["credential_offer"]["grants"][PRE_AUTH_GRANT]["pre-authorized_code"], answer.get("tx_code")


@pytest.fixture
def bearer(pid):
    """A fresh Bearer access token for the SD-JWT configuration, and the issuer."""
    issuer = pid.id("pid-provider")
    c, _ = code(pid)
    token = Wallet(issuer, use_dpop=False).token({"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": c})
    return issuer, token["access_token"]


def post_credential(issuer, token, body, content_type="application/json"):
    data = json.dumps(body) if isinstance(body, (dict, list)) else body
    return requests.post(issuer + "/credential", data=data, timeout=10,
                         headers={"Authorization": f"Bearer {token}", "Content-Type": content_type})


def nonce(issuer) -> str:
    return requests.post(issuer + "/nonce", timeout=10).json()["c_nonce"]


# ---------------------------------------------------------------------------- token endpoint


def test_token_request_errors(pid):
    issuer = pid.id("pid-provider")
    url = issuer + "/token"
    c, _ = code(pid)
    assert_json_error(requests.post(url, data={"pre-authorized_code": c}, timeout=10), 400, "invalid_request")
    assert_json_error(requests.post(url, data={"grant_type": "password", "username": "x"}, timeout=10), 400,
                      "unsupported_grant_type")
    assert_json_error(requests.post(url, data={"grant_type": PRE_AUTH_GRANT}, timeout=10), 400, "invalid_request")
    assert_json_error(requests.post(url, data={"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": "nope"}, timeout=10), 400,
                      "invalid_grant")
    # A repeated parameter is invalid_request (RFC 6749 §3.2: parameters MUST NOT be included more than once).
    r = requests.post(url, data=[("grant_type", PRE_AUTH_GRANT), ("pre-authorized_code", c), ("pre-authorized_code", c)],
                      timeout=10)
    assert_json_error(r, 400, "invalid_request")
    r = requests.get(url, timeout=10)
    assert r.status_code == 405 and "POST" in r.headers.get("Allow", ""), describe(r)
    r = requests.post(url, data=b"\xff\xfe=\x00", headers={"Content-Type": "application/x-www-form-urlencoded"}, timeout=10)
    assert_json_error(r, 400, ("invalid_request", "unsupported_grant_type"))


def test_token_request_in_json_is_400_invalid_request(pid):
    """RFC 6749 §3.2/§4.1.3: the token request is form-encoded; any error at the token endpoint
    is HTTP 400 "unless specified otherwise" (§5.2), and nothing specifies 415 for it."""
    c, _ = code(pid)
    r = requests.post(pid.id("pid-provider") + "/token", json={"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": c}, timeout=10)
    assert_json_error(r, 400, "invalid_request")
    r = requests.post(pid.id("pid-provider") + "/token", data=f"grant_type={PRE_AUTH_GRANT}&pre-authorized_code={c}",
                      headers={"Content-Type": "text/plain"}, timeout=10)
    assert_json_error(r, 400, "invalid_request")


def test_tx_code_expected_missing_or_unexpected(pid):
    """OpenID4VCI §6.3: a missing or unexpected tx_code is invalid_request, a wrong one invalid_grant."""
    url = pid.id("pid-provider") + "/token"
    c, tx = code(pid, tx_code=True)
    assert_json_error(requests.post(url, data={"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": c}, timeout=10), 400,
                      "invalid_request")
    c2, _ = code(pid, tx_code=False)
    assert_json_error(requests.post(url, data={"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": c2, "tx_code": "1234"},
                                    timeout=10), 400, "invalid_request")
    r = requests.post(url, data={"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": c, "tx_code": tx}, timeout=10)
    assert r.status_code == 200, describe(r)


def test_unknown_parameters_are_ignored(pid):
    issuer = pid.id("pid-provider")
    c, _ = code(pid)
    r = requests.post(issuer + "/token", data={"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": c, "foo": "bar",
                                               "resource": "x", "client_assertion_type": ""}, timeout=10)
    assert r.status_code == 200, describe(r)
    token = r.json()["access_token"]
    r = requests.post(issuer + "/nonce?foo=bar", data={"also": "ignored"}, timeout=10)
    assert r.status_code == 200 and r.json()["c_nonce"], describe(r)
    c_nonce = r.json()["c_nonce"]
    answer = admin_offer(issuer, pid.admin_token, persona(pid)["id"], [SD])
    r = requests.get(answer["credential_offer_uri"] + "?foo=bar&x", timeout=10)
    assert r.status_code == 200, describe(r)
    r = post_credential(issuer + "", token, {"credential_configuration_id": SD,
                                             "proofs": {"jwt": [key_proof(new_key(), issuer, c_nonce)]}},
                        content_type="application/json; charset=utf-8")
    assert r.status_code == 200, f"a charset parameter on application/json is fine: {describe(r)}"


def test_nonce_endpoint(pid):
    issuer = pid.id("pid-provider")
    a = requests.post(issuer + "/nonce", timeout=10)
    b = requests.post(issuer + "/nonce", timeout=10)
    assert a.status_code == 200 and a.headers["Content-Type"].split(";")[0] == "application/json", describe(a)
    assert a.headers.get("Cache-Control") == "no-store" and "Access-Control-Allow-Origin" not in a.headers
    assert a.json()["c_nonce"] != b.json()["c_nonce"] and len(a.json()["c_nonce"]) >= 16
    r = requests.get(issuer + "/nonce", timeout=10)
    assert r.status_code == 405, describe(r)


# ---------------------------------------------------------------------------- credential endpoint: access


def test_credential_without_or_with_bad_token(pid):
    issuer = pid.id("pid-provider")
    body = json.dumps({"credential_configuration_id": SD, "proofs": {"jwt": [key_proof(new_key(), issuer, nonce(issuer))]}})
    r = requests.post(issuer + "/credential", data=body, headers={"Content-Type": "application/json"}, timeout=10)
    assert r.status_code == 401 and r.headers.get("WWW-Authenticate", "").split(" ")[0] in ("Bearer", "DPoP"), describe(r)
    r = requests.post(issuer + "/credential", data=body, timeout=10,
                      headers={"Content-Type": "application/json", "Authorization": "Bearer not-a-token"})
    assert_json_error(r, 401, "invalid_token")
    assert 'error="invalid_token"' in r.headers.get("WWW-Authenticate", ""), describe(r)
    r = requests.post(issuer + "/credential", data=body, timeout=10,
                      headers={"Content-Type": "application/json", "Authorization": "Basic Zm9vOmJhcg=="})
    assert r.status_code == 401, describe(r)


# ---------------------------------------------------------------------------- credential endpoint: bodies


def test_malformed_bodies_and_content_types(pid, bearer):
    issuer, token = bearer
    good = {"credential_configuration_id": SD, "proofs": {"jwt": [key_proof(new_key(), issuer, nonce(issuer))]}}
    for body, ctype in [
        ('{"credential_configuration_id": ', "application/json"),             # truncated JSON
        ('{"a":1,"a":2}', "application/json"),                                # duplicate member
        ("[1,2,3]", "application/json"),                                      # not an object
        (json.dumps(good), "text/plain"),                                      # wrong media type
        (json.dumps(good), "application/x-www-form-urlencoded"),
        (cbor2.dumps(good), "application/cbor"),                               # CBOR is not a request format here
        (b"\xa1\x61a\xff\xff", "application/json"),                           # garbage bytes
        ("", "application/json"),
    ]:
        r = post_credential(issuer, token, body, ctype)
        assert_json_error(r, 400, "invalid_credential_request")
    # The token still works afterwards: refusals consume nothing.
    r = post_credential(issuer, token, {"credential_configuration_id": SD,
                                        "proofs": {"jwt": [key_proof(new_key(), issuer, nonce(issuer))]}})
    assert r.status_code == 200, describe(r)


def test_oversized_body(pid, bearer):
    issuer, token = bearer
    big = json.dumps({"credential_configuration_id": SD, "pad": "x" * (1024 * 1024 + 10)})
    r = post_credential(issuer, token, big)
    assert r.status_code == 413, describe(r)
    assert r.headers["Content-Type"].split(";")[0] == "application/json" and r.json()["error"], describe(r)


def test_request_shape_errors(pid, bearer):
    issuer, token = bearer

    def proofs():
        return {"jwt": [key_proof(new_key(), issuer, nonce(issuer))]}

    assert_json_error(post_credential(issuer, token, {"credential_configuration_id": "no.such.config", "proofs": proofs()}),
                      400, "unknown_credential_configuration")
    assert_json_error(post_credential(issuer, token, {"proofs": proofs()}), 400, "invalid_credential_request")
    assert_json_error(post_credential(issuer, token, {"credential_configuration_id": SD, "credential_identifier": "x",
                                                      "proofs": proofs()}), 400, "invalid_credential_request")
    assert_json_error(post_credential(issuer, token, {"credential_configuration_id": 7, "proofs": proofs()}), 400,
                      "invalid_credential_request")
    # §8.2: proofs is an object with exactly one proof type; `proof` (singular) is gone in 1.0.
    assert_json_error(post_credential(issuer, token, {"credential_configuration_id": SD,
                                                      "proof": {"proof_type": "jwt", "jwt": proofs()["jwt"][0]}}),
                      400, ("invalid_credential_request", "invalid_proof"))
    assert_json_error(post_credential(issuer, token, {"credential_configuration_id": SD, "proofs": {"jwt": []}}), 400,
                      ("invalid_credential_request", "invalid_proof"))
    assert_json_error(post_credential(issuer, token, {"credential_configuration_id": SD, "proofs": {"jwt": "a.b.c"}}), 400,
                      ("invalid_credential_request", "invalid_proof"))
    # The token was granted for the SD-JWT configuration only.
    r = post_credential(issuer, token, {"credential_configuration_id": MDOC, "proofs": proofs()})
    assert_json_error(r, 403, "insufficient_scope")  # OpenID4VCI §8.3.1.1, RFC 6750 §3.1
    # More proofs than batch_size.
    md = requests.get(issuer + "/.well-known/openid-credential-issuer", timeout=10).json()
    n = md["batch_credential_issuance"]["batch_size"] + 1
    c_nonce = nonce(issuer)
    r = post_credential(issuer, token, {"credential_configuration_id": SD,
                                        "proofs": {"jwt": [key_proof(new_key(), issuer, c_nonce) for _ in range(n)]}})
    assert_json_error(r, 400, ("invalid_credential_request", "invalid_proof"))


def test_bad_proofs(pid, bearer):
    issuer, token = bearer
    key = new_key()

    def send(proof):
        return post_credential(issuer, token, {"credential_configuration_id": SD, "proofs": {"jwt": [proof]}})

    def forged_none(n):
        header = b64url(json.dumps({"typ": "openid4vci-proof+jwt", "alg": "none", "jwk": public_jwk(key)}).encode())
        claims = b64url(json.dumps({"aud": issuer, "iat": int(time.time()), "nonce": n}).encode())
        return f"{header}.{claims}."

    def tampered(n):
        h, p, s = key_proof(key, issuer, n).split(".")
        claims = json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
        claims["aud"] = issuer + "/"
        return f"{h}.{b64url(json.dumps(claims).encode())}.{s}"

    with_private = dict(key.as_dict(private=True))
    invalid_proofs = {
        "not a JWT": lambda n: "not-a-jwt",
        "four parts": lambda n: "a.b.c.d",
        "garbage base64": lambda n: "!!!.###.$$$",
        "alg none": forged_none,
        "tampered payload": tampered,
        "wrong typ": lambda n: key_proof(key, issuer, n, header={"typ": "JWT"}),
        "no typ": lambda n: sign_jwt({"alg": "ES256", "jwk": public_jwk(key)}, {"aud": issuer, "iat": int(time.time()),
                                                                               "nonce": n}, key),
        "private key in jwk": lambda n: key_proof(key, issuer, n, header={"jwk": with_private}),
        "jwk and kid": lambda n: key_proof(key, issuer, n, header={"kid": "k1"}),
        "no key": lambda n: sign_jwt({"typ": "openid4vci-proof+jwt", "alg": "ES256"},
                                     {"aud": issuer, "iat": int(time.time()), "nonce": n}, key),
        "wrong aud": lambda n: key_proof(key, "https://other-issuer.example", n),
        "old iat": lambda n: key_proof(key, issuer, n, iat=int(time.time()) - 3600),
        "future iat": lambda n: key_proof(key, issuer, n, iat=int(time.time()) + 3600),
        "jwk of another key": lambda n: key_proof(key, issuer, n, header={"jwk": public_jwk(new_key())}),
        "payload not JSON": lambda n: sign_jwt({"typ": "openid4vci-proof+jwt", "alg": "ES256", "jwk": public_jwk(key)},
                                               b"not json", key),
    }
    for name, make in invalid_proofs.items():
        r = send(make(nonce(issuer)))
        assert r.status_code == 400 and r.json().get("error") == "invalid_proof", f"{name}: {describe(r)}"
    # §8.3.1.2: a wrong, missing or used c_nonce is invalid_nonce.
    assert_json_error(send(key_proof(key, issuer, "made-up-nonce")), 400, "invalid_nonce")
    assert_json_error(send(key_proof(key, issuer, None)), 400, ("invalid_nonce", "invalid_proof"))
    n = nonce(issuer)
    assert send(key_proof(key, issuer, n)).status_code == 200
    assert_json_error(send(key_proof(new_key(), issuer, n)), 400, "invalid_nonce")


# ---------------------------------------------------------------------------- admin API and offers


def test_admin_api_refusals(pid):
    issuer = pid.id("pid-provider")
    url = issuer + "/admin/offers"
    body = {"persona": persona(pid)["id"], "credential_configuration_ids": [SD], "grant": "pre-authorized_code", "tx_code": False}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {pid.admin_token}"}):
        r = requests.post(url, json=body, headers=headers, timeout=10)
        assert_json_error(r, 401, ("unauthorized", "invalid_token"))
    auth = {"Authorization": f"Bearer {pid.admin_token}"}
    for bad in (dict(body, persona="nobody"), dict(body, credential_configuration_ids=["nope"]),
                dict(body, credential_configuration_ids=[]), dict(body, grant="implicit"), dict(body, tx_code="yes")):
        r = requests.post(url, json=bad, headers=auth, timeout=10)
        assert_json_error(r, 400, "invalid_request")
    r = requests.post(url, data="{not json", headers=dict(auth, **{"Content-Type": "application/json"}), timeout=10)
    assert_json_error(r, 400, "invalid_request")
    r = requests.get(issuer + "/admin/credentials", params={"persona": persona(pid)["id"]}, timeout=10)
    assert_json_error(r, 401, ("unauthorized", "invalid_token"))
    r = requests.get(issuer + "/offers/does-not-exist/credential-offer", timeout=10)
    assert_json_error(r, 404, "not_found")
    r = requests.get(issuer + "/status/999999", timeout=10)
    assert r.status_code == 404, describe(r)
