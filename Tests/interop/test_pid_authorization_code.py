"""The authorization code flow (OpenID4VCI 1.0 §3.4, §5, §6) with everything a HAIP wallet
sends: PAR (RFC 9126) with attestation-based client authentication, PKCE S256 (RFC 7636),
DPoP (RFC 9449), `login_hint` on /authorize, the RFC 9207 `iss` in the redirect, and the
`credential_identifier` when authorization_details were used.

The test runs its own federation: the demo entities plus a wallet provider entity under
`intermediate` whose `wallet_provider` metadata holds a key this test owns, so its client
attestations chain to the Trust Anchor the issuer trusts (`trust_anchors: ["ta"]`)."""
from __future__ import annotations

import json
import secrets
import time
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from fedlib import assert_json_error, describe
from walletlib import (ClientInstance, Wallet, WalletProvider, admin_offer, dpop_proof, iaca_certificate, key_proof,
                       new_key, persona, pkce_pair, start_pid_server, verify_mdoc, verify_sd_jwt_vc)

SD = "urn:eudi:pid:1"
MDOC = "eu.europa.ec.eudi.pid.1"
REDIRECT = "eu.trustbed.test-wallet:/callback"  # a custom scheme, as native wallets register


@pytest.fixture(scope="module")
def env(session_tmp):
    """(server, wallet provider entity hosted by that server under `intermediate`)."""
    provider = WalletProvider(entity_id="")
    server = start_pid_server(session_tmp / f"pid-authcode-{time.monotonic_ns()}", label="pid-authcode",
                              wallet_provider=provider)
    yield server, provider
    server.stop()


def client_for(provider: WalletProvider, **attestation_kw) -> ClientInstance:
    key = new_key()
    client_id = "test-wallet-" + secrets.token_hex(4)
    return ClientInstance(client_id=client_id, key=key, attestation=provider.attestation(client_id, key, **attestation_kw))


def details(*ids: str) -> list[dict]:
    return [{"type": "openid_credential", "credential_configuration_id": i} for i in ids]


def test_full_flow_authorization_details_credential_identifier(env):
    server, provider = env
    issuer = server.id("pid-provider")
    who = persona(server)
    wallet = Wallet(issuer, use_dpop=True, client=client_for(provider))
    token, params = wallet.authorization_code_flow(persona=who["id"], redirect_uri=REDIRECT, authorization_details=details(SD, MDOC))
    assert token["token_type"] == "DPoP"
    ad = token.get("authorization_details")
    assert isinstance(ad, list) and len(ad) == 2, f"token response must echo authorization_details (§6.2): {token}"
    by_config = {d["credential_configuration_id"]: d for d in ad}
    assert set(by_config) == {SD, MDOC}
    iaca = iaca_certificate(issuer)
    for cid, d in by_config.items():
        assert d["type"] == "openid_credential" and d["credential_identifiers"], d
        body, keys = wallet.credential(token["access_token"], identifier=d["credential_identifiers"][0])
        cred = body["credentials"][0]["credential"]
        if cid == SD:
            checked = verify_sd_jwt_vc(cred, issuer=issuer, iaca=iaca, holder_key=keys[0], vct=SD)
            assert checked["claims"]["given_name"] == who["given_name"]
        else:
            checked = verify_mdoc(cred, iaca=iaca, holder_key=keys[0])
            assert checked["elements"]["given_name"] == who["given_name"]
    # With authorization_details in the token response, a configuration id is not the way in (§8.2).
    c_nonce = wallet.nonce()
    r = wallet.credential_request(token["access_token"], {"credential_configuration_id": SD,
                                                         "proofs": {"jwt": [key_proof(new_key(), issuer, c_nonce,
                                                                                      client_id=wallet.client.client_id)]}})
    assert_json_error(r, 400, "invalid_credential_request")
    r = wallet.credential_request(token["access_token"], {"credential_identifier": "not-issued",
                                                         "proofs": {"jwt": [key_proof(new_key(), issuer, wallet.nonce(),
                                                                                      client_id=wallet.client.client_id)]}})
    assert_json_error(r, 400, "unknown_credential_identifier")


