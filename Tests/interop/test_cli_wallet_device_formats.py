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
