"""Apple's identity envelope (issue 22 items 5 and 6): `trustbed wallet apple-envelope` seals an
mdoc PID from the CLI wallet's file to a merchant certificate; `trustbed verify apple-envelope`
opens and verifies it offline. Both directions are checked against an independent
implementation (applelib.py: pyhpke + cbor2 + pycose), and tampered envelopes are refused
with the check that failed."""
from __future__ import annotations

import base64
import json
import time

import cbor2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from applelib import PID, make_envelope, open_envelope, recipient_files
from fedlib import b64url_decode
from harness import run_cli
from walletlib import admin_offer, iaca_certificate, persona, start_pid_server

TIMEOUT = 120
MERCHANT = "merchant.org.trustbed.test"
TEAM = "TEAM123456"
NONCE = base64.b64encode(b"apple-request-nonce-0001").decode()


@pytest.fixture(scope="module")
def server(session_tmp):
    s = start_pid_server(session_tmp / f"apple-envelope-{time.monotonic_ns()}", label="apple-envelope")
    yield s
    s.stop()


def cli(*args: str, expect_ok: bool = True, cwd=None):
    p = run_cli(*args, timeout=TIMEOUT, cwd=cwd)
    if expect_ok:
        assert p.returncode == 0, f"`trustbed {' '.join(args)}` exited {p.returncode}\nstderr: {p.stderr[-4000:]}\nstdout: {p.stdout[-3000:]}"
    return p


@pytest.fixture(scope="module")
def wallet(server, tmp_path_factory):
    """A CLI wallet file holding an mdoc PID from the demo HAIP PID Provider (register, attest,
    receive --client-attestation stores the credential with its device key)."""
    path = tmp_path_factory.mktemp("apple-wallet") / "wallet.json"
    cli("wallet", "register", "--provider", server.id("wallet-provider"), "--wallet", str(path))
    cli("wallet", "attest", "--wallet", str(path))
    issuer = server.id("pid-provider-haip")
    offer = admin_offer(issuer, server.admin_token, persona(server)["id"], [PID])
    cli("wallet", "receive", offer["offer_url"], "--wallet", str(path), "--dpop", "--client-attestation",
        "--key-attestation")
    stored = [c for c in json.loads(path.read_text())["credentials"] if c["format"] == "mso_mdoc"]
    assert stored, "the wallet file keeps the mdoc PID"
    return path


@pytest.fixture(scope="module")
def iaca(server, tmp_path_factory):
    cert = iaca_certificate(server.id("pid-provider-haip"))
    path = tmp_path_factory.mktemp("apple-iaca") / "iaca.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert, path


def verify_cli(envelope_path, key_path, iaca_path, *, nonce: str = NONCE, merchant: str = MERCHANT, expect_ok: bool = True):
    p = cli("verify", "apple-envelope", "--nonce", nonce, "--merchant-id", merchant, "--team-id", TEAM,
            "--key", str(key_path), "--iaca", str(iaca_path), str(envelope_path), expect_ok=expect_ok)
    if not expect_ok:
        assert p.returncode == 1, f"exit {p.returncode}: {p.stderr[-2000:]}"
    return json.loads(p.stdout)