def test_flow_with_scope_uses_configuration_id(env):
    server, provider = env
    issuer = server.id("pid-provider")
    wallet = Wallet(issuer, use_dpop=True, client=client_for(provider))
    token, _ = wallet.authorization_code_flow(persona=persona(server)["id"], redirect_uri=REDIRECT, scope=SD)
    assert "authorization_details" not in token or not token["authorization_details"]
    body, keys = wallet.credential(token["access_token"], configuration_id=SD)
    verify_sd_jwt_vc(body["credentials"][0]["credential"], issuer=issuer, iaca=iaca_certificate(issuer), holder_key=keys[0], vct=SD)


def test_authorization_code_offer_issuer_state(env):
    server, provider = env
    issuer = server.id("pid-provider")
    who = persona(server)
    answer = admin_offer(issuer, server.admin_token, who["id"], [SD], grant="authorization_code")
    offer = answer["credential_offer"]
    issuer_state = offer["grants"]["authorization_code"]["issuer_state"]
    assert "urn:ietf:params:oauth:grant-type:pre-authorized_code" not in offer["grants"]
    wallet = Wallet(issuer, use_dpop=True, client=client_for(provider))
    verifier, challenge = pkce_pair()
    r = wallet.par(redirect_uri=REDIRECT, code_challenge=challenge, state="s1", authorization_details=details(SD),
                   issuer_state=issuer_state)
    assert r.status_code == 201, describe(r)
    r = requests.get(wallet.authorize_url(r.json()["request_uri"], login_hint=who["id"]), allow_redirects=False, timeout=10)
    assert r.status_code in (302, 303), describe(r)
    q = parse_qs(urlsplit(r.headers["Location"]).query)
    token = wallet.token({"grant_type": "authorization_code", "code": q["code"][0], "redirect_uri": REDIRECT,
                          "code_verifier": verifier, "client_id": wallet.client.client_id})
    ident = token["authorization_details"][0]["credential_identifiers"][0]
    body, keys = wallet.credential(token["access_token"], identifier=ident)
    checked = verify_sd_jwt_vc(body["credentials"][0]["credential"], issuer=issuer, iaca=iaca_certificate(issuer),
                               holder_key=keys[0], vct=SD)
    assert checked["claims"]["family_name"] == who["family_name"]


# ---------------------------------------------------------------------------- refusals


def par_form(client: ClientInstance, challenge: str, **extra) -> dict:
    form = {"response_type": "code", "client_id": client.client_id, "redirect_uri": REDIRECT, "code_challenge": challenge,
            "code_challenge_method": "S256", "state": "x", "authorization_details": json.dumps(details(SD))}
    form.update(extra)
    return {k: v for k, v in form.items() if v is not None}


def test_par_refuses_plain_or_missing_pkce(env):
    server, provider = env
    issuer = server.id("pid-provider")
    client = client_for(provider)
    _, challenge = pkce_pair()
    for extra in ({"code_challenge_method": "plain"}, {"code_challenge": None, "code_challenge_method": None}):
        r = requests.post(issuer + "/par", data=par_form(client, challenge, **extra), headers=client.headers(issuer), timeout=10)
        assert_json_error(r, 400, "invalid_request")


def test_par_refuses_untrusted_or_mismatched_attestations(env):
    server, provider = env
    issuer = server.id("pid-provider")
    _, challenge = pkce_pair()
    stranger = WalletProvider(entity_id=provider.entity_id)  # same iss, key the federation does not know
    bad = [
        client_for(stranger),
        client_for(WalletProvider(entity_id=server.id("relying-party"))),  # in the federation, but no wallet_provider
        client_for(provider, lifetime=-60),  # expired
    ]
    for client in bad:
        r = requests.post(issuer + "/par", data=par_form(client, challenge), headers=client.headers(issuer), timeout=10)
        assert_json_error(r, 401, "invalid_client")
    # sub must equal client_id; the PoP must be signed by cnf.jwk and name this AS.
    good = client_for(provider)
    r = requests.post(issuer + "/par", data=par_form(good, challenge, client_id="someone-else"), headers=good.headers(issuer),
                      timeout=10)
    assert_json_error(r, 401, "invalid_client")
    other_key = ClientInstance(good.client_id, new_key(), good.attestation)
    r = requests.post(issuer + "/par", data=par_form(good, challenge), timeout=10,
                      headers={"OAuth-Client-Attestation": good.attestation,
                               "OAuth-Client-Attestation-PoP": other_key.pop(issuer)})
    assert_json_error(r, 401, "invalid_client")
    r = requests.post(issuer + "/par", data=par_form(good, challenge), timeout=10,
                      headers={"OAuth-Client-Attestation": good.attestation,
                               "OAuth-Client-Attestation-PoP": good.pop("https://other-as.example")})
    assert_json_error(r, 401, "invalid_client")
    # A PoP is single use (its jti is remembered).
    headers = good.headers(issuer)
    r = requests.post(issuer + "/par", data=par_form(good, challenge), headers=headers, timeout=10)
    assert r.status_code == 201, describe(r)
    r = requests.post(issuer + "/par", data=par_form(good, challenge), headers=headers, timeout=10)
    assert_json_error(r, 401, "invalid_client")


