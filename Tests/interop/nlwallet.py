"""An independent NL wallet (issue 21), written from docs/wallet-provider.md ("NL accounts") with
`cryptography` and `joserfc`, not from the server's code: the PIN key derivation, registration
with a PIN key, instruction challenges, instructions signed by the PIN key and the hardware key,
and the provider's result JWTs checked against its x5c and CA. Reused by the PIN recovery, renewal
and transfer tests."""
from __future__ import annotations

import base64
import json
import os
import time
from dataclasses import dataclass, field

import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, utils
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from joserfc.jwk import ECKey

from walletlib import b64url, decode_jwt_unverified, sign_jwt, verify_es256

TIMEOUT = 30
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
PIN_INFO = b"trustbed pin key v1"
INSTRUCTION_TYPE = "wp-instruction+jwt"
RESULT_TYPE = "wp-instruction-result+jwt"


def derive_pin_key(pin: str, salt: bytes) -> ec.EllipticCurvePrivateKey:
    """docs/wallet-provider.md, "The PIN key": HKDF-SHA256 over the PIN, retried with a counter
    byte until the output is a valid P-256 scalar."""
    for i in range(256):
        okm = HKDF(hashes.SHA256(), 32, salt, PIN_INFO + bytes([i])).derive(pin.encode())
        d = int.from_bytes(okm, "big")
        if 0 < d < P256_ORDER:
            return ec.derive_private_key(d, ec.SECP256R1())
    raise ValueError("no PIN key")


def ec_jwk(key: ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey, private: bool = False) -> dict:
    public = key.public_key() if isinstance(key, ec.EllipticCurvePrivateKey) else key
    n = public.public_numbers()
    jwk = {"kty": "EC", "crv": "P-256", "x": b64url(n.x.to_bytes(32, "big")), "y": b64url(n.y.to_bytes(32, "big"))}
    if private:
        jwk["d"] = b64url(key.private_numbers().private_value.to_bytes(32, "big"))
    return jwk


def joserfc_key(key: ec.EllipticCurvePrivateKey) -> ECKey:
    return ECKey.import_key(ec_jwk(key, private=True))


def raw_signature(key: ec.EllipticCurvePrivateKey, data: bytes) -> bytes:
    r, s = utils.decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def public_from_jwk(jwk: dict) -> ec.EllipticCurvePublicKey:
    x = int.from_bytes(base64.urlsafe_b64decode(jwk["x"] + "=="), "big")
    y = int.from_bytes(base64.urlsafe_b64decode(jwk["y"] + "=="), "big")
    return ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()