def test_cli_envelope_opens_with_the_cli_and_with_pyhpke(wallet, iaca, tmp_path):
    key, key_path, cert_path = recipient_files(tmp_path)
    out = tmp_path / "envelope.cbor"
    cli("wallet", "apple-envelope", "--wallet", str(wallet), "--nonce", NONCE, "--merchant-id", MERCHANT, "--team-id", TEAM,
        "--recipient", str(cert_path), "--elements", "family_name", "birth_date", "--out", str(out))
    report = verify_cli(out, key_path, iaca[1])
    assert report["state"] == "verified", report
    names = [c["name"] for c in report["checks"]]
    assert names[:7] == ["envelope", "algorithm", "mode", "recipient_key", "info_hash", "hpke_open", "identity"], names
    assert "device_signature" in names and all(c["ok"] for c in report["checks"])
    assert "uncompressed point" in next(c["detail"] for c in report["checks"] if c["name"] == "recipient_key")
    disclosed = report["claims"][PID][PID]
    assert set(disclosed) == {"family_name", "birth_date"}, disclosed

    # Independently: pyhpke opens it, pycose checks the MSO and the device signature, cbor2 the digests.
    elements = open_envelope(out.read_bytes(), recipient_key=key, nonce=base64.b64decode(NONCE), merchant_id=MERCHANT,
                             team_id=TEAM, iaca=iaca[0])
    assert set(elements[PID]) == {"family_name", "birth_date"}
    assert elements[PID]["family_name"] == disclosed["family_name"]

    # Printed as base64 without --out; the verifier reads that text too, and the default IACA
    # roots come from Keys/*/issuer/iaca.pem.
    p = cli("wallet", "apple-envelope", "--wallet", str(wallet), "--nonce", NONCE, "--merchant-id", MERCHANT, "--team-id", TEAM,
            "--recipient", str(cert_path))
    text = tmp_path / "envelope.b64"
    text.write_text(p.stdout)
    assert cbor2.loads(base64.b64decode(p.stdout))["algorithm"] == "APPLE-HPKE-v1"
    assert verify_cli(text, key_path, iaca[1])["state"] == "verified"


def test_default_iaca_roots_come_from_the_keys_directory(server, wallet, tmp_path):
    key, key_path, cert_path = recipient_files(tmp_path)
    out = tmp_path / "envelope.cbor"
    cli("wallet", "apple-envelope", "--wallet", str(wallet), "--nonce", NONCE, "--merchant-id", MERCHANT, "--team-id", TEAM,
        "--recipient", str(cert_path), "--out", str(out))
    p = cli("verify", "apple-envelope", "--nonce", NONCE, "--merchant-id", MERCHANT, "--team-id", TEAM, "--key", str(key_path),
            str(out), cwd=server.dir)
    assert json.loads(p.stdout)["state"] == "verified"
    # Without a Keys directory and without --iaca: a usage error naming the flag.
    p = cli("verify", "apple-envelope", "--nonce", NONCE, "--merchant-id", MERCHANT, "--team-id", TEAM, "--key", str(key_path),
            str(out), cwd=tmp_path, expect_ok=False)
    assert p.returncode != 0 and "--iaca" in p.stderr, p.stderr


def test_python_envelope_verified_by_the_cli(wallet, iaca, tmp_path):
    key, key_path, _ = recipient_files(tmp_path)
    stored = next(c for c in json.loads(wallet.read_text())["credentials"] if c["format"] == "mso_mdoc")
    issuer_signed = cbor2.loads(b64url_decode(stored["credential"]))
    envelope = make_envelope(issuer_signed, stored["holder_key"], {"given_name", "family_name"}, recipient=key.public_key(),
                             nonce=base64.b64decode(NONCE), merchant_id=MERCHANT, team_id=TEAM)
    path = tmp_path / "python.cbor"
    path.write_bytes(envelope)
    report = verify_cli(path, key_path, iaca[1])
    assert report["state"] == "verified", report
    assert set(report["claims"][PID][PID]) == {"given_name", "family_name"}
    # The same envelope for another request (nonce, merchant) is refused at infoHash.
    other = verify_cli(path, key_path, iaca[1], nonce=base64.b64encode(b"another nonce").decode(), expect_ok=False)
    assert failed(other) == "info_hash"
    other = verify_cli(path, key_path, iaca[1], merchant="merchant.other", expect_ok=False)
    assert failed(other) == "info_hash"


def failed(report: dict) -> str:
    assert report["state"] == "refused" and report["claims"] == {}, report
    return next(c["name"] for c in report["checks"] if not c["ok"])


