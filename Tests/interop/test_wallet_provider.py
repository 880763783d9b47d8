"""The mock Wallet Provider (issue 20) against the real server, with a Python wallet written from
the IT-Wallet texts (cryptography + joserfc): the generated `wallet_provider` metadata in the
entity configuration, the nonce endpoint, development key attestations (the server's and one
this test signs itself with the device-maker key, so the `client_data_hash` bytes are checked
independently), registration with every bad input in the order the issue gives, and 50
concurrent registrations with one nonce.
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import json
import stat
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from joserfc import jws
from joserfc.jwk import ECKey

from fedlib import fetch_entity_configuration
from harness import TrustbedServer
from walletlib import b64url, decode_jwt_unverified, new_key, public_jwk, sign_jwt, verify_es256

DEV_TYPE = "dev-key-attestation+jwt"
GRANT = "urn:ietf:params:oauth:client-assertion-type:jwt-client-attestation"


@pytest.fixture(scope="module")
def wp_server(trustbed_bin, session_tmp):
    """A server of its own: registrations change state, which the shared demo must not see."""
    server = TrustbedServer(session_tmp / f"wallet-provider-{time.monotonic_ns()}", label="wallet-provider").start()
    yield server
    server.stop()


def wp(server) -> str:
    return server.url("wallet-provider")


def client_data_hash(nonce: str, tag: str, jwk_thumbprint: str) -> str:
    """base64url(SHA-256(compact JSON {"nonce","hardware_key_tag","jwk_thumbprint"} in that order))."""
    data = json.dumps({"nonce": nonce, "hardware_key_tag": tag, "jwk_thumbprint": jwk_thumbprint}, separators=(",", ":"))
    return b64url(hashlib.sha256(data.encode()).digest())


def nonce(server) -> str:
    r = requests.get(wp(server) + "/nonce", timeout=10)
    assert r.status_code == 200, r.text
    assert r.headers["Cache-Control"] == "no-store"
    assert r.headers["Content-Type"].startswith("application/json")
    return r.json()["nonce"]


def dev_attestation(server, key: ECKey, tag: str, n: str, integrity: str = "pass") -> str:
    r = requests.post(wp(server) + "/dev/key-attestation",
                      json={"jwk": public_jwk(key), "hardware_key_tag": tag, "nonce": n, "integrity": integrity}, timeout=10)
    assert r.status_code == 200, r.text
    assert r.headers["Cache-Control"] == "no-store"
    return r.json()["key_attestation"]


def register(server, body, *, path: str = "/wallet-instance", raw: bytes | None = None,
             content_type: str = "application/json") -> requests.Response:
    data = raw if raw is not None else json.dumps(body).encode()
    return requests.post(wp(server) + path, data=data, headers={"Content-Type": content_type}, timeout=30)


def assert_error(r: requests.Response, status: int, code: str):
    assert r.status_code == status, f"expected {status} {code}, got {r.status_code}: {r.text[:300]}"
    assert r.headers["Content-Type"].startswith("application/json"), r.headers
    assert r.headers.get("Cache-Control") == "no-store", r.headers
    body = r.json()
    assert body["error"] == code, body
    assert body.get("error_description"), body


def device_maker(server) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    folder = server.keys / "wallet-provider" / "wallet-provider"
    key = serialization.load_pem_private_key((folder / "device-maker.key.pem").read_bytes(), None)
    return key, x509.load_pem_x509_certificate((folder / "device-maker.pem").read_bytes())


def python_dev_attestation(signer, root: x509.Certificate, key: ECKey, tag: str, n: str, *, integrity="pass",
                           typ=DEV_TYPE, alg="ES256", cdh: str | None = None) -> str:
    """A development key attestation made here, from the format's description."""
    claims = {"cnf": {"jwk": public_jwk(key)}, "hardware_key_tag": tag,
              "client_data_hash": cdh or client_data_hash(n, tag, key.thumbprint()),
              "device": {"model": "Python test device", "os": "pytest", "integrity": integrity},
              "iat": int(time.time()), "exp": int(time.time()) + 300}
    header = {"alg": alg, "typ": typ, "x5c": [base64.b64encode(root.public_bytes(serialization.Encoding.DER)).decode()]}
    jwk = ECKey.import_key(signer) if not isinstance(signer, ECKey) else signer
    return sign_jwt(header, claims, jwk)


def self_signed_root() -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Not the device maker")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return key, cert


# -- item 1-2: configuration, keys, metadata

def test_metadata_in_the_entity_configuration(fed):
    _, _, claims = fetch_entity_configuration(fed.id("wallet-provider"))
    meta = claims["metadata"]["wallet_provider"]
    base = fed.id("wallet-provider")
    assert "jwks_uri" not in meta, "the hand-written jwks_uri (served by nothing) must be gone"
    assert meta["token_endpoint"] == base + "/token"
    assert meta["nonce_endpoint"] == base + "/nonce"
    assert meta["grant_types_supported"] == [GRANT]
    assert meta["token_endpoint_auth_methods_supported"] == ["private_key_jwt"]
    assert meta["token_endpoint_auth_signing_alg_values_supported"] == ["ES256"]
    assert meta["aal_values_supported"] and all(isinstance(v, str) for v in meta["aal_values_supported"])
    [key] = meta["jwks"]["keys"]
    assert key["kid"] == ECKey.import_key(key).thumbprint(), "kid must be the RFC 7638 thumbprint"
    assert "d" not in key
    fe = claims["metadata"]["federation_entity"]
    assert fe["organization_name"] == "Trustbed Demo Wallet Provider", "the entity file's member wins"
    for member in ("homepage_uri", "policy_uri", "tos_uri", "logo_uri"):
        url = fed.local(fe[member])
        assert requests.get(url, timeout=10).status_code == 200, f"{member} {url} is not served"