@dataclass
class NLWallet:
    """One instance of an NL account: its hardware key and tag, and the PIN it was registered with."""
    provider: str
    pin: str
    tag: str = field(default_factory=lambda: "nl-" + b64url(os.urandom(9)))
    hardware_key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    salt: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def pin_key(self) -> ec.EllipticCurvePrivateKey:
        return derive_pin_key(self.pin, self.salt)

    def register(self, *, pin_public_key: dict | None = None) -> requests.Response:
        """GET /nonce → POST /dev/key-attestation → POST /wallet-instance with pin_public_key."""
        nonce = requests.get(self.provider + "/nonce", timeout=TIMEOUT).json()["nonce"]
        ka = requests.post(self.provider + "/dev/key-attestation", json={
            "jwk": ec_jwk(self.hardware_key), "hardware_key_tag": self.tag, "nonce": nonce}, timeout=TIMEOUT)
        assert ka.status_code == 200, ka.text
        return requests.post(self.provider + "/wallet-instance", json={
            "challenge": nonce, "key_attestation": ka.json()["key_attestation"], "hardware_key_tag": self.tag,
            "pin_public_key": pin_public_key or ec_jwk(self.pin_key)}, timeout=TIMEOUT)

    def challenge(self, instance: str | None = None) -> str:
        r = requests.post(self.provider + "/instructions/challenge", json={"instance": instance or self.tag}, timeout=TIMEOUT)
        assert r.status_code == 200, r.text
        assert r.headers.get("Cache-Control") == "no-store", r.headers
        return r.json()["challenge"]

    def instruction_body(self, challenge: str, params: dict | None = None, *, signer: ec.EllipticCurvePrivateKey | None = None,
                         hardware_key: ec.EllipticCurvePrivateKey | None = None, iss: str | None = None, aud: str | None = None,
                         iat: int | None = None, der: bool = False) -> dict:
        """The instruction JWT (typ wp-instruction+jwt, by the PIN key or `signer`) and the hardware
        key's ES256 signature over its ASCII bytes (raw r||s, or DER with `der`)."""
        claims = {"iss": iss or self.tag, "aud": aud or self.provider, "challenge": challenge,
                  "iat": int(time.time()) if iat is None else iat, "params": params or {}}
        instruction = sign_jwt({"alg": "ES256", "typ": INSTRUCTION_TYPE}, claims, joserfc_key(signer or self.pin_key))
        hw = hardware_key or self.hardware_key
        signature = (hw.sign(instruction.encode(), ec.ECDSA(hashes.SHA256())) if der
                     else raw_signature(hw, instruction.encode()))
        return {"instruction": instruction, "hardware_signature": b64url(signature)}

    def send(self, name: str, body: dict) -> requests.Response:
        return requests.post(f"{self.provider}/instructions/{name}", json=body, timeout=TIMEOUT)

    def instruct(self, name: str, params: dict | None = None, **kwargs) -> requests.Response:
        """Challenge, then the instruction; the raw response."""
        return self.send(name, self.instruction_body(self.challenge(), params, **kwargs))

    def result(self, response: requests.Response, name: str | None = None) -> dict:
        """The `result` of a 200 answer, its JWT verified against its x5c leaf, which must be
        issued by the provider's CA."""
        assert response.status_code == 200, (response.status_code, response.text)
        assert response.headers.get("Cache-Control") == "no-store"
        jwt = response.json()["result"]
        header, claims = decode_jwt_unverified(jwt)
        assert header["typ"] == RESULT_TYPE and header["alg"] == "ES256", header
        leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
        verify_es256(jwt, leaf.public_key())
        leaf.verify_directly_issued_by(self.ca())
        assert claims["iss"] == self.provider and claims["aud"] == self.tag, claims
        if name:
            assert claims["instruction"] == name, claims
        return claims["result"]

    def ca(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(requests.get(self.provider + "/ca.pem", timeout=TIMEOUT).content)

    def run(self, name: str, params: dict | None = None, **kwargs) -> dict:
        return self.result(self.instruct(name, params, **kwargs), name)


def error_of(response: requests.Response, status: int, code: str) -> dict:
    """A JSON error with `no-store`, the status and code expected."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers.get("Cache-Control") == "no-store", response.headers
    assert response.headers.get("Content-Type", "").startswith("application/json")
    body = response.json()
    assert body["error"] == code, body
    assert isinstance(body.get("error_description"), str)
    return body


def new_nl_wallet(provider: str, pin: str = "123456") -> NLWallet:
    wallet = NLWallet(provider, pin)
    r = wallet.register()
    assert r.status_code == 204, r.text
    return wallet


# ---------------------------------------------------------------------------- PIDs and disclosures

PID_SD_JWT = "urn:eudi:pid:1"


def pid_for_held_keys(server, wallet: NLWallet, *, persona_index: int = 0, issuer_name: str = "pid-provider",
                      count: int = 1, extra_params: dict | None = None) -> tuple[str, dict]:
    """A PID (SD-JWT VC) issued by a PID Provider to keys the Wallet Provider holds: admin offer
    → pre-authorized token → c_nonce → `create_proofs` → credential request with those proofs.
    Returns the credential and the `create_proofs` result."""
    from walletlib import Wallet, admin_offer, persona
    issuer = server.id(issuer_name)
    answer = admin_offer(issuer, server.admin_token, persona(server, persona_index)["id"], [PID_SD_JWT])
    holder = Wallet(issuer)
    token = holder.pre_authorized_token(holder.fetch_offer(answer))["access_token"]
    made = wallet.run("create_proofs", {"aud": issuer, "nonce": holder.nonce(), "count": count, **(extra_params or {})})
    r = holder.credential_request(token, {"credential_configuration_id": PID_SD_JWT, "proofs": {"jwt": made["proofs"]}})
    assert r.status_code == 200, r.text
    return r.json()["credentials"][0]["credential"], made


def disclosure_name(disclosure: str) -> str | None:
    decoded = json.loads(base64.urlsafe_b64decode(disclosure + "=" * (-len(disclosure) % 4)))
    return decoded[1] if len(decoded) == 3 else None


def present(credential: str, names: set[str]) -> str:
    """RFC 9901 §5.2: the issuer JWT and the disclosures of the named top-level claims, no KB-JWT."""
    parts = credential.split("~")
    kept = [d for d in parts[1:] if d and disclosure_name(d) in names]
    return "~".join([parts[0], *kept]) + "~"


def with_key_binding(presentation: str, key: ec.EllipticCurvePrivateKey, audience: str, nonce: str) -> str:
    """Appends a KB-JWT (RFC 9901 §4.3): typ kb+jwt, aud, nonce, iat, sd_hash."""
    digest = hashes.Hash(hashes.SHA256())
    digest.update(presentation.encode())
    claims = {"aud": audience, "nonce": nonce, "iat": int(time.time()), "sd_hash": b64url(digest.finalize())}
    return presentation + sign_jwt({"alg": "ES256", "typ": "kb+jwt"}, claims, joserfc_key(key))
