"""The CLI wallet as a whole test wallet (issue 20 item 9): `trustbed wallet register`, `attest`
and `receive --client-attestation --key-attestation` against the demo Wallet Provider and
`pid-provider-haip` (client attestation, DPoP and key attestations required). The artifacts are
checked independently: the wallet attestation with `cryptography` against its x5c and the
provider's CA, the PID with the `sd-jwt` reference implementation and the proof key the wallet
file kept."""
from __future__ import annotations

import json
import os
import stat
import time

import pytest
import requests
from cryptography import x509
from joserfc.jwk import ECKey

from harness import run_cli
from walletlib import (admin_offer, decode_jwt_unverified, iaca_certificate, persona, start_pid_server, verify_es256,
                       verify_sd_jwt_vc)

SD = "urn:eudi:pid:1"
TIMEOUT = 120


@pytest.fixture(scope="module")
def server(session_tmp):
    s = start_pid_server(session_tmp / f"cli-wallet-provider-{time.monotonic_ns()}", label="cli-wallet-provider")
    yield s
    s.stop()


def cli(*args: str, expect_ok: bool = True):
    p = run_cli("wallet", *args, timeout=TIMEOUT)
    if expect_ok:
        assert p.returncode == 0, f"`trustbed wallet {' '.join(args)}` exited {p.returncode}\nstderr: {p.stderr[-4000:]}\nstdout: {p.stdout[-2000:]}"
    return p


def check_attestation(server, jwt: str) -> dict:
    header, claims = decode_jwt_unverified(jwt)
    assert header["typ"] == "oauth-client-attestation+jwt", header
    import base64
    leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
    verify_es256(jwt, leaf.public_key())
    ca = x509.load_pem_x509_certificate(requests.get(server.url("wallet-provider") + "/ca.pem", timeout=10).content)
    leaf.verify_directly_issued_by(ca)
    assert claims["iss"] == server.id("wallet-provider"), claims
    return claims


def test_register_attest_and_receive_a_pid_from_the_haip_issuer(server, tmp_path):
    wallet = tmp_path / "sub" / "wallet.json"
    wp = server.id("wallet-provider")
    p = cli("register", "--provider", wp, "--wallet", str(wallet))
    out = json.loads(p.stdout)
    assert out["state"] == "installed" and out["hardware_key_tag"], out
    assert stat.S_IMODE(os.stat(wallet).st_mode) == 0o600
    doc = json.loads(wallet.read_text())
    assert doc["type"] == "trustbed-test-wallet" and "TEST wallet" in doc["about"], doc.keys()
    assert doc["provider"] == wp and doc["hardware_key_tag"] == out["hardware_key_tag"]
    hardware = doc["hardware_key"]
    assert hardware["kty"] == "EC" and hardware["crv"] == "P-256" and hardware["d"], hardware.keys()
    ECKey.import_key(hardware)  # a valid private JWK
    # A second register without --force would replace the instance: refused.
    p = cli("register", "--provider", wp, "--wallet", str(wallet), expect_ok=False)
    assert p.returncode == 1 and "--force" in p.stderr

    # The legacy wire format (jwt-bearer at /token), then the newer one (every format kept).
    p = cli("attest", "--legacy", "--wallet", str(wallet))
    claims = check_attestation(server, p.stdout.strip())
    p = cli("attest", "--wallet", str(wallet), "--verbose")
    claims = check_attestation(server, p.stdout.strip())
    doc = json.loads(wallet.read_text())
    assert doc["state"] == "operational" and doc["client_id"] == claims["sub"]
    assert "jwt" in doc["attestations"] and "dc+sd-jwt" in doc["attestations"], doc["attestations"].keys()
    assert claims["cnf"]["jwk"] == json.loads(json.dumps(claims["cnf"]["jwk"]))
    # --verbose: each request and response on stderr, never a private key.
    assert "> POST " + wp + "/wallet-attestations" in p.stderr and "< 200" in p.stderr, p.stderr[-2000:]
    assert '"d"' not in p.stderr and doc["wallet_key"]["d"] not in p.stderr and hardware["d"] not in p.stderr

    issuer = server.id("pid-provider-haip")
    answer = admin_offer(issuer, server.admin_token, persona(server)["id"], [SD])
    p = cli("receive", answer["offer_url"], "--wallet", str(wallet), "--dpop", "--client-attestation", "--key-attestation",
            "--json", "--verbose")
    result = json.loads(p.stdout)
    assert result["token_type"].lower() == "dpop"
    assert "OAuth-Client-Attestation-PoP: " in p.stderr and "key-attestations" in p.stderr, p.stderr[-3000:]
    assert '"d"' not in p.stderr and hardware["d"] not in p.stderr
    [credential] = result["credentials"]
    assert credential["verified"] and credential["credential_configuration_id"] == SD
    # The wallet file keeps the PID with its proof key: verify it (and a presentation) with sd-jwt.
    stored = json.loads(wallet.read_text())["credentials"][-1]
    assert stored["credential"] == credential["credential"]
    holder = ECKey.import_key(stored["holder_key"])
    verify_sd_jwt_vc(stored["credential"], issuer=issuer, iaca=iaca_certificate(issuer), holder_key=holder, vct=SD)

    # register --force replaces the instance and keeps the credentials received so far.
    before = json.loads(wallet.read_text())
    p = cli("register", "--provider", wp, "--wallet", str(wallet), "--force")
    replaced = json.loads(wallet.read_text())
    assert replaced["hardware_key_tag"] == json.loads(p.stdout)["hardware_key_tag"] != before["hardware_key_tag"]
    assert replaced["state"] == "installed" and not replaced.get("attestations"), replaced.keys()
    assert replaced["credentials"] == before["credentials"] and before["credentials"], replaced.keys()