def test_signing_key_is_the_ca_issued_signer(fed):
    """The jwks key is the signing certificate's, which chains to <wp>/ca.pem."""
    r = requests.get(fed.url("wallet-provider", "/ca.pem"), timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/x-pem-file"
    ca = x509.load_pem_x509_certificate(r.content)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    signer = x509.load_pem_x509_certificate((fed.keys / "wallet-provider" / "wallet-provider" / "signer.pem").read_bytes())
    signer.verify_directly_issued_by(ca)
    _, _, claims = fetch_entity_configuration(fed.id("wallet-provider"))
    [key] = claims["metadata"]["wallet_provider"]["jwks"]["keys"]
    numbers = signer.public_key().public_numbers()
    assert ECKey.import_key(key).as_dict()["x"] == b64url(numbers.x.to_bytes(32, "big"))


def test_key_files_are_private(fed):
    folder = fed.keys / "wallet-provider" / "wallet-provider"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in ("ca.pem", "ca.key.pem", "signer.pem", "signer.key.pem", "device-maker.pem", "device-maker.key.pem", "nonce-secret"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name


def test_resolved_through_the_trust_anchor(fed):
    r = requests.get(fed.id("ta") + "/resolve", params={"sub": fed.id("wallet-provider"), "trust_anchor": fed.id("ta")}, timeout=30)
    assert r.status_code == 200, r.text
    _, claims = decode_jwt_unverified(r.text)
    assert claims["metadata"]["wallet_provider"]["nonce_endpoint"] == fed.id("wallet-provider") + "/nonce"


@pytest.mark.parametrize("declaration, field", [
    ({"jwks_uri": "x"}, "jwks_uri"),
    ({"attestation_lifetime": 86401}, "attestation_lifetime"),
    ({"client_id": 3}, "client_id"),
])
def test_bad_declarations_refused_at_load(make_server, declaration, field):
    server = make_server("wp-bad", entities={
        "ta": {"metadata": {"federation_entity": {"organization_name": "TA"}}},
        "wallet-provider": {"authority_hints": ["ta"], "services": {"wallet_provider": declaration}},
    })
    with pytest.raises(Exception):
        server.start(timeout=20)
    assert field in server.log_tail(), server.log_tail()


# -- item 3: nonce

def test_nonce(fed):
    a, b = nonce(fed), nonce(fed)
    assert a != b and len(a) >= 32


# -- items 4, 5a: registration with development key attestations

def test_register_with_the_servers_dev_attestation(wp_server):
    key, tag = new_key(), "tag-server-dev"
    n = nonce(wp_server)
    attestation = dev_attestation(wp_server, key, tag, n)
    header, claims = decode_jwt_unverified(attestation)
    assert header["typ"] == DEV_TYPE and header["alg"] == "ES256"
    _, root = device_maker(wp_server)
    assert x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0])) == root
    verify_es256(attestation, root.public_key())
    assert claims["hardware_key_tag"] == tag
    assert claims["client_data_hash"] == client_data_hash(n, tag, key.thumbprint())
    assert claims["cnf"]["jwk"]["x"] == public_jwk(key)["x"]
    assert claims["device"]["integrity"] == "pass"
    r = register(wp_server, {"challenge": n, "key_attestation": attestation, "hardware_key_tag": tag})
    assert r.status_code == 204, r.text
    assert r.content == b""


@pytest.mark.parametrize("path", ["/wallet-instances", "/instance-initialization"])
def test_register_aliases_with_a_python_made_attestation(wp_server, path):
    signer, root = device_maker(wp_server)
    key, tag = new_key(), f"tag-{path.strip('/')}"
    n = nonce(wp_server)
    attestation = python_dev_attestation(signer, root, key, tag, n)
    r = register(wp_server, {"nonce": n, "key_attestation": attestation, "hardware_key_tag": tag}, path=path)
    assert r.status_code == 204, r.text


def test_bad_inputs_in_order(wp_server):
    signer, root = device_maker(wp_server)
    key, tag = new_key(), "tag-bad-inputs"
    n = nonce(wp_server)
    good = python_dev_attestation(signer, root, key, tag, n)

    # 400 bad_request: not JSON, not an object, members missing or mistyped, wrong media type.
    assert_error(register(wp_server, None, raw=b"{not json"), 400, "bad_request")
    assert_error(register(wp_server, None, raw=b"[]"), 400, "bad_request")
    assert_error(register(wp_server, None, raw=b"nonce=x", content_type="application/x-www-form-urlencoded"), 400, "bad_request")
    assert_error(register(wp_server, {"key_attestation": good, "hardware_key_tag": tag}), 400, "bad_request")
    assert_error(register(wp_server, {"nonce": n, "hardware_key_tag": tag}), 400, "bad_request")
    assert_error(register(wp_server, {"nonce": n, "key_attestation": good}), 400, "bad_request")
    assert_error(register(wp_server, {"nonce": 1, "key_attestation": good, "hardware_key_tag": tag}), 400, "bad_request")
    assert_error(register(wp_server, {"nonce": n, "key_attestation": {}, "hardware_key_tag": tag}), 400, "bad_request")
    assert_error(register(wp_server, {"nonce": n, "key_attestation": good, "hardware_key_tag": "x\"y"}), 400, "bad_request")
    # 400 comes before the nonce: a malformed body with a bad nonce is still bad_request.
    assert_error(register(wp_server, {"nonce": "bogus", "key_attestation": good}), 400, "bad_request")

    # 403 invalid_request: nonce unknown, or from another server.
    assert_error(register(wp_server, {"nonce": "bogus", "key_attestation": good, "hardware_key_tag": tag}), 403, "invalid_request")

    # 403 invalid_request: the key attestation unreadable, badly signed, off its roots, unbound.
    bad = {
        "unreadable": "a.b.c",
        "alg none": b64url(json.dumps({"alg": "none", "typ": DEV_TYPE}).encode()) + "." + good.split(".")[1] + ".",
        "HS256": b64url(json.dumps({"alg": "HS256", "typ": DEV_TYPE}).encode()) + "." + good.split(".")[1] + "." + b64url(b"x" * 32),
        "wrong typ": python_dev_attestation(signer, root, key, tag, n, typ="JWT"),
        "tampered": good.split(".")[0] + "." + b64url(json.dumps(
            {**decode_jwt_unverified(good)[1], "device": {"model": "m", "os": "o", "integrity": "pass"}}).encode()) + "." + good.split(".")[2],
        "off roots": python_dev_attestation(*self_signed_root(), key, tag, n),
        "other nonce": python_dev_attestation(signer, root, key, tag, nonce(wp_server)),
        "other tag": python_dev_attestation(signer, root, key, "another-tag", n),
        "other key": python_dev_attestation(signer, root, key, tag, n, cdh=client_data_hash(n, tag, new_key().thumbprint())),
        "android, no verifier yet or bad chain": ["MIIB"],
    }
    for why, attestation in bad.items():
        r = register(wp_server, {"nonce": n, "key_attestation": attestation, "hardware_key_tag": tag})
        assert r.status_code == 403 and r.json()["error"] == "invalid_request", f"{why}: {r.status_code} {r.text}"

    # 403 integrity_check_error.
    failing = python_dev_attestation(signer, root, key, tag, n, integrity="fail")
    assert_error(register(wp_server, {"nonce": n, "key_attestation": failing, "hardware_key_tag": tag}), 403, "integrity_check_error")
    server_failing = dev_attestation(wp_server, key, tag, n, integrity="fail")
    assert_error(register(wp_server, {"nonce": n, "key_attestation": server_failing, "hardware_key_tag": tag}), 403, "integrity_check_error")

    # Every refusal above burnt nothing: the nonce still registers.
    assert register(wp_server, {"nonce": n, "key_attestation": good, "hardware_key_tag": tag}).status_code == 204
    # Used now.
    assert_error(register(wp_server, {"nonce": n, "key_attestation": good, "hardware_key_tag": tag}), 403, "invalid_request")
    # The tag is taken: with a fresh nonce and a good attestation, 403 invalid_request.
    n2 = nonce(wp_server)
    again = python_dev_attestation(signer, root, key, tag, n2)
    r = register(wp_server, {"nonce": n2, "key_attestation": again, "hardware_key_tag": tag})
    assert_error(r, 403, "invalid_request")
    assert "already registered" in r.json()["error_description"]


