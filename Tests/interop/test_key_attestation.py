"""Key attestations at the PID Provider (OpenID4VCI 1.0 Appendix D, F.1, F.3; HAIP 1.0), issue 18.

Key attestations are built here with `cryptography` (an X.509 root and leaf of a test wallet
provider, the root's PEM written into the server's entity folder and named in
`attestation_roots`) and joserfc; credentials are checked with `sd-jwt` / pymdoccbor through
walletlib.  Covers the EUDI wallets' shape (`kid: "0"` + `key_attestation`, no `iss`, after a
pre-authorized token request with `client_id`), the `attestation` proof type (one credential
per attested key), `key_attestations_required` in the metadata and at the credential endpoint,
every bad input of the issue (never a 5xx), 50 concurrent uses of one nonce, the strict demo
issuer `pid-provider-haip`, and a root PEM edited under a running server."""
from __future__ import annotations

import hashlib
import hmac
import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from fedlib import describe
from walletlib import (ClientInstance, KeyAttester, Wallet, WalletProvider, admin_credentials, admin_offer, attested_proof,
                       b64url, iaca_certificate, key_proof, new_key, now, persona, public_jwk, sign_jwt, verify_mdoc,
                       verify_sd_jwt_vc)

SD = "urn:eudi:pid:1"
MDOC = "eu.europa.ec.eudi.pid.1"
HIGH = ["iso_18045_high"]
ROOT_FILE = "key-attester-root.pem"


def start(session_tmp, label: str, attester: KeyAttester, pid_overrides: dict | None = None, *,
          wallet_provider: WalletProvider | None = None, haip_roots: bool = False, mdoc_opt_out: bool = False,
          root_file: str = ROOT_FILE):
    from harness import TrustbedServer
    server = TrustbedServer(session_tmp / f"{label}-{time.monotonic_ns()}", label=label)
    (server.entities / root_file).parent.mkdir(parents=True, exist_ok=True)
    (server.entities / root_file).write_text(attester.root_pem())
    path = server.entities / "pid-provider.json"
    doc = json.loads(path.read_text())
    doc["services"]["pid_provider"].update({"attestation_roots": [root_file], **(pid_overrides or {})})
    if mdoc_opt_out:
        doc["services"]["pid_provider"]["credential_configurations"][MDOC]["key_attestations_required"] = False
    path.write_text(json.dumps(doc, indent=2))
    if haip_roots:
        path = server.entities / "pid-provider-haip.json"
        doc = json.loads(path.read_text())
        doc["services"]["pid_provider"]["attestation_roots"] = [ROOT_FILE]
        path.write_text(json.dumps(doc, indent=2))
    if wallet_provider is not None:
        wallet_provider.entity_id = server.id("test-wallet-provider")
        server.write_entities({"test-wallet-provider": wallet_provider.entity_file()})
    return server.start()


@pytest.fixture(scope="module")
def attester():
    return KeyAttester()


@pytest.fixture(scope="module")
def pid(session_tmp, attester):
    server = start(session_tmp, "pid-ka", attester)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def strict(session_tmp, attester):
    """key_attestations_required on the SD-JWT configuration only (the mdoc one opts out)."""
    server = start(session_tmp, "pid-ka-strict", attester, {"key_attestations_required": {"key_storage": ["iso_18045_high"]}},
                   mdoc_opt_out=True)
    yield server
    server.stop()


def session(server, *, client_id: str | None = "eudi-wallet", configs=(SD, MDOC), entity: str = "pid-provider"):
    """A pre-authorized token, asked for with `client_id` as the EUDI wallets do."""
    issuer = server.id(entity)
    answer = admin_offer(issuer, server.admin_token, persona(server)["id"], list(configs))
    wallet = Wallet(issuer)
    offer = wallet.fetch_offer(answer)
    extra = {"client_id": client_id} if client_id else None
    token = wallet.pre_authorized_token(offer, extra=extra)
    return wallet, token["access_token"]


def post(wallet: Wallet, token: str, proofs: dict, configuration: str = SD) -> requests.Response:
    return wallet.credential_request(token, {"credential_configuration_id": configuration, "proofs": proofs})


def refused(r: requests.Response, code: str = "invalid_proof", *, contains: str = "") -> None:
    assert r.status_code == 400, f"expected 400 {code}: {describe(r)}"
    body = r.json()
    assert body.get("error") == code, f"expected {code}: {body}"
    assert isinstance(body.get("error_description"), str) and contains in body["error_description"], body