def _code(wallet: Wallet, who: str) -> tuple[str, str]:
    verifier, challenge = pkce_pair()
    r = wallet.par(redirect_uri=REDIRECT, code_challenge=challenge, state="st", authorization_details=details(SD))
    assert r.status_code == 201, describe(r)
    r = requests.get(wallet.authorize_url(r.json()["request_uri"], login_hint=who), allow_redirects=False, timeout=10)
    assert r.status_code in (302, 303), describe(r)
    return parse_qs(urlsplit(r.headers["Location"]).query)["code"][0], verifier


def test_code_is_single_use_and_needs_the_verifier(env):
    server, provider = env
    issuer = server.id("pid-provider")
    wallet = Wallet(issuer, use_dpop=True, client=client_for(provider))
    who = persona(server)["id"]
    code, verifier = _code(wallet, who)
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": wallet.client.client_id}
    assert_json_error(wallet.token_request(dict(form, code_verifier=pkce_pair()[0])), 400, "invalid_grant")
    # A failed attempt may or may not burn the code; a fresh one shows the replay rule cleanly.
    code, verifier = _code(wallet, who)
    form["code"] = code
    assert_json_error(wallet.token_request(dict(form, redirect_uri="eu.trustbed.test-wallet:/other", code_verifier=verifier)),
                      400, "invalid_grant")
    code, verifier = _code(wallet, who)
    form["code"] = code
    r = wallet.token_request(dict(form, code_verifier=verifier))
    assert r.status_code == 200, describe(r)
    assert_json_error(wallet.token_request(dict(form, code_verifier=verifier)), 400, "invalid_grant")


def test_request_uri_is_single_use_and_unknown_ones_are_refused(env):
    server, provider = env
    issuer = server.id("pid-provider")
    wallet = Wallet(issuer, use_dpop=True, client=client_for(provider))
    _, challenge = pkce_pair()
    r = wallet.par(redirect_uri=REDIRECT, code_challenge=challenge, state="s", authorization_details=details(SD))
    request_uri = r.json()["request_uri"]
    who = persona(server)["id"]
    r = requests.get(wallet.authorize_url(request_uri, login_hint=who), allow_redirects=False, timeout=10)
    assert r.status_code in (302, 303), describe(r)
    for uri in (request_uri, "urn:ietf:params:oauth:request_uri:nope"):
        r = requests.get(wallet.authorize_url(uri, login_hint=who), allow_redirects=False, timeout=10)
        # The redirect URI cannot be trusted without a valid request: no redirect (RFC 6749 §4.1.2.1).
        assert r.status_code == 400 and "code=" not in r.headers.get("Location", ""), describe(r)
    # A request_uri belongs to the client that pushed it (RFC 9126 §4).
    r = wallet.par(redirect_uri=REDIRECT, code_challenge=challenge, state="s", authorization_details=details(SD))
    r = requests.get(issuer + "/authorize", params={"client_id": "another-client", "request_uri": r.json()["request_uri"],
                                                    "login_hint": who}, allow_redirects=False, timeout=10)
    assert r.status_code == 400 and "code=" not in r.headers.get("Location", ""), describe(r)