def test_expired_nonce(make_server):
    server = make_server("wp-short-nonce", entities={
        "ta": {"metadata": {"federation_entity": {"organization_name": "TA"}}},
        "wallet-provider": {"authority_hints": ["ta"], "services": {"wallet_provider": {"nonce_lifetime": 1}}},
    }).start()
    key, tag = new_key(), "tag-expired"
    n = nonce(server)
    attestation = dev_attestation(server, key, tag, n)
    time.sleep(2.1)
    assert_error(register(server, {"nonce": n, "key_attestation": attestation, "hardware_key_tag": tag}), 403, "invalid_request")


def test_dev_key_attestation_bad_input(wp_server):
    url = wp(wp_server) + "/dev/key-attestation"
    key = new_key()
    cases = [
        {"hardware_key_tag": "t", "nonce": "n"},
        {"jwk": key.as_dict(private=True), "hardware_key_tag": "t", "nonce": "n"},
        {"jwk": {"kty": "oct", "k": "AAAA"}, "hardware_key_tag": "t", "nonce": "n"},
        {"jwk": public_jwk(key), "nonce": "n"},
        {"jwk": public_jwk(key), "hardware_key_tag": "t", "nonce": "n", "integrity": "maybe"},
    ]
    for body in cases:
        assert_error(requests.post(url, json=body, timeout=10), 400, "bad_request")
    assert_error(requests.post(url, data=b"{", headers={"Content-Type": "application/json"}, timeout=10), 400, "bad_request")


def test_dev_key_attestation_needs_the_admin_token_from_a_foreign_host(wp_server):
    """A page that rebinds its DNS name to 127.0.0.1 still sends its own Host: admin token then."""
    url = wp(wp_server) + "/dev/key-attestation"
    body = {"jwk": public_jwk(new_key()), "hardware_key_tag": "t", "nonce": "n"}
    r = requests.post(url, json=body, headers={"Host": f"evil.example:{wp_server.port}"}, timeout=10)
    assert_error(r, 401, "unauthorized")
    r = requests.post(url, json=body, headers={"Host": f"evil.example:{wp_server.port}",
                                               "Authorization": "Bearer " + wp_server.admin_token}, timeout=10)
    assert r.status_code == 200, r.text


def test_fifty_concurrent_registrations_with_one_nonce(wp_server):
    n = nonce(wp_server)
    signer, root = device_maker(wp_server)
    bodies = []
    for i in range(50):
        key, tag = new_key(), f"tag-race-{i}"
        bodies.append({"nonce": n, "key_attestation": python_dev_attestation(signer, root, key, tag, n), "hardware_key_tag": tag})
    with ThreadPoolExecutor(max_workers=50) as pool:
        responses = list(pool.map(lambda b: register(wp_server, b), bodies))
    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(204) == 1, statuses
    assert statuses.count(403) == 49, statuses
    for r in responses:
        if r.status_code == 403:
            assert r.json()["error"] == "invalid_request"


# -- item 6 (first wire format): POST <wp>/token with a war+jwt → the wallet attestation

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


class Instance:
    """A registered wallet instance: its hardware key and tag; each attestation request gets a
    fresh wallet key (cnf.jwk)."""

    def __init__(self, server, tag: str, integrity: str = "pass"):
        self.server, self.tag = server, tag
        self.hardware = new_key()
        n = nonce(server)
        r = register(server, {"challenge": n, "key_attestation": dev_attestation(server, self.hardware, tag, n, integrity),
                              "hardware_key_tag": tag})
        assert r.status_code == 204, r.text

    def hardware_signature(self, member: str, n: str, thumbprint: str, *, der: bool = False) -> str:
        data = json.dumps({member: n, "jwk_thumbprint": thumbprint}, separators=(",", ":")).encode()
        signature = self.hardware.private_key.sign(data, ec.ECDSA(hashes.SHA256()))
        if der:
            return b64url(signature)
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
        r, s = decode_dss_signature(signature)
        return b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    def request(self, wallet_key: ECKey | None = None, *, typ="war+jwt", member="challenge", n: str | None = None,
                claims: dict | None = None, drop: tuple = (), der=False, integrity: str = "pass", with_key_attestation=True,
                kid: str | None = None) -> tuple[str, ECKey]:
        key = wallet_key or new_key()
        n = n or nonce(self.server)
        thumbprint = key.thumbprint()
        body = {"iss": wp(self.server).replace(self.server.base, self.server.public_base) + "/instance/" + thumbprint,
                "aud": self.server.id("wallet-provider"), "iat": int(time.time()), "exp": int(time.time()) + 300,
                member: n, "hardware_key_tag": self.tag, "hardware_signature": self.hardware_signature(member, n, thumbprint, der=der),
                "cnf": {"jwk": public_jwk(key)}}
        if with_key_attestation:
            body["key_attestation"] = dev_attestation(self.server, self.hardware, self.tag, n, integrity)
        else:
            body["integrity_assertion"] = "play-integrity-token-not-checked-offline"
        body.update(claims or {})
        for name in drop:
            body.pop(name, None)
        return sign_jwt({"alg": "ES256", "typ": typ, "kid": kid or thumbprint}, body, key), key