# ---------------------------------------------------------------------------- metadata


def test_metadata_advertises_attestation_proofs_and_requirements(pid, strict):
    md = Wallet(pid.id("pid-provider")).issuer_metadata
    for cid, entry in md["credential_configurations_supported"].items():
        types = entry["proof_types_supported"]
        assert types["attestation"]["proof_signing_alg_values_supported"] == ["ES256"], (cid, types)
        assert "key_attestations_required" not in types["jwt"], (cid, types)
    md = Wallet(strict.id("pid-provider")).issuer_metadata["credential_configurations_supported"]
    for kind in ("jwt", "attestation"):
        assert md[SD]["proof_types_supported"][kind]["key_attestations_required"] == {"key_storage": HIGH}, md[SD]
        assert "key_attestations_required" not in md[MDOC]["proof_types_supported"][kind], md[MDOC]


# ---------------------------------------------------------------------------- the EUDI shape


@pytest.mark.parametrize("configuration", [SD, MDOC])
def test_eudi_kid_index_proof_without_iss_after_client_id(pid, attester, configuration):
    wallet, token = session(pid, configs=(configuration,))
    key = new_key()
    c_nonce = wallet.nonce()
    ka = attester.attestation([key], nonce=c_nonce, key_storage=HIGH, user_authentication=["iso_18045_moderate"])
    r = post(wallet, token, {"jwt": [attested_proof(key, wallet.issuer, c_nonce, ka)]}, configuration)
    assert r.status_code == 200, describe(r)
    credential = r.json()["credentials"][0]["credential"]
    iaca = iaca_certificate(pid.url("pid-provider"))
    if configuration == SD:
        verify_sd_jwt_vc(credential, issuer=wallet.issuer, iaca=iaca, holder_key=key, vct=SD)
    else:
        verify_mdoc(credential, iaca=iaca, holder_key=key)
    records = admin_credentials(wallet.issuer, pid.admin_token, persona(pid)["id"])
    assert records[-1]["key_attestation"]["issuer"].endswith("Interop Key Attester"), records[-1]
    assert records[-1]["key_attestation"]["key_storage"] == HIGH, records[-1]


def test_deferred_credential_records_its_key_attestation(pid, attester):
    """A deferred persona's credential, delivered later, is recorded with the attesting issuer
    and key storage like one issued at once (the deferred request keeps them)."""
    issuer = pid.id("pid-provider")
    who = persona(pid, deferred=True)
    wallet = Wallet(issuer)
    offer = wallet.fetch_offer(admin_offer(issuer, pid.admin_token, who["id"], [SD]))
    token = wallet.pre_authorized_token(offer, extra={"client_id": "eudi-wallet"})["access_token"]
    key = new_key()
    c_nonce = wallet.nonce()
    ka = attester.attestation([key], nonce=c_nonce, key_storage=HIGH)
    r = post(wallet, token, {"jwt": [attested_proof(key, issuer, c_nonce, ka)]})
    assert r.status_code == 202, describe(r)
    tx = r.json()["transaction_id"]
    deadline = time.monotonic() + 30
    while True:
        r = wallet.credential_request(token, {"transaction_id": tx}, endpoint="deferred_credential_endpoint")
        if r.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert r.status_code == 200, describe(r)
    verify_sd_jwt_vc(r.json()["credentials"][0]["credential"], issuer=issuer, iaca=iaca_certificate(pid.url("pid-provider")),
                     holder_key=key, vct=SD)
    record = admin_credentials(issuer, pid.admin_token, who["id"])[-1]
    assert record["key_attestation"]["issuer"].endswith("Interop Key Attester"), record
    assert record["key_attestation"]["key_storage"] == HIGH, record


def test_proof_without_iss_after_client_id_plain_jwk(pid):
    """F.1: iss is optional; a token asked for with client_id still takes a proof without it."""
    wallet, token = session(pid)
    out, keys = wallet.credential(token, configuration_id=SD, anonymous=True)
    assert len(out["credentials"]) == 1