@pytest.mark.parametrize("spoil, check", [
    ("tag", "hpke_open"),
    ("truncated_pkEm", "hpke_open"),
    ("info_hash", "info_hash"),
    ("algorithm", "algorithm"),
    ("mode", "mode"),
    ("pkRHash", "recipient_key"),
    ("not_cbor", "envelope"),
    ("deep_nesting", "envelope"),
    ("huge_length", "envelope"),
])
def test_tampered_envelopes_are_refused_with_a_reason(wallet, iaca, tmp_path, spoil, check):
    key, key_path, cert_path = recipient_files(tmp_path)
    out = tmp_path / "envelope.cbor"
    cli("wallet", "apple-envelope", "--wallet", str(wallet), "--nonce", NONCE, "--merchant-id", MERCHANT, "--team-id", TEAM,
        "--recipient", str(cert_path), "--out", str(out))
    envelope = cbor2.loads(out.read_bytes())
    if spoil == "tag":
        envelope["data"] = envelope["data"][:-1] + bytes([envelope["data"][-1] ^ 1])
    elif spoil == "truncated_pkEm":
        envelope["params"]["pkEm"] = envelope["params"]["pkEm"][:40]
    elif spoil == "info_hash":
        envelope["params"]["infoHash"] = bytes(32)
    elif spoil == "algorithm":
        envelope["algorithm"] = "APPLE-HPKE-v2"
    elif spoil == "mode":
        envelope["params"]["mode"] = 1
    elif spoil == "pkRHash":
        envelope["params"]["pkRHash"] = bytes(32)
    raw = cbor2.dumps(envelope)
    if spoil == "not_cbor":
        raw = b"\xff\x00 not an envelope"
    elif spoil == "deep_nesting":
        raw = b"\x81" * 100_000 + b"\x00"
    elif spoil == "huge_length":
        raw = b"\xa1\x64data\x5b\xff\xff\xff\xff\xff\xff\xff\xff"
    out.write_bytes(raw)
    report = verify_cli(out, key_path, iaca[1], expect_ok=False)
    assert failed(report) == check, report
    detail = next(c["detail"] for c in report["checks"] if not c["ok"])
    assert detail, report
    if spoil == "tag":
        assert "tag" in detail
    if spoil == "truncated_pkEm":
        assert "pkEm" in detail


def test_maker_refuses_bad_input(wallet, tmp_path):
    _, _, cert_path = recipient_files(tmp_path)
    p = cli("wallet", "apple-envelope", "--wallet", str(wallet), "--nonce", NONCE, "--merchant-id", MERCHANT, "--team-id", TEAM,
            "--recipient", str(cert_path), "--elements", "shoe_size", expect_ok=False)
    assert p.returncode == 1 and "shoe_size" in p.stderr, p.stderr
    p = cli("wallet", "apple-envelope", "--wallet", str(tmp_path / "empty.json"), "--nonce", NONCE, "--merchant-id", MERCHANT,
            "--team-id", TEAM, "--recipient", str(cert_path), expect_ok=False)
    assert p.returncode == 1 and "mso_mdoc" in p.stderr, p.stderr
    p = cli("wallet", "apple-envelope", "--wallet", str(wallet), "--nonce", "!!", "--merchant-id", MERCHANT, "--team-id", TEAM,
            "--recipient", str(cert_path), expect_ok=False)
    assert p.returncode != 0 and "nonce" in p.stderr, p.stderr


# -- through the server: services.verifier.apple of the demo relying party ---------------------

DEMO_MERCHANT = "merchant.org.trustbed.demo"
DEMO_TEAM = "TRUSTBED01"


def post_identity(server, body, **kw):
    import requests
    return requests.post(server.url("relying-party") + "/apple/identity", timeout=30, **kw, **({"json": body} if body is not None else {}))