def token(server, assertion: str, grant: str = JWT_BEARER) -> requests.Response:
    return requests.post(wp(server) + "/token", data={"grant_type": grant, "assertion": assertion}, timeout=30)


def verify_wallet_attestation(server, attestation: str, wallet_key: ECKey) -> dict:
    """Checked independently: x5c[0] issued by <wp>/ca.pem, the JWS verified with joserfc by that
    leaf's key, and the claims of item 6."""
    ca = x509.load_pem_x509_certificate(requests.get(wp(server) + "/ca.pem", timeout=10).content)
    header, claims = decode_jwt_unverified(attestation)
    assert header["typ"] == "oauth-client-attestation+jwt" and header["alg"] == "ES256"
    assert len(header["x5c"]) == 1, "x5c carries the signing certificate without the root"
    leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
    leaf.verify_directly_issued_by(ca)
    leaf_key = ECKey.import_key(leaf.public_key().public_bytes(serialization.Encoding.PEM,
                                                               serialization.PublicFormat.SubjectPublicKeyInfo))
    assert header["kid"] == leaf_key.thumbprint()
    registry = jws.JWSRegistry(strict_check_header=False)
    registry.max_header_length = 16_384  # the x5c header (later also trust_chain) is larger than joserfc's default 512
    verified = jws.deserialize_compact(attestation, leaf_key, algorithms=["ES256"], registry=registry)
    claims = json.loads(verified.payload)
    assert claims["iss"] == server.id("wallet-provider")
    assert claims["sub"] == wallet_key.thumbprint()
    assert claims["cnf"]["jwk"]["x"] == public_jwk(wallet_key)["x"] and claims["cnf"]["jwk"]["y"] == public_jwk(wallet_key)["y"]
    assert claims["aal"] and claims["wallet_name"]
    assert 0 < claims["exp"] - claims["iat"] <= 86400 and abs(claims["iat"] - time.time()) < 60
    return claims


def check_trust_chain(server, attestation: str, *, max_size: int = 16_384) -> None:
    """The `trust_chain` header walked independently (OpenID Federation 1.0 §10.2) from the
    provider's entity configuration to the Trust Anchor's, whose keys come from its own
    entity configuration fetched here; the provider's chained metadata names the attestation's kid."""
    from fedlib import validate_trust_chain
    header, _ = decode_jwt_unverified(attestation)
    chain = header["trust_chain"]
    _, _, ta = fetch_entity_configuration(server.id("ta"))
    statements = validate_trust_chain(chain, server.id("wallet-provider"), server.id("ta"), ta_jwks=ta["jwks"])
    assert statements[0]["sub"] == statements[0]["iss"] == server.id("wallet-provider")
    assert statements[-1]["sub"] == statements[-1]["iss"] == server.id("ta")
    kids = [k["kid"] for k in statements[0]["metadata"]["wallet_provider"]["jwks"]["keys"]]
    assert header["kid"] in kids
    assert 2_000 < len(attestation) < max_size, len(attestation)


def test_wallet_attestation(wp_server):
    instance = Instance(wp_server, "tag-attest")
    for der, member, with_ka in [(False, "challenge", True), (True, "nonce", False)]:
        assertion, key = instance.request(der=der, member=member, with_key_attestation=with_ka)
        r = token(wp_server, assertion)
        assert r.status_code == 200, r.text
        assert r.headers["Content-Type"] == "application/jwt" and r.headers["Cache-Control"] == "no-store"
        claims = verify_wallet_attestation(wp_server, r.text, key)
        assert claims["exp"] - claims["iat"] == 3600
        check_trust_chain(wp_server, r.text)
    # A bare thumbprint as iss is accepted too.
    key = new_key()
    assertion, _ = instance.request(key, claims={"iss": key.thumbprint()})
    assert token(wp_server, assertion).status_code == 200