def test_proof_iss_must_still_be_the_client(pid):
    wallet, token = session(pid)
    c_nonce = wallet.nonce()
    refused(post(wallet, token, {"jwt": [key_proof(new_key(), wallet.issuer, c_nonce, client_id="someone-else")]}),
            contains="iss")
    c_nonce = wallet.nonce()
    r = post(wallet, token, {"jwt": [key_proof(new_key(), wallet.issuer, c_nonce, client_id="eudi-wallet")]})
    assert r.status_code == 200, describe(r)


def test_jwk_with_key_attestation_must_be_attested(pid, attester):
    wallet, token = session(pid)
    key, other = new_key(), new_key()
    c_nonce = wallet.nonce()
    ka = attester.attestation([other], nonce=c_nonce)
    refused(post(wallet, token, {"jwt": [key_proof(key, wallet.issuer, c_nonce, header={"key_attestation": ka})]}),
            contains="attested_keys")
    ka = attester.attestation([other, key], nonce=c_nonce)
    r = post(wallet, token, {"jwt": [key_proof(key, wallet.issuer, c_nonce, header={"key_attestation": ka})]})
    assert r.status_code == 200, describe(r)


def test_bare_kid_still_refused(pid):
    wallet, token = session(pid)
    c_nonce = wallet.nonce()
    key = new_key()
    proof = sign_jwt({"typ": "openid4vci-proof+jwt", "alg": "ES256", "kid": "0"}, {"aud": wallet.issuer, "iat": now(),
                                                                                    "nonce": c_nonce}, key)
    refused(post(wallet, token, {"jwt": [proof]}), contains="kid")


# ---------------------------------------------------------------------------- the attestation proof type


def test_attestation_proof_type_one_credential_per_key(pid, attester):
    for configuration in (SD, MDOC):
        wallet, token = session(pid, configs=(configuration,))
        keys = [new_key() for _ in range(3)]
        ka = attester.attestation(keys, nonce=wallet.nonce(), key_storage=HIGH)
        r = post(wallet, token, {"attestation": [ka]}, configuration)
        assert r.status_code == 200, describe(r)
        credentials = [c["credential"] for c in r.json()["credentials"]]
        assert len(credentials) == 3, r.json()
        iaca = iaca_certificate(pid.url("pid-provider"))
        for credential, key in zip(credentials, keys):
            if configuration == SD:
                verify_sd_jwt_vc(credential, issuer=wallet.issuer, iaca=iaca, holder_key=key, vct=SD)
            else:
                verify_mdoc(credential, iaca=iaca, holder_key=key)


def test_attestation_proof_type_limits(pid, attester):
    wallet, token = session(pid)
    refused(post(wallet, token, {"attestation": [attester.attestation([new_key()])]}), contains="nonce")
    c_nonce = wallet.nonce()
    ka = attester.attestation([new_key()], nonce=c_nonce)
    refused(post(wallet, token, {"attestation": [ka, ka]}), contains="exactly one")
    r = post(wallet, token, {"attestation": [attester.attestation([new_key() for _ in range(11)], nonce=c_nonce)]})
    refused(r, "invalid_credential_request", contains="batch_size")
    r = post(wallet, token, {"attestation": [attester.attestation([new_key()], nonce="not-a-c-nonce")]})
    refused(r, "invalid_nonce")


# ---------------------------------------------------------------------------- key_attestations_required


def test_required_key_attestation(strict, attester):
    wallet, token = session(strict)
    c_nonce = wallet.nonce()
    refused(post(wallet, token, {"jwt": [key_proof(new_key(), wallet.issuer, c_nonce)]}), contains="key_attestations_required")
    key = new_key()
    weak = attester.attestation([key], nonce=c_nonce, key_storage=["iso_18045_basic"])
    refused(post(wallet, token, {"jwt": [attested_proof(key, wallet.issuer, c_nonce, weak)]}), contains="key_storage")
    none = attester.attestation([key], nonce=c_nonce)
    refused(post(wallet, token, {"jwt": [attested_proof(key, wallet.issuer, c_nonce, none)]}), contains="key_storage")
    good = attester.attestation([key], nonce=c_nonce, key_storage=["iso_18045_basic", "iso_18045_high"])
    r = post(wallet, token, {"jwt": [attested_proof(key, wallet.issuer, c_nonce, good)]})
    assert r.status_code == 200, describe(r)
    # The mdoc configuration opted out: a plain proof is fine there.
    wallet, token = session(strict, configs=(MDOC,))
    wallet.credential(token, configuration_id=MDOC)


