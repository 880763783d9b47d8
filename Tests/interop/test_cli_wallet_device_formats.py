"""`trustbed wallet register --format android | apple` (issue 20, item 9): the CLI wallet makes
an Android Key Attestation chain or an App Attest object itself, under TEST roots it keeps beside
the wallet file (`trustbed wallet test-roots` prints them). A Wallet Provider configured with
those roots (`android_roots`, `apple_roots`, `apple_app_ids`) registers the instance in that
format, and the wallet then gets its wallet attestation; the same provider without the roots
refuses the registration. The chains are also checked here with `cryptography`: the leaf under
the CLI's root, the attested key the wallet file's hardware key.
"""
from __future__ import annotations

import base64
import hashlib
import json
import shutil
import time

import cbor2
import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from joserfc.jwk import ECKey

from harness import TrustbedServer, run_cli
from test_cli_wallet_provider import check_attestation

TIMEOUT = 120


def cli(*args: str, expect_ok: bool = True):
    p = run_cli("wallet", *args, timeout=TIMEOUT)
    if expect_ok:
        assert p.returncode == 0, f"`trustbed wallet {' '.join(args)}` exited {p.returncode}\nstderr: {p.stderr[-3000:]}"
    return p


@pytest.fixture(scope="module")
def wallets(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-device-wallets")
    roots = json.loads(cli("test-roots", "--wallet", str(folder / "android.json")).stdout)
    return folder, roots


@pytest.fixture(scope="module")
def server(wallets, trustbed_bin, session_tmp):
    folder, roots = wallets
    s = TrustbedServer(session_tmp / f"cli-device-formats-{time.monotonic_ns()}", label="cli-device-formats")
    shutil.copy(roots["android_root"], s.entities / "cli-android-root.pem")
    shutil.copy(roots["apple_root"], s.entities / "cli-apple-root.pem")
    path = s.entities / "wallet-provider.json"
    doc = json.loads(path.read_text())
    doc["services"]["wallet_provider"].update({"android_roots": ["cli-android-root.pem"], "apple_roots": ["cli-apple-root.pem"],
                                               "apple_app_ids": [roots["apple_app_id"]]})
    path.write_text(json.dumps(doc, indent=2))
    s.start()
    yield s
    s.stop()


def admin_instance(server, tag: str) -> dict:
    r = requests.get(server.url("wallet-provider", "/admin/instances"), headers={"Authorization": "Bearer " + server.admin_token},
                     timeout=10)
    return {i["id"]: i for i in r.json()["instances"]}[tag]


def test_test_roots_are_kept_private_and_stable(wallets):
    folder, roots = wallets
    again = json.loads(cli("test-roots", "--wallet", str(folder / "other.json")).stdout)
    assert again == roots, "one folder, one pair of roots"
    for name in ("android-root", "apple-root"):
        root = x509.load_pem_x509_certificate((folder / "test-roots" / f"{name}.pem").read_bytes())
        assert root.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
        assert oct((folder / "test-roots" / f"{name}.key.pem").stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("fmt", ["android", "apple"])
def test_register_and_attest_in_each_format(wallets, server, fmt):
    folder, roots = wallets
    wallet = folder / f"{fmt}.json"
    wp = server.id("wallet-provider")
    out = json.loads(cli("register", "--format", fmt, "--provider", wp, "--wallet", str(wallet), "--force").stdout)
    doc = json.loads(wallet.read_text())
    tag = out["hardware_key_tag"]
    assert doc["format"] == fmt and doc["hardware_key_tag"] == tag
    hardware = ECKey.import_key(doc["hardware_key"])
    assert admin_instance(server, tag)["format"] == fmt
    if fmt == "apple":
        # The tag is the App Attest key id: SHA-256 of the uncompressed public point, base64.
        point = b"\x04" + base64.urlsafe_b64decode(doc["hardware_key"]["x"] + "==") + \
            base64.urlsafe_b64decode(doc["hardware_key"]["y"] + "==")
        assert base64.b64decode(tag) == hashlib.sha256(point).digest()

    p = cli("attest", "--wallet", str(wallet))
    claims = check_attestation(server, p.stdout.strip())
    assert claims["cnf"]["jwk"]["x"] == json.loads(wallet.read_text())["wallet_key"]["x"]
    assert admin_instance(server, tag)["state"] == "operational"
    assert hardware.thumbprint()


def test_the_shapes_checked_independently(wallets, server, tmp_path):
    """Capture what the CLI sends (--verbose) and check the chain and the object with cryptography and cbor2."""
    folder, roots = wallets
    wp = server.id("wallet-provider")
    for fmt in ("android", "apple"):
        wallet = folder / f"shape-{fmt}.json"
        p = cli("register", "--format", fmt, "--provider", wp, "--wallet", str(wallet), "--verbose")
        body = next(json.loads(line) for line in p.stderr.splitlines() if line.startswith("{") and "key_attestation" in line)
        doc = json.loads(wallet.read_text())
        hardware = ECKey.import_key(doc["hardware_key"]).as_pem(private=False)
        if fmt == "android":
            root = x509.load_pem_x509_certificate(open(roots["android_root"], "rb").read())
            chain = [x509.load_der_x509_certificate(base64.b64decode(c)) for c in body["key_attestation"]]
            leaf = chain[0]
            leaf.verify_directly_issued_by(root)
            leaf.extensions.get_extension_for_oid(x509.ObjectIdentifier("1.3.6.1.4.1.11129.2.1.17"))
        else:
            root = x509.load_pem_x509_certificate(open(roots["apple_root"], "rb").read())
            raw = body["key_attestation"]
            obj = cbor2.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
            assert obj["fmt"] == "apple-appattest" and set(obj["attStmt"]) == {"x5c", "receipt"}
            leaf = x509.load_der_x509_certificate(obj["attStmt"]["x5c"][0])
            leaf.verify_directly_issued_by(root)
            auth = obj["authData"]
            assert auth[:32] == hashlib.sha256(roots["apple_app_id"].encode()).digest()
            assert auth[33:37] == b"\0\0\0\0" and auth[37:53] == b"appattestdevelop"
            assert base64.b64decode(body["hardware_key_tag"]) == auth[55:87]
        assert leaf.public_key().public_bytes(serialization.Encoding.PEM,
                                              serialization.PublicFormat.SubjectPublicKeyInfo) == hardware


def test_a_provider_without_the_roots_refuses(wallets, session_tmp, trustbed_bin):
    folder, _ = wallets
    s = TrustbedServer(session_tmp / f"cli-device-no-roots-{time.monotonic_ns()}", label="cli-device-no-roots").start()
    try:
        p = cli("register", "--format", "android", "--provider", s.id("wallet-provider"), "--wallet",
                str(folder / "refused.json"), expect_ok=False)
        assert p.returncode == 1 and "403" in p.stderr and "invalid_request" in p.stderr, p.stderr[-2000:]
    finally:
        s.stop()


# -- an App Attest assertion as the hardware signature of an iOS instance (Apple's "Verify the assertion")

def app_attest_assertion(hardware_jwk: dict, client_data: bytes, counter: int, app_id: str, *, signer=None) -> str:
    """base64url CBOR {signature, authenticatorData}, built here with cryptography and cbor2:
    authenticatorData = SHA-256(app id) ‖ flags ‖ counter (big-endian); signature = ECDSA-SHA256
    (DER) by the attested key over SHA-256(authenticatorData ‖ SHA-256(clientData))."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from walletlib import b64url
    key = signer or ECKey.import_key(hardware_jwk).private_key
    auth = hashlib.sha256(app_id.encode()).digest() + b"\x01" + counter.to_bytes(4, "big")
    nonce = hashlib.sha256(auth + hashlib.sha256(client_data).digest()).digest()
    signature = key.sign(nonce, ec.ECDSA(hashes.SHA256()))
    return b64url(cbor2.dumps({"signature": signature, "authenticatorData": auth}))


def attestation_request_with_assertion(server, doc: dict, counter: int, app_id: str, **kw) -> str:
    from walletlib import new_key, public_jwk, sign_jwt
    wp = server.id("wallet-provider")
    n = requests.get(wp + "/nonce", timeout=10).json()["nonce"]
    wallet_key = new_key()
    thumbprint = wallet_key.thumbprint()
    client_data = json.dumps({"challenge": n, "jwk_thumbprint": thumbprint}, separators=(",", ":")).encode()
    claims = {"iss": wp + "/instance/" + thumbprint, "aud": wp, "iat": int(time.time()), "exp": int(time.time()) + 300,
              "challenge": n, "hardware_key_tag": doc["hardware_key_tag"],
              "hardware_signature": app_attest_assertion(doc["hardware_key"], client_data, counter, app_id, **kw),
              "cnf": {"jwk": public_jwk(wallet_key)}, "integrity_assertion": "app-attest-used-as-hardware-signature"}
    return sign_jwt({"alg": "ES256", "typ": "war+jwt", "kid": thumbprint}, claims, wallet_key)


def test_app_attest_assertion_as_the_hardware_signature(wallets, server):
    from cryptography.hazmat.primitives.asymmetric import ec
    folder, roots = wallets
    wallet = folder / "assertions.json"
    cli("register", "--format", "apple", "--provider", server.id("wallet-provider"), "--wallet", str(wallet))
    doc = json.loads(wallet.read_text())
    app_id = roots["apple_app_id"]

    def token(assertion: str) -> requests.Response:
        return requests.post(server.url("wallet-provider", "/token"), timeout=30, data={
            "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion})

    def refused(r: requests.Response, why: str):
        assert r.status_code == 403 and r.json()["error"] == "invalid_request", r.text
        assert why in r.json()["error_description"], r.text

    r = token(attestation_request_with_assertion(server, doc, 1, app_id))
    assert r.status_code == 200, r.text
    check_attestation(server, r.text)
    # The counter must rise: the same one again, or a lower one, is refused; a higher one works.
    refused(token(attestation_request_with_assertion(server, doc, 1, app_id)), "counter")
    assert token(attestation_request_with_assertion(server, doc, 7, app_id)).status_code == 200
    refused(token(attestation_request_with_assertion(server, doc, 5, app_id)), "counter")
    # Another app id, another key: refused, and the counter is not spent by a refusal.
    refused(token(attestation_request_with_assertion(server, doc, 8, "TEAMID0000.other.app")), "rpIdHash")
    refused(token(attestation_request_with_assertion(server, doc, 8, app_id, signer=ec.generate_private_key(ec.SECP256R1()))),
            "signature")
    assert token(attestation_request_with_assertion(server, doc, 8, app_id)).status_code == 200
    # A plain ES256 hardware signature still works for an iOS instance (the CLI sends one).
    assert cli("attest", "--wallet", str(wallet)).returncode == 0


@pytest.mark.parametrize("flow,device", [("attest-legacy", "android"), ("attest", "apple")])
def test_bench_attest_flows_with_android_and_apple_instances(wallets, server, flow, device):
    """`wallet bench --device-format android | apple` (the benchmark's floor figure): the warm-up
    instances register under the test roots beside --wallet, and each iteration is nonce → wallet
    attestation, with no development key attestation fetched."""
    folder, _ = wallets
    r = requests.get(server.url("wallet-provider", "/admin/instances"), headers={"Authorization": "Bearer " + server.admin_token},
                     timeout=10)
    before = {i["id"] for i in r.json()["instances"]}
    p = run_cli("wallet", "bench", "--flow", flow, "--provider", server.id("wallet-provider"), "--device-format", device,
                "--wallet", str(folder / "android.json"), "--instances", "2", "--concurrency", "2", "--duration", "1", "--json",
                timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr[-2000:]
    report = json.loads(p.stdout)
    assert report["errors"] == {} and report["flows"] >= 4 and report["device_format"] == device, report
    assert sorted(report["steps"]) == ["nonce", "wallet_attestation"], report["steps"]
    r = requests.get(server.url("wallet-provider", "/admin/instances"), headers={"Authorization": "Bearer " + server.admin_token},
                     timeout=10)
    new = [i for i in r.json()["instances"] if i["id"] not in before]
    assert len(new) == 4 and {i["format"] for i in new} == {device} and {i["state"] for i in new} == {"operational"}, new