def test_wallet_attestation_bad_inputs_in_order(wp_server):
    instance = Instance(wp_server, "tag-attest-bad")
    failing = Instance(wp_server, "tag-attest-failing")
    other = Instance(wp_server, "tag-attest-other")

    # 400 bad_request
    assertion, _ = instance.request()
    assert_error(token(wp_server, assertion, grant="client_credentials"), 400, "bad_request")
    assert_error(requests.post(wp(wp_server) + "/token", json={"assertion": assertion}, timeout=10), 400, "bad_request")
    assert_error(token(wp_server, "not-a-jwt"), 400, "bad_request")
    assert_error(token(wp_server, instance.request(typ="wp-war+jwt")[0]), 400, "bad_request")
    assert_error(token(wp_server, instance.request(typ="JWT")[0]), 400, "bad_request")
    for claim in ("iss", "aud", "iat", "exp", "challenge", "hardware_key_tag", "hardware_signature", "cnf"):
        assert_error(token(wp_server, instance.request(drop=(claim,))[0]), 400, "bad_request")
    assert_error(token(wp_server, instance.request(drop=("key_attestation",))[0]), 400, "bad_request")

    # 403 invalid_request: the request's signature, times, nonce.
    forged, _ = instance.request()
    h, p, _ = forged.split(".")
    _, other_sig = instance.request()[0].rsplit(".", 1)
    assert_error(token(wp_server, f"{h}.{p}.{other_sig}"), 403, "invalid_request")
    assert_error(token(wp_server, instance.request(kid="not-the-thumbprint")[0]), 403, "invalid_request")
    hs = b64url(json.dumps({"alg": "HS256", "typ": "war+jwt", "kid": "x"}).encode())
    assert_error(token(wp_server, f"{hs}.{p}.{b64url(b'x' * 32)}"), 403, "invalid_request")
    assert_error(token(wp_server, instance.request(claims={"exp": int(time.time()) - 10})[0]), 403, "invalid_request")
    assert_error(token(wp_server, instance.request(claims={"iat": int(time.time()) + 3600, "exp": int(time.time()) + 3700})[0]),
                 403, "invalid_request")
    assert_error(token(wp_server, instance.request(n="bogus", with_key_attestation=False)[0]), 403, "invalid_request")

    # 404 not_found: no instance with this tag (hardware signature made by the caller's key).
    assert_error(token(wp_server, instance.request(claims={"hardware_key_tag": "never-registered"}, with_key_attestation=False)[0]),
                 404, "not_found")

    # 403 invalid_request: hardware signature by another key, key attestation of another
    # instance, iss, aud.
    n = nonce(wp_server)
    key = new_key()
    bad_hs = other.hardware_signature("challenge", n, key.thumbprint())
    assert_error(token(wp_server, instance.request(key, n=n, claims={"hardware_signature": bad_hs}, with_key_attestation=False)[0]),
                 403, "invalid_request")
    other_ka = dev_attestation(wp_server, other.hardware, instance.tag, n)
    assert_error(token(wp_server, instance.request(key, n=n, claims={"key_attestation": other_ka})[0]), 403, "invalid_request")
    assert_error(token(wp_server, instance.request(key, n=n, claims={"iss": "https://elsewhere.example/instance/x"})[0]),
                 403, "invalid_request")
    assert_error(token(wp_server, instance.request(key, n=n, claims={"aud": "https://elsewhere.example"})[0]), 403, "invalid_request")

    # 403 integrity_check_error
    assert_error(token(wp_server, failing.request(integrity="fail")[0]), 403, "integrity_check_error")

    # Every refusal above burnt nothing: the nonce still works, then once only.
    good, key = instance.request(key, n=n)
    assert token(wp_server, good).status_code == 200
    assert_error(token(wp_server, instance.request(key, n=n)[0]), 403, "invalid_request")


def test_pid_provider_accepts_the_wallet_attestation(fed):
    """The demo pid-provider trusts wallet providers under `ta`: PAR with the attestation and its PoP."""
    instance = Instance(fed, "tag-par-" + str(time.monotonic_ns()))
    assertion, key = instance.request()
    r = token(fed, assertion)
    assert r.status_code == 200, r.text
    issuer = fed.id("pid-provider")
    client_id = key.thumbprint()
    pop = sign_jwt({"typ": "oauth-client-attestation-pop+jwt", "alg": "ES256"},
                   {"iss": client_id, "aud": issuer, "jti": b64url(hashlib.sha256(r.content).digest()), "iat": int(time.time())}, key)
    form = {"response_type": "code", "client_id": client_id, "redirect_uri": "eu.trustbed.test-wallet:/callback",
            "code_challenge": b64url(hashlib.sha256(b"verifier" * 8).digest()), "code_challenge_method": "S256", "state": "s",
            "authorization_details": json.dumps([{"type": "openid_credential", "credential_configuration_id": "urn:eudi:pid:1"}])}
    par = requests.post(fed.local(issuer) + "/par", data=form,
                        headers={"OAuth-Client-Attestation": r.text, "OAuth-Client-Attestation-PoP": pop}, timeout=30)
    assert par.status_code == 201, par.text


# -- item 8 (admin list)

def test_admin_instances(wp_server):
    Instance(wp_server, "tag-admin-list")
    url = wp(wp_server) + "/admin/instances"
    assert_error(requests.get(url, timeout=10), 401, "unauthorized")
    assert_error(requests.get(url, headers={"Authorization": "Bearer wrong"}, timeout=10), 401, "unauthorized")
    r = requests.get(url, headers={"Authorization": "Bearer " + wp_server.admin_token}, timeout=10)
    assert r.status_code == 200 and r.headers["Cache-Control"] == "no-store"
    instances = {i["id"]: i for i in r.json()["instances"]}
    listed = instances["tag-admin-list"]
    assert set(listed) == {"id", "account", "state", "reason", "format", "created_at", "updated_at"}
    assert listed["state"] == "installed" and listed["format"] == "dev" and listed["reason"] is None
    r = requests.get(url, params={"account": listed["account"]}, headers={"Authorization": "Bearer " + wp_server.admin_token}, timeout=10)
    assert [i["id"] for i in r.json()["instances"]] == ["tag-admin-list"]
    # After a wallet attestation the instance is operational.
    instance = Instance(wp_server, "tag-admin-operational")
    assert token(wp_server, instance.request()[0]).status_code == 200
    r = requests.get(url, headers={"Authorization": "Bearer " + wp_server.admin_token}, timeout=10)
    assert {i["id"]: i for i in r.json()["instances"]}["tag-admin-operational"]["state"] == "operational"


def test_revoke_uninstall_and_purge(wp_server):
    admin = {"Authorization": "Bearer " + wp_server.admin_token}
    instance = Instance(wp_server, "tag-lifecycle")
    assert token(wp_server, instance.request()[0]).status_code == 200
    status_url = wp(wp_server) + "/admin/instances/tag-lifecycle/status"
    assert_error(requests.post(status_url, json={"status": "revoked"}, timeout=10), 401, "unauthorized")
    assert_error(requests.post(status_url, json={"status": "paused"}, headers=admin, timeout=10), 400, "bad_request")
    assert_error(requests.post(wp(wp_server) + "/admin/instances/never/status", json={"status": "revoked"}, headers=admin,
                               timeout=10), 404, "not_found")
    r = requests.post(status_url, json={"status": "revoked", "reason": "lost phone"}, headers=admin, timeout=10)
    assert r.status_code == 200, r.text
    assert r.json()["state"] == "installed" and r.json()["reason"] == "lost phone"
    # The hardware key is unusable now: 403 invalid_request.
    r = token(wp_server, instance.request()[0])
    assert_error(r, 403, "invalid_request")
    assert "revoked" in r.json()["error_description"]
    r = requests.post(status_url, json={"status": "uninstalled"}, headers=admin, timeout=10)
    assert r.status_code == 200 and r.json()["state"] == "uninstalled"
    assert_error(requests.post(status_url, json={"status": "revoked"}, headers=admin, timeout=10), 403, "invalid_request")
    # Purge the account: its instances go, later lookups 404.
    account = r.json()["account"]
    purge_url = wp(wp_server) + "/admin/accounts/" + account
    assert_error(requests.delete(purge_url, timeout=10), 401, "unauthorized")
    assert requests.delete(purge_url, headers=admin, timeout=10).status_code == 204
    assert_error(requests.delete(purge_url, headers=admin, timeout=10), 404, "not_found")
    listed = requests.get(wp(wp_server) + "/admin/instances", params={"account": account}, headers=admin, timeout=10).json()
    assert listed == {"instances": []}
    assert_error(token(wp_server, instance.request(with_key_attestation=False)[0]), 404, "not_found")