# ---------------------------------------------------------------------------- bad input


def _unsigned(header: dict, claims: dict) -> str:
    return b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode()) + "."


def _hs256(header: dict, claims: dict) -> str:
    head = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
    return head + "." + b64url(hmac.new(b"secret", head.encode(), hashlib.sha256).digest())


def bad_attestations(attester: KeyAttester, key, c_nonce: str) -> dict[str, str]:
    other = KeyAttester("Foreign Attester")
    claims = {"iat": now(), "exp": now() + 600, "attested_keys": [public_jwk(key)], "nonce": c_nonce}
    private = dict(key.as_dict(private=True))
    return {
        "malformed": "not.a.jwt",
        "wrong typ": attester.attestation([key], nonce=c_nonce, header={"typ": "openid4vci-proof+jwt"}),
        "alg none": _unsigned({"typ": "key-attestation+jwt", "alg": "none", "x5c": attester.x5c()}, claims),
        "alg HS256": _hs256({"typ": "key-attestation+jwt", "alg": "HS256", "x5c": attester.x5c()}, claims),
        "expired": attester.attestation([key], nonce=c_nonce, iat=now() - 7200, lifetime=600),
        "future iat": attester.attestation([key], nonce=c_nonce, iat=now() + 600),
        "no iat": attester.attestation([key], nonce=c_nonce, extra={"iat": None}),
        "foreign root": other.attestation([key], nonce=c_nonce),
        "no x5c": attester.attestation([key], nonce=c_nonce, header={"x5c": None}),
        "chain too long": attester.attestation([key], nonce=c_nonce, header={"x5c": attester.x5c(True) * 3}),
        "empty attested_keys": attester.attestation([], nonce=c_nonce),
        "private member": attester.attestation([key], nonce=c_nonce, extra={"attested_keys": [private]}),
        "bad key_storage": attester.attestation([key], nonce=c_nonce, key_storage="iso_18045_high"),  # type: ignore[arg-type]
    }


def test_bad_key_attestations_in_jwt_proofs(pid, attester):
    wallet, token = session(pid)
    key = new_key()
    c_nonce = wallet.nonce()
    for name, ka in bad_attestations(attester, key, c_nonce).items():
        r = post(wallet, token, {"jwt": [attested_proof(key, wallet.issuer, c_nonce, ka)]})
        assert r.status_code == 400, f"{name}: {describe(r)}"
        assert r.json()["error"] == "invalid_proof", f"{name}: {r.json()}"
        r = post(wallet, token, {"attestation": [ka]})
        assert r.status_code == 400 and r.json()["error"] in ("invalid_proof", "invalid_nonce"), f"{name}: {describe(r)}"
    # kid out of range, negative, not an integer string.
    ka = attester.attestation([key], nonce=c_nonce)
    for kid in ("1", "-1", "00", "x", " 0"):
        proof = sign_jwt({"typ": "openid4vci-proof+jwt", "alg": "ES256", "kid": kid, "key_attestation": ka},
                         {"aud": wallet.issuer, "iat": now(), "nonce": c_nonce}, key)
        refused(post(wallet, token, {"jwt": [proof]}), contains="kid")
    # A key attestation whose nonce is no c_nonce of ours.
    ka = attester.attestation([key], nonce="forged")
    refused(post(wallet, token, {"jwt": [attested_proof(key, wallet.issuer, c_nonce, ka)]}), "invalid_nonce")
    # Still good: the nonce was never consumed by the refusals.
    ka = attester.attestation([key], nonce=c_nonce)
    assert post(wallet, token, {"jwt": [attested_proof(key, wallet.issuer, c_nonce, ka)]}).status_code == 200