def test_receive_without_attestations_is_refused_by_the_haip_issuer(server, tmp_path):
    issuer = server.id("pid-provider-haip")
    answer = admin_offer(issuer, server.admin_token, persona(server)["id"], [SD])
    p = cli("receive", answer["offer_url"], "--dpop", expect_ok=False)
    assert p.returncode == 1 and "invalid_client" in p.stderr, p.stderr[-2000:]


def test_errors_exit_1_with_the_servers_json(server, tmp_path):
    wallet = tmp_path / "w.json"
    # attest / attested receive before register: a usage error.
    p = cli("attest", "--wallet", str(wallet), expect_ok=False)
    assert p.returncode == 1 and "wallet register" in p.stderr
    p = cli("receive", "{}", "--wallet", str(wallet), "--client-attestation", expect_ok=False)
    assert p.returncode == 1 and "wallet attest" in p.stderr
    # Not a wallet provider: the server's JSON error is printed.
    p = cli("register", "--provider", server.id("pid-provider"), "--wallet", str(wallet), expect_ok=False)
    assert p.returncode == 1 and "HTTP 405" in p.stderr and "\"error\":\"invalid_request\"" in p.stderr, p.stderr
    assert not wallet.exists()
    # A failing device: the provider's integrity_check_error.
    p = cli("register", "--provider", server.id("wallet-provider"), "--wallet", str(wallet), "--integrity", "fail",
            expect_ok=False)
    assert p.returncode == 1 and "integrity_check_error" in p.stderr, p.stderr
    p = cli("register", "--provider", server.id("wallet-provider"), "--wallet", str(wallet), "--format", "android",
            expect_ok=False)
    # The CLI's test roots are not this provider's (Google's are): refused, the JSON printed.
    assert p.returncode == 1 and "HTTP 403" in p.stderr and "attestation roots" in p.stderr, p.stderr
    # Not a test wallet file.
    other = tmp_path / "other.json"
    other.write_text('{"a": 1}')
    p = cli("attest", "--wallet", str(other), expect_ok=False)
    assert p.returncode == 1 and "not a Trustbed test wallet" in p.stderr


def test_default_wallet_path_follows_xdg_data_home(server, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    cli("register", "--provider", server.id("wallet-provider"))
    assert (tmp_path / "xdg" / "trustbed" / "wallet.json").exists()


def test_register_checks_the_providers_trust_chain(server, tmp_path):
    wallet = tmp_path / "w.json"
    wp = server.id("wallet-provider")
    # Under intermediate → ta: a chain to ta is found.
    p = cli("register", "--provider", wp, "--trust-anchor", server.id("ta"), "--wallet", str(wallet))
    assert "trust chain:" in p.stderr and server.id("ta") in p.stderr, p.stderr
    # Not a Trust Anchor of it: refused before anything is registered.
    other = tmp_path / "o.json"
    p = cli("register", "--provider", wp, "--trust-anchor", server.id("pid-provider"), "--wallet", str(other), expect_ok=False)
    assert p.returncode == 1 and "no valid trust chain" in p.stderr, p.stderr
    assert not other.exists()