def test_server_verifies_an_envelope_sealed_to_its_certificate(server, wallet, tmp_path):
    import requests
    r = requests.get(server.url("relying-party") + "/apple/encryption.pem", timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/x-pem-file"), r.text
    cert = x509.load_pem_x509_certificate(r.content)
    # The certificate is the key in Keys/relying-party/verifier/apple/.
    key = serialization.load_pem_private_key((server.keys / "relying-party/verifier/apple/encryption.key.pem").read_bytes(), None)
    assert key.public_key().public_numbers() == cert.public_key().public_numbers()
    cert_path = tmp_path / "rp.pem"
    cert_path.write_bytes(r.content)
    p = cli("wallet", "apple-envelope", "--wallet", str(wallet), "--nonce", NONCE, "--merchant-id", DEMO_MERCHANT,
            "--team-id", DEMO_TEAM, "--recipient", str(cert_path), "--elements", "family_name", "given_name")
    envelope = p.stdout.strip()
    r = post_identity(server, {"envelope": envelope, "nonce": NONCE})
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["state"] == "verified", report
    assert set(report["claims"][PID][PID]) == {"family_name", "given_name"}
    issuer = next(c for c in report["checks"] if c["name"] == "issuer_certificate")
    assert issuer["ok"] and "IACA" in issuer["detail"], issuer

    # Independently (pyhpke + pycose) with the server's key, then an envelope made in Python.
    elements = open_envelope(base64.b64decode(envelope), recipient_key=key, nonce=base64.b64decode(NONCE),
                             merchant_id=DEMO_MERCHANT, team_id=DEMO_TEAM, iaca=iaca_certificate(server.id("pid-provider-haip")))
    assert set(elements[PID]) == {"family_name", "given_name"}
    stored = next(c for c in json.loads(wallet.read_text())["credentials"] if c["format"] == "mso_mdoc")
    python_envelope = make_envelope(cbor2.loads(b64url_decode(stored["credential"])), stored["holder_key"], {"birth_date"},
                                    recipient=cert.public_key(), nonce=b"python nonce", merchant_id=DEMO_MERCHANT, team_id=DEMO_TEAM)
    r = post_identity(server, {"envelope": base64.b64encode(python_envelope).decode(),
                               "nonce": base64.b64encode(b"python nonce").decode()})
    assert r.status_code == 200 and r.json()["state"] == "verified", r.text

    # Refusals: another nonce (infoHash), a flipped tag; each a 200 report naming the check.
    r = post_identity(server, {"envelope": envelope, "nonce": base64.b64encode(b"other").decode()})
    assert r.status_code == 200 and failed(r.json()) == "info_hash", r.text
    spoiled = cbor2.loads(base64.b64decode(envelope))
    spoiled["data"] = spoiled["data"][:-1] + bytes([spoiled["data"][-1] ^ 1])
    r = post_identity(server, {"envelope": base64.b64encode(cbor2.dumps(spoiled)).decode(), "nonce": NONCE})
    assert r.status_code == 200 and failed(r.json()) == "hpke_open", r.text


@pytest.mark.parametrize("body, why", [
    ({"nonce": NONCE}, "envelope"),
    ({"envelope": "oA"}, "nonce"),
    ({"envelope": "!!!", "nonce": NONCE}, "envelope"),
    ({"envelope": "oA", "nonce": "%%"}, "nonce"),
    ([1, 2], "object"),
])
def test_server_refuses_malformed_requests_with_invalid_request(server, body, why):
    r = post_identity(server, body)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "invalid_request" and why in r.json()["error_description"], r.text


def test_server_refuses_a_cbor_bomb_and_a_non_json_body(server):
    r = post_identity(server, {"envelope": base64.b64encode(b"\x81" * 60_000 + b"\x00").decode(), "nonce": NONCE})
    assert r.status_code == 200 and failed(r.json()) == "envelope", r.text
    r = post_identity(server, None, data=b"envelope=1", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code in (400, 415) and "error" in r.json(), r.text