def test_nonce_used_twice_and_fifty_concurrent_uses(pid, attester):
    wallet, token = session(pid)
    c_nonce = wallet.nonce()
    key = new_key()
    ka = attester.attestation([key], nonce=c_nonce)
    assert post(wallet, token, {"attestation": [ka]}).status_code == 200
    refused(post(wallet, token, {"attestation": [attester.attestation([new_key()], nonce=c_nonce)]}), "invalid_nonce")

    c_nonce = wallet.nonce()
    bodies = [{"credential_configuration_id": SD, "proofs": {"attestation": [attester.attestation([new_key()], nonce=c_nonce)]}}
              for _ in range(50)]
    # Bearer-free parallel requests need a DPoP proof each: use a Bearer session instead.
    issuer = pid.id("pid-provider")
    answer = admin_offer(issuer, pid.admin_token, persona(pid)["id"], [SD])
    bearer = Wallet(issuer, use_dpop=False)
    access = bearer.pre_authorized_token(bearer.fetch_offer(answer))["access_token"]
    url = bearer.endpoint("credential_endpoint")

    def send(body):
        return requests.post(url, json=body, headers={"Authorization": f"Bearer {access}"}, timeout=30)

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(send, bodies))
    statuses = sorted(r.status_code for r in results)
    assert statuses.count(200) == 1 and statuses.count(400) == 49, statuses
    assert {r.json()["error"] for r in results if r.status_code == 400} == {"invalid_nonce"}


# ---------------------------------------------------------------------------- the strict demo issuer


def test_haip_demo_issuer(session_tmp, attester):
    provider = WalletProvider(entity_id="")
    server = start(session_tmp, "pid-ka-haip", attester, wallet_provider=provider, haip_roots=True)
    try:
        issuer = server.id("pid-provider-haip")
        anonymous = Wallet(issuer)
        md = anonymous.issuer_metadata
        assert md["credential_configurations_supported"][SD]["proof_types_supported"]["jwt"]["key_attestations_required"] == {}
        asm = anonymous.as_metadata
        assert asm["token_endpoint_auth_methods_supported"] == ["attest_jwt_client_auth"], asm
        assert asm["pre-authorized_grant_anonymous_access_supported"] is False, asm
        r = requests.get(issuer + "/.well-known/openid-credential-issuer", headers={"Accept": "application/jwt"}, timeout=10)
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/jwt"), describe(r)
        # No anonymous pre-authorized access: a token request without a client attestation is refused.
        answer = admin_offer(issuer, server.admin_token, persona(server)["id"], [SD])
        r = anonymous.token_request({"grant_type": "urn:ietf:params:oauth:grant-type:pre-authorized_code",
                                     "pre-authorized_code": anonymous.fetch_offer(answer)["grants"][
                                         "urn:ietf:params:oauth:grant-type:pre-authorized_code"]["pre-authorized_code"]})
        assert r.status_code == 401 and r.json()["error"] == "invalid_client", describe(r)
        # Bearer tokens are refused (require_dpop) and an attested client with DPoP gets through.
        instance = new_key()
        client = ClientInstance("eudi-wallet", instance, provider.attestation("eudi-wallet", instance))
        wallet = Wallet(issuer, client=client)
        token = wallet.pre_authorized_token(wallet.fetch_offer(admin_offer(issuer, server.admin_token, persona(server)["id"], [SD])))
        key = new_key()
        c_nonce = wallet.nonce()
        refused(post(wallet, token["access_token"], {"jwt": [key_proof(key, issuer, c_nonce)]}), contains="key attestation")
        ka = attester.attestation([key], nonce=c_nonce, key_storage=["iso_18045_moderate"])
        r = post(wallet, token["access_token"], {"jwt": [attested_proof(key, issuer, c_nonce, ka)]})
        assert r.status_code == 200, describe(r)
    finally:
        server.stop()


# ---------------------------------------------------------------------------- attestation_roots edits


@pytest.mark.parametrize("root_file", [ROOT_FILE, "roots/attesters.pem"])
def test_root_pem_edit_is_picked_up(session_tmp, attester, root_file):
    """In Entities/ itself (inotify) and in a subfolder the watcher does not watch (the poller)."""
    newcomer = KeyAttester("Newcomer Attester")
    server = start(session_tmp, "pid-ka-reload", attester, root_file=root_file)
    try:
        wallet, token = session(server)

        def attempt(who: KeyAttester) -> requests.Response:
            return post(wallet, token, {"attestation": [who.attestation([new_key()], nonce=wallet.nonce())]})

        refused(attempt(newcomer), contains="root")
        (server.entities / root_file).write_text(newcomer.root_pem())
        deadline = time.monotonic() + 10
        while True:
            r = attempt(newcomer)
            if r.status_code == 200:
                break
            assert time.monotonic() < deadline, f"the new root is still not trusted: {describe(r)}"
            time.sleep(0.3)
        refused(attempt(attester), contains="root")
    finally:
        server.stop()