def test_integrity_assertion_is_stored_with_the_instance(wp_server):
    """A Play Integrity token cannot be checked offline: it is kept, as sent, on the instance."""
    instance = Instance(wp_server, "tag-integrity-assertion")
    r = token(wp_server, instance.request(with_key_attestation=False)[0])
    assert r.status_code == 200, r.text
    listed = requests.get(wp(wp_server) + "/admin/instances", headers={"Authorization": "Bearer " + wp_server.admin_token},
                          timeout=10).json()["instances"]
    stored = {i["id"]: i for i in listed}["tag-integrity-assertion"]
    assert stored["integrity_assertion"] == "play-integrity-token-not-checked-offline"
    assert abs(stored["integrity_assertion_at"] - time.time()) < 60
    # Oversized: 400 bad_request.
    assert_error(token(wp_server, instance.request(with_key_attestation=False, claims={"integrity_assertion": "A" * 20_000})[0]),
                 400, "bad_request")


# -- item 6 (second wire format): POST <wp>/wallet-attestations {"assertion": <wp-war+jwt>}

MDOC_DOCTYPE = "org.iso.18013.5.1.it.WalletAttestation"


def verify_mdoc_wallet_attestation(server, attestation: str, wallet_key: ECKey, jwt_claims: dict) -> dict:
    """The `mso_mdoc` wallet attestation checked independently: base64url IssuerSigned decoded with
    cbor2, the issuerAuth COSE_Sign1 verified with pycose by the x5chain leaf (issued by
    <wp>/ca.pem), every item's digest against the MSO, and the whole document again with
    pymdoccbor; the MSO's deviceKey is the wallet key and the items carry the JWT's claims."""
    import re

    import cbor2
    from pycose.keys import EC2Key
    from pycose.keys.curves import P256
    from pycose.messages import Sign1Message
    from pymdoccbor.mdoc.verifier import MobileDocument

    assert re.fullmatch(r"[A-Za-z0-9_-]+", attestation), "base64url without padding"
    issuer_signed = cbor2.loads(base64.urlsafe_b64decode(attestation + "=" * (-len(attestation) % 4)))
    assert set(issuer_signed) == {"nameSpaces", "issuerAuth"}
    protected, unprotected, payload, _ = issuer_signed["issuerAuth"]
    assert cbor2.loads(protected)[1] == -7, "ES256"
    x5chain = unprotected[33]
    leaf = x509.load_der_x509_certificate(x5chain if isinstance(x5chain, bytes) else x5chain[0])
    ca = x509.load_pem_x509_certificate(requests.get(wp(server) + "/ca.pem", timeout=10).content)
    leaf.verify_directly_issued_by(ca)
    numbers = leaf.public_key().public_numbers()
    message = Sign1Message.from_cose_obj(list(issuer_signed["issuerAuth"]), True)
    message.key = EC2Key(crv=P256, x=numbers.x.to_bytes(32, "big"), y=numbers.y.to_bytes(32, "big"))
    assert message.verify_signature(), "pycose: the MSO signature"
    mso_tag = cbor2.loads(payload)
    assert isinstance(mso_tag, cbor2.CBORTag) and mso_tag.tag == 24
    mso = cbor2.loads(mso_tag.value)
    assert mso["docType"] == MDOC_DOCTYPE and mso["digestAlgorithm"] == "SHA-256"
    elements = {}
    for namespace, items in issuer_signed["nameSpaces"].items():
        assert namespace == "org.iso.18013.5.1.it"
        for tagged in items:
            item = cbor2.loads(tagged.value)
            assert mso["valueDigests"][namespace][item["digestID"]] == hashlib.sha256(cbor2.dumps(tagged)).digest()
            elements[item["elementIdentifier"]] = item["elementValue"]
    for name in ("iss", "sub", "aal", "wallet_name"):
        assert elements[name] == jwt_claims[name], name
    device_key = mso["deviceKeyInfo"]["deviceKey"]
    jwk = public_jwk(wallet_key)
    assert device_key[1] == 2 and device_key[-1] == 1, "EC2 P-256"
    assert device_key[-2] == base64.urlsafe_b64decode(jwk["x"] + "=" * (-len(jwk["x"]) % 4)), "deviceKey x = cnf.jwk"
    assert device_key[-3] == base64.urlsafe_b64decode(jwk["y"] + "=" * (-len(jwk["y"]) % 4)), "deviceKey y = cnf.jwk"
    validity = mso["validityInfo"]
    assert int(validity["signed"].timestamp()) == jwt_claims["iat"]
    assert int(validity["validUntil"].timestamp()) == jwt_claims["exp"]
    document = MobileDocument(docType=MDOC_DOCTYPE, issuerSigned=issuer_signed)
    assert document.verify(trusted_root_certs=[ca], verify_hashes=True), document.hash_verification
    assert document.hash_verification["verified"] == len(elements)
    return elements

def wallet_attestations(server, body, path="/wallet-attestations") -> requests.Response:
    return requests.post(wp(server) + path, json=body, timeout=30)