def test_dpop_bound_token_refuses_bearer_and_other_keys(env):
    server, provider = env
    issuer = server.id("pid-provider")
    wallet = Wallet(issuer, use_dpop=True, client=client_for(provider))
    token, _ = wallet.authorization_code_flow(persona=persona(server)["id"], redirect_uri=REDIRECT, scope=SD)
    at = token["access_token"]
    wallet.credential(at, configuration_id=SD)  # a valid request first: it learns the RS DPoP nonce, if any
    url = issuer + "/credential"
    body = json.dumps({"credential_configuration_id": SD, "proofs": {"jwt": ["x.y.z"]}})
    ctype = {"Content-Type": "application/json"}
    # RFC 9449 §7.1: a DPoP-bound token presented as Bearer is refused.
    r = requests.post(url, data=body, headers=dict(ctype, Authorization=f"Bearer {at}"), timeout=10)
    assert r.status_code == 401 and r.headers.get("WWW-Authenticate", "").split()[0] in ("DPoP", "Bearer"), describe(r)
    # A proof from another key, a wrong ath, a wrong htu, a wrong htm.
    nonce = wallet.rs_nonce
    for proof in (dpop_proof(new_key(), "POST", url, access_token=at, nonce=nonce),
                  dpop_proof(wallet.dpop_key, "POST", url, access_token=at + "x", nonce=nonce),
                  dpop_proof(wallet.dpop_key, "POST", issuer + "/other", access_token=at, nonce=nonce),
                  dpop_proof(wallet.dpop_key, "GET", url, access_token=at, nonce=nonce),
                  dpop_proof(wallet.dpop_key, "POST", url, access_token=at, nonce=nonce, typ="jwt")):
        r = requests.post(url, data=body, headers=dict(ctype, Authorization=f"DPoP {at}", DPoP=proof), timeout=10)
        assert r.status_code in (400, 401), describe(r)
        err = r.json().get("error")
        assert err in ("invalid_dpop_proof", "invalid_token"), describe(r)
        if r.status_code == 401:
            assert r.headers.get("WWW-Authenticate", "").startswith("DPoP"), describe(r)


def test_unknown_parameters_ignored_at_par_authorize_and_token(env):
    """RFC 6749 §3.1 and §3.2: unrecognized request parameters are ignored."""
    server, provider = env
    issuer = server.id("pid-provider")
    wallet = Wallet(issuer, use_dpop=True, client=client_for(provider))
    verifier, challenge = pkce_pair()
    r = wallet.par(redirect_uri=REDIRECT, code_challenge=challenge, state="u", authorization_details=details(SD),
                   extra={"foo": "bar", "prompt_extra": "x"})
    assert r.status_code == 201, describe(r)
    r = requests.get(wallet.authorize_url(r.json()["request_uri"], login_hint=persona(server)["id"], foo="bar"),
                     allow_redirects=False, timeout=10)
    assert r.status_code in (302, 303), describe(r)
    code = parse_qs(urlsplit(r.headers["Location"]).query)["code"][0]
    token = wallet.token({"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": verifier,
                          "client_id": wallet.client.client_id, "foo": "bar"})
    assert token["access_token"]


def test_strict_issuer_requires_dpop_and_attestation(session_tmp):
    """require_dpop and require_client_attestation: without a DPoP proof or without the
    attestation headers the token endpoint refuses, even for a pre-authorized code; with both the
    pre-authorized flow works for an attested wallet."""
    provider = WalletProvider(entity_id="")
    server = start_pid_server(session_tmp / f"pid-strict-{time.monotonic_ns()}", label="pid-strict", wallet_provider=provider,
                              pid_overrides={"require_dpop": True, "require_client_attestation": True})
    try:
        issuer = server.id("pid-provider")
        client = client_for(provider)

        def pre_auth_form():
            answer = admin_offer(issuer, server.admin_token, persona(server)["id"], [SD])
            return {"grant_type": "urn:ietf:params:oauth:grant-type:pre-authorized_code", "client_id": client.client_id,
                    "pre-authorized_code": answer["credential_offer"]["grants"][
                        "urn:ietf:params:oauth:grant-type:pre-authorized_code"]["pre-authorized_code"]}

        no_dpop = Wallet(issuer, use_dpop=False, client=client)
        assert_json_error(no_dpop.token_request(pre_auth_form()), 400, ("invalid_dpop_proof", "invalid_request"))
        anonymous = Wallet(issuer, use_dpop=True)
        assert_json_error(anonymous.token_request(pre_auth_form()), 401, "invalid_client")
        wallet = Wallet(issuer, use_dpop=True, client=client)
        token = wallet.token(pre_auth_form())
        body, keys = wallet.credential(token["access_token"], configuration_id=SD)
        verify_sd_jwt_vc(body["credentials"][0]["credential"], issuer=issuer, iaca=iaca_certificate(issuer), holder_key=keys[0], vct=SD)
    finally:
        server.stop()