def test_wallet_attestations_second_format(wp_server):
    from walletlib import decode_disclosure, sd_digest, split_sd_jwt
    instance = Instance(wp_server, "tag-second-format")
    for path in ("/wallet-attestations", "/key-binding"):
        assertion, key = instance.request(typ="wp-war+jwt")
        r = wallet_attestations(wp_server, {"assertion": assertion}, path)
        assert r.status_code == 200, r.text
        assert r.headers["Cache-Control"] == "no-store"
        by_format = {a["format"]: a["wallet_attestation"] for a in r.json()["wallet_attestations"]}
        assert set(by_format) == {"jwt", "dc+sd-jwt", "mso_mdoc"}
        jwt_claims = verify_wallet_attestation(wp_server, by_format["jwt"], key)
        verify_mdoc_wallet_attestation(wp_server, by_format["mso_mdoc"], key, jwt_claims)
        # The SD-JWT VC: issuer JWT verified against the same leaf, disclosures matched to _sd.
        issuer_jwt, disclosures, kb = split_sd_jwt(by_format["dc+sd-jwt"])
        assert kb == ""
        header, _ = decode_jwt_unverified(issuer_jwt)
        assert header["typ"] == "dc+sd-jwt"
        ca = x509.load_pem_x509_certificate(requests.get(wp(wp_server) + "/ca.pem", timeout=10).content)
        leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
        leaf.verify_directly_issued_by(ca)
        verify_es256(issuer_jwt, leaf.public_key())
        _, payload = decode_jwt_unverified(issuer_jwt)
        assert payload["vct"] == wp_server.id("wallet-provider") + "/wallet-attestation"
        assert payload["iss"] == jwt_claims["iss"] and payload["sub"] == jwt_claims["sub"]
        assert payload["cnf"] == jwt_claims["cnf"] and payload["aal"] == jwt_claims["aal"]
        disclosed = {}
        for d in disclosures:
            assert sd_digest(d) in payload["_sd"]
            _, name, value = decode_disclosure(d)
            disclosed[name] = value
        assert disclosed["wallet_name"] == jwt_claims["wallet_name"]
    # Bad input: the other endpoint's typ, no assertion, not JSON.
    assert_error(wallet_attestations(wp_server, {"assertion": instance.request()[0]}), 400, "bad_request")
    assert_error(wallet_attestations(wp_server, {}), 400, "bad_request")
    assert_error(wallet_attestations(wp_server, ["x"]), 400, "bad_request")
    assert_error(requests.post(wp(wp_server) + "/wallet-attestations", data=b"{", headers={"Content-Type": "application/json"},
                               timeout=10), 400, "bad_request")
    # The /token endpoint refuses this endpoint's typ.
    assert_error(token(wp_server, instance.request(typ="wp-war+jwt")[0]), 400, "bad_request")


# -- item 7: key attestations for wallet keys (OpenID4VCI 1.0 Appendix D)

def key_attestation_request(server, instance: "Instance", keys: list[ECKey], *, n: str | None = None, c_nonce: str | None = None,
                            claims: dict | None = None, typ="wp-kar+jwt", kid: str | None = None, signer: ECKey | None = None) -> str:
    body = {"iss": server.id("wallet-provider") + "/instance/" + instance.tag, "aud": server.id("wallet-provider"),
            "iat": int(time.time()), "nonce": n or nonce(server), "keys": [public_jwk(k) for k in keys]}
    if c_nonce is not None:
        body["c_nonce"] = c_nonce
    body.update(claims or {})
    return sign_jwt({"alg": "ES256", "typ": typ, "kid": kid or instance.tag}, body, signer or instance.hardware)


def key_attestations(server, assertion: str) -> requests.Response:
    return requests.post(wp(server) + "/key-attestations", json={"assertion": assertion}, timeout=30)


def test_key_attestation_for_wallet_keys(wp_server):
    instance = Instance(wp_server, "tag-key-attestation")
    keys = [new_key(), new_key()]
    r = key_attestations(wp_server, key_attestation_request(wp_server, instance, keys, c_nonce="issuer-c-nonce"))
    assert r.status_code == 200, r.text
    attestation = r.json()["key_attestation"]
    header, _ = decode_jwt_unverified(attestation)
    assert header["typ"] == "key-attestation+jwt"
    ca = x509.load_pem_x509_certificate(requests.get(wp(wp_server) + "/ca.pem", timeout=10).content)
    leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
    leaf.verify_directly_issued_by(ca)
    verify_es256(attestation, leaf.public_key())
    _, claims = decode_jwt_unverified(attestation)
    assert claims["iss"] == wp_server.id("wallet-provider")
    assert [k["x"] for k in claims["attested_keys"]] == [public_jwk(k)["x"] for k in keys]
    assert claims["key_storage"] == ["iso_18045_basic"] and claims["user_authentication"] == ["iso_18045_basic"]
    assert claims["nonce"] == "issuer-c-nonce" and claims["exp"] > claims["iat"]

    # Bad input.
    assert_error(key_attestations(wp_server, "x"), 400, "bad_request")
    assert_error(key_attestations(wp_server, key_attestation_request(wp_server, instance, keys, typ="war+jwt")), 400, "bad_request")
    assert_error(key_attestations(wp_server, key_attestation_request(wp_server, instance, [])), 400, "bad_request")
    assert_error(key_attestations(wp_server, key_attestation_request(wp_server, instance, [new_key() for _ in range(11)])), 400,
                 "bad_request")
    assert_error(key_attestations(wp_server, key_attestation_request(wp_server, instance, keys, kid="unknown-tag")), 404, "not_found")
    assert_error(key_attestations(wp_server, key_attestation_request(wp_server, instance, keys, signer=new_key())), 403,
                 "invalid_request")
    assert_error(key_attestations(wp_server, key_attestation_request(wp_server, instance, keys, claims={"aud": "x"})), 403,
                 "invalid_request")
    assert_error(key_attestations(wp_server, key_attestation_request(wp_server, instance, keys, claims={"iss": "x"})), 403,
                 "invalid_request")
    n = nonce(wp_server)
    assert key_attestations(wp_server, key_attestation_request(wp_server, instance, keys, n=n)).status_code == 200
    assert_error(key_attestations(wp_server, key_attestation_request(wp_server, instance, keys, n=n)), 403, "invalid_request")


def test_pid_provider_accepts_the_key_attestation(fed):
    """The demo pid-provider takes the provider's key attestation on a jwt proof (federation trust via ta)."""
    from walletlib import Wallet, admin_offer, attested_proof, persona
    instance = Instance(fed, "tag-ka-pid-" + str(time.monotonic_ns()))
    issuer = fed.id("pid-provider")
    wallet = Wallet(issuer)
    offer = wallet.fetch_offer(admin_offer(issuer, fed.admin_token, persona(fed)["id"], ["urn:eudi:pid:1"]))
    access = wallet.pre_authorized_token(offer, extra={"client_id": "eudi-wallet"})["access_token"]
    key = new_key()
    c_nonce = wallet.nonce()
    r = key_attestations(fed, key_attestation_request(fed, instance, [key], c_nonce=c_nonce))
    assert r.status_code == 200, r.text
    proof = attested_proof(key, issuer, c_nonce, r.json()["key_attestation"])
    r = wallet.credential_request(access, {"credential_configuration_id": "urn:eudi:pid:1", "proofs": {"jwt": [proof]}})
    assert r.status_code == 200, r.text


def test_oversized_and_wrong_method(wp_server):
    """A body over the server's 1 MiB limit is a JSON 413, and nothing is stored."""
    n = nonce(wp_server)
    big = json.dumps({"nonce": n, "hardware_key_tag": "tag-big", "key_attestation": "x" * (1 << 20)}).encode()
    r = register(wp_server, None, raw=big)
    assert r.status_code == 413 and r.json()["error"], r.text
    admin = {"Authorization": "Bearer " + wp_server.admin_token}
    listed = requests.get(wp(wp_server) + "/admin/instances", headers=admin, timeout=10).json()["instances"]
    assert "tag-big" not in {i["id"] for i in listed}
    r = requests.get(wp(wp_server) + "/wallet-instance", timeout=10)
    assert r.status_code == 405 and r.headers["Content-Type"].startswith("application/json"), r.text


# -- item 5(b): Android Key Attestation through the registration, under a test root

def _android_fixtures():
    """The device attestation fixtures' builders (Tests/Fixtures/device-attestation/make_fixtures.py:
    cryptography certificates, the KeyDescription extension written with asn1crypto)."""
    import importlib.util
    path = Path(__file__).resolve().parents[1] / "Fixtures" / "device-attestation" / "make_fixtures.py"
    spec = importlib.util.spec_from_file_location("device_attestation_fixtures", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_register_with_an_android_key_attestation(make_server):
    fx = _android_fixtures()
    root_key = ec.generate_private_key(ec.SECP384R1())
    root = fx.ca_certificate(fx.name("Interop Android Attestation Root"), root_key)
    mid_key = ec.generate_private_key(ec.SECP256R1())
    mid = fx.ca_certificate(fx.name("Interop Droid CA2"), mid_key, root.subject, root_key)
    server = make_server("wp-android", entities={
        "ta": {"metadata": {"federation_entity": {"organization_name": "TA"}}},
        "wallet-provider": {"authority_hints": ["ta"], "services": {"wallet_provider": {"android_roots": ["android-root.pem"]}}},
    })
    (server.entities / "android-root.pem").write_text(fx.pem(root))
    server.start()

    def chain(hardware, challenge, level="trusted_environment"):
        leaf = fx.android_leaf(hardware, mid, mid_key, fx.key_description(challenge, level=level))
        return [fx.b64(fx.der(leaf)), fx.b64(fx.der(mid)), fx.b64(fx.der(root))]

    def jwk_of(private_key) -> ECKey:
        return ECKey.import_key(private_key.public_key().public_bytes(serialization.Encoding.PEM,
                                                                      serialization.PublicFormat.SubjectPublicKeyInfo))

    hardware = ec.generate_private_key(ec.SECP256R1())
    thumbprint = jwk_of(hardware).thumbprint()
    n = nonce(server)
    cdh = hashlib.sha256(json.dumps({"nonce": n, "hardware_key_tag": "android-1", "jwk_thumbprint": thumbprint},
                                    separators=(",", ":")).encode()).digest()
    # Bound to another nonce: 403 invalid_request; a software key: 403 integrity_check_error.
    other = hashlib.sha256(b"another nonce").digest()
    assert_error(register(server, {"challenge": n, "key_attestation": chain(hardware, other), "hardware_key_tag": "android-1"}),
                 403, "invalid_request")
    assert_error(register(server, {"challenge": n, "key_attestation": chain(hardware, cdh, level="software"),
                                   "hardware_key_tag": "android-1"}), 403, "integrity_check_error")
    r = register(server, {"challenge": n, "key_attestation": chain(hardware, cdh, level="strongbox"), "hardware_key_tag": "android-1"})
    assert r.status_code == 204, r.text
    # The bare nonce as challenge (the IO wallet) is accepted too.
    hardware2 = ec.generate_private_key(ec.SECP256R1())
    n2 = nonce(server)
    r = register(server, {"challenge": n2, "key_attestation": chain(hardware2, n2.encode()), "hardware_key_tag": "android-2"})
    assert r.status_code == 204, r.text
    admin = {"Authorization": "Bearer " + server.admin_token}
    listed = {i["id"]: i for i in requests.get(wp(server) + "/admin/instances", headers=admin, timeout=10).json()["instances"]}
    assert listed["android-1"]["format"] == "android" and listed["android-2"]["format"] == "android"
    # A key attestation for the StrongBox instance states iso_18045_high.
    signer = ECKey.import_key(hardware.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                     serialization.NoEncryption()))
    request = sign_jwt({"alg": "ES256", "typ": "wp-kar+jwt", "kid": "android-1"},
                       {"iss": server.id("wallet-provider") + "/instance/android-1", "aud": server.id("wallet-provider"),
                        "iat": int(time.time()), "nonce": nonce(server), "keys": [public_jwk(new_key())]}, signer)
    r = key_attestations(server, request)
    assert r.status_code == 200, r.text
    assert decode_jwt_unverified(r.json()["key_attestation"])[1]["key_storage"] == ["iso_18045_high"]
