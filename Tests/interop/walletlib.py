"""A small OpenID4VCI 1.0 (Final) test wallet, written from the specifications, for the PID
Provider's interop tests, and independent checks of what it receives.

The wallet side: RFC 7636 PKCE (S256), RFC 9449 DPoP proofs (with the `use_dpop_nonce`
retry, at the token endpoint and at the credential endpoint), RFC 9126 PAR, the OpenID4VCI
key proof (`openid4vci-proof+jwt`), and OAuth 2.0 Attestation-Based Client Authentication
(`OAuth-Client-Attestation` signed by a wallet provider, `OAuth-Client-Attestation-PoP` signed
by the instance key).  Signing is joserfc; nothing here comes from the Swift code.

The checking side: SD-JWT VC with the `sd-jwt` reference implementation (issuer signature
through the x5c leaf, disclosures, a key-binding presentation checked by its verifier),
mdoc with `pymdoccbor` and `pycose`, Token Status Lists with `token-status-list`.
Assertion messages read as bug reports: they say what was expected and what came back.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import cbor2
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils
from joserfc import jws
from joserfc.jwk import ECKey

from fedlib import b64url_decode, describe

HTTP_TIMEOUT = 15
PRE_AUTH_GRANT = "urn:ietf:params:oauth:grant-type:pre-authorized_code"


# ---------------------------------------------------------------------------- encoding


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def now() -> int:
    return int(time.time())


def new_key() -> ECKey:
    return ECKey.generate_key("P-256")


def public_jwk(key: ECKey) -> dict:
    return key.as_dict(private=False)


def sign_jwt(header: dict, claims: dict | bytes | str, key: ECKey) -> str:
    """A compact JWS over `claims` (JSON-encoded unless already bytes/str) with `header` as given."""
    payload = claims if isinstance(claims, (bytes, str)) else json.dumps(claims, separators=(",", ":"))
    if isinstance(payload, str):
        payload = payload.encode()
    # Not strict about header names: key proofs carry `key_attestation` (OpenID4VCI Appendix F.1).
    return jws.serialize_compact(dict(header), payload, key, algorithms=[header.get("alg", "ES256")],
                                 registry=jws.JWSRegistry(strict_check_header=False))


def decode_jwt_unverified(token: str) -> tuple[dict, dict]:
    parts = token.split(".")
    assert len(parts) == 3, f"expected a compact JWS, got {token[:80]!r}"
    return json.loads(b64url_decode(parts[0])), json.loads(b64url_decode(parts[1]))


def verify_es256(token: str, public_key: ec.EllipticCurvePublicKey) -> None:
    """Verifies a compact ES256 JWS with `cryptography` (raw r||s as RFC 7518 §3.4 says)."""
    signing_input, _, sig = token.rpartition(".")
    raw = b64url_decode(sig)
    assert len(raw) == 64, f"ES256 signature must be 64 bytes (r||s), got {len(raw)}"
    der = utils.encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public_key.verify(der, signing_input.encode(), ec.ECDSA(hashes.SHA256()))


def jwk_equal(a: dict, b: dict) -> bool:
    return all(a.get(k) == b.get(k) for k in ("kty", "crv", "x", "y"))


def pkce_pair() -> tuple[str, str]:
    """RFC 7636 §4.1–4.2: a 43-character verifier and its S256 challenge."""
    verifier = b64url(secrets.token_bytes(32))
    challenge = b64url(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge


def recovery_code(secret: bytes, personal_administrative_number: str) -> str:
    """Issue item 9: lowercase hex of HMAC-SHA256(secret, personal_administrative_number)."""
    return hmac.new(secret, personal_administrative_number.encode(), hashlib.sha256).hexdigest()


# ---------------------------------------------------------------------------- proofs


def dpop_proof(key: ECKey, method: str, url: str, *, access_token: str | None = None, nonce: str | None = None,
               jti: str | None = None, iat: int | None = None, typ: str = "dpop+jwt", extra: dict | None = None) -> str:
    """RFC 9449 §4.2: header typ dpop+jwt, alg, jwk (public); claims jti, htm, htu (no query or
    fragment), iat, ath (base64url SHA-256 of the access token) and the server's nonce."""
    parts = urlsplit(url)
    htu = f"{parts.scheme}://{parts.netloc}{parts.path}"
    claims: dict[str, Any] = {"jti": jti or secrets.token_urlsafe(16), "htm": method, "htu": htu, "iat": iat or now()}
    if access_token is not None:
        claims["ath"] = b64url(hashlib.sha256(access_token.encode()).digest())
    if nonce is not None:
        claims["nonce"] = nonce
    claims.update(extra or {})
    return sign_jwt({"typ": typ, "alg": "ES256", "jwk": public_jwk(key)}, claims, key)


def key_proof(key: ECKey, audience: str, nonce: str | None, *, client_id: str | None = None, iat: int | None = None,
              header: dict | None = None, extra: dict | None = None) -> str:
    """OpenID4VCI 1.0 Appendix F.1: typ openid4vci-proof+jwt, alg, jwk; aud = the credential
    issuer, iat, nonce = c_nonce, iss = client_id (omitted for anonymous pre-authorized access)."""
    h = {"typ": "openid4vci-proof+jwt", "alg": "ES256", "jwk": public_jwk(key)}
    h.update(header or {})
    claims: dict[str, Any] = {"aud": audience, "iat": iat or now()}
    if nonce is not None:
        claims["nonce"] = nonce
    if client_id is not None:
        claims["iss"] = client_id
    claims.update(extra or {})
    return sign_jwt(h, claims, key)


@dataclass
class WalletProvider:
    """A wallet provider (its federation entity ID and signing key) that vouches for clients."""
    entity_id: str
    key: ECKey = field(default_factory=new_key)

    def entity_file(self, authority: str = "intermediate") -> dict:
        """An entity file for Trustbed's Entities/ folder: a leaf under `authority` whose
        `wallet_provider` metadata publishes the attestation signing key inline."""
        jwk = dict(public_jwk(self.key), kid=self.key.thumbprint(), use="sig", alg="ES256")
        return {
            "authority_hints": [authority],
            "metadata": {
                "federation_entity": {"organization_name": "Interop Test Wallet Provider"},
                "wallet_provider": {"jwks": {"keys": [jwk]}, "wallet_attestation_signing_alg_values_supported": ["ES256"]},
            },
        }

    def attestation(self, client_id: str, instance_key: ECKey, *, lifetime: int = 3600, extra: dict | None = None,
                    header: dict | None = None) -> str:
        """draft-ietf-oauth-attestation-based-client-auth §5.1: typ oauth-client-attestation+jwt;
        iss = the attester, sub = client_id, exp, cnf.jwk = the instance key."""
        h = {"typ": "oauth-client-attestation+jwt", "alg": "ES256", "kid": self.key.thumbprint()}
        h.update(header or {})
        claims = {"iss": self.entity_id, "sub": client_id, "iat": now(), "exp": now() + lifetime,
                  "cnf": {"jwk": public_jwk(instance_key)}}
        claims.update(extra or {})
        return sign_jwt(h, claims, self.key)


@dataclass
class ClientInstance:
    """A wallet instance: client_id, its instance key and its wallet attestation."""
    client_id: str
    key: ECKey
    attestation: str

    def pop(self, audience: str, *, jti: str | None = None, iat: int | None = None, challenge: str | None = None) -> str:
        """§5.2: typ oauth-client-attestation-pop+jwt; iss = client_id, aud = the AS issuer, jti, iat."""
        claims: dict[str, Any] = {"iss": self.client_id, "aud": audience, "jti": jti or secrets.token_urlsafe(16),
                                  "iat": iat or now()}
        if challenge is not None:
            claims["challenge"] = challenge
        return sign_jwt({"typ": "oauth-client-attestation-pop+jwt", "alg": "ES256"}, claims, self.key)

    def headers(self, audience: str) -> dict[str, str]:
        return {"OAuth-Client-Attestation": self.attestation, "OAuth-Client-Attestation-PoP": self.pop(audience)}


class KeyAttester:
    """A wallet provider that issues key attestations (OpenID4VCI 1.0 Appendix D.1) under an
    X.509 root of its own, built with `cryptography`: root (CA) → leaf (the signing key); the
    attestation carries the leaf (and the root unless told otherwise) in `x5c`."""

    def __init__(self, name: str = "Interop Key Attester"):
        import datetime
        from cryptography.x509.oid import NameOID
        self.root_key = ec.generate_private_key(ec.SECP256R1())
        self.key = new_key()
        leaf_public = self.key.private_key.public_key()
        start = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
        end = start + datetime.timedelta(days=30)

        def build(subject: str, public_key, issuer_name: str, issuer_key, ca: bool, issuer_ski=None):
            b = (x509.CertificateBuilder()
                 .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                 .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_name)]))
                 .public_key(public_key).serial_number(x509.random_serial_number())
                 .not_valid_before(start).not_valid_after(end)
                 .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), critical=True)
                 .add_extension(x509.KeyUsage(digital_signature=not ca, content_commitment=False, key_encipherment=False,
                                              data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                                              encipher_only=False, decipher_only=False), critical=True)
                 .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False))
            if issuer_ski is not None:
                b = b.add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(issuer_ski), critical=False)
            return b.sign(issuer_key, hashes.SHA256())

        self.root = build(name + " Root", self.root_key.public_key(), name + " Root", self.root_key, True)
        root_ski = self.root.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
        self.leaf = build(name, leaf_public, name + " Root", self.root_key, False, root_ski)

    def root_pem(self) -> str:
        return self.root.public_bytes(serialization.Encoding.PEM).decode()

    def x5c(self, with_root: bool = False) -> list[str]:
        chain = [self.leaf] + ([self.root] if with_root else [])
        return [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode() for c in chain]

    def attestation(self, keys: list[ECKey], *, nonce: str | None = None, key_storage: list[str] | None = None,
                    user_authentication: list[str] | None = None, iss: str | None = None, lifetime: int | None = 3600,
                    iat: int | None = None, header: dict | None = None, extra: dict | None = None) -> str:
        """typ key-attestation+jwt, ES256, x5c; iat, exp, attested_keys, key_storage,
        user_authentication, nonce (the issuer's c_nonce) as given."""
        h = {"typ": "key-attestation+jwt", "alg": "ES256", "x5c": self.x5c()}
        h.update(header or {})
        claims: dict[str, Any] = {"iat": iat if iat is not None else now(), "attested_keys": [public_jwk(k) for k in keys]}
        if lifetime is not None:
            claims["exp"] = claims["iat"] + lifetime
        for name, value in (("nonce", nonce), ("key_storage", key_storage), ("user_authentication", user_authentication),
                            ("iss", iss)):
            if value is not None:
                claims[name] = value
        claims.update(extra or {})
        # A None in `header` or `extra` leaves that member out (a test of its absence).
        return sign_jwt({k: v for k, v in h.items() if v is not None}, {k: v for k, v in claims.items() if v is not None},
                        self.key)


def attested_proof(key: ECKey, audience: str, nonce: str | None, key_attestation: str, *, index: int = 0,
                   client_id: str | None = None) -> str:
    """The EUDI wallets' jwt proof (Appendix F.1): `kid` = the key's index in the key
    attestation's attested_keys, `key_attestation` in the header, no `jwk`, `iss` only if given."""
    claims: dict[str, Any] = {"aud": audience, "iat": now()}
    if nonce is not None:
        claims["nonce"] = nonce
    if client_id is not None:
        claims["iss"] = client_id
    header = {"typ": "openid4vci-proof+jwt", "alg": "ES256", "kid": str(index), "key_attestation": key_attestation}
    return sign_jwt(header, claims, key)


# ---------------------------------------------------------------------------- the wallet


class OAuthError(AssertionError):
    def __init__(self, response: requests.Response, what: str):
        self.response = response
        super().__init__(f"{what} failed: {describe(response)}")


class Wallet:
    """One wallet talking to one credential issuer (which is its own authorization server)."""

    def __init__(self, issuer: str, *, use_dpop: bool = True, client: ClientInstance | None = None):
        self.issuer = issuer
        self.use_dpop = use_dpop
        self.client = client
        self.dpop_key = new_key()
        self.http = requests.Session()
        # RFC 9449 §8 and §9: the AS and the RS hand out their nonces separately.
        self.as_nonce: str | None = None
        self.rs_nonce: str | None = None
        self._issuer_md: dict | None = None
        self._as_md: dict | None = None

    # -- metadata

    @property
    def issuer_metadata(self) -> dict:
        if self._issuer_md is None:
            r = self.http.get(self.issuer + "/.well-known/openid-credential-issuer", timeout=HTTP_TIMEOUT)
            assert r.status_code == 200, describe(r)
            self._issuer_md = r.json()
        return self._issuer_md

    @property
    def as_metadata(self) -> dict:
        if self._as_md is None:
            r = self.http.get(self.issuer + "/.well-known/oauth-authorization-server", timeout=HTTP_TIMEOUT)
            assert r.status_code == 200, describe(r)
            self._as_md = r.json()
        return self._as_md

    def endpoint(self, name: str) -> str:
        md = self.as_metadata if name in ("token_endpoint", "authorization_endpoint",
                                          "pushed_authorization_request_endpoint") else self.issuer_metadata
        return md[name]

    # -- offers

    def fetch_offer(self, offer: dict) -> dict:
        """Resolves an admin answer, an offer URL or a credential_offer_uri to the offer object
        (OpenID4VCI §4.1.3: GET of credential_offer_uri answers application/json)."""
        if isinstance(offer, dict) and "credential_offer_uri" in offer:
            uri = offer["credential_offer_uri"]
        elif isinstance(offer, str) and offer.startswith("openid-credential-offer://"):
            q = parse_qs(urlsplit(offer).query)
            if "credential_offer" in q:
                return json.loads(q["credential_offer"][0])
            uri = q["credential_offer_uri"][0]
        else:
            uri = offer
        r = self.http.get(uri, timeout=HTTP_TIMEOUT)
        assert r.status_code == 200, f"credential_offer_uri: {describe(r)}"
        assert r.headers.get("Content-Type", "").split(";")[0] == "application/json", describe(r)
        return r.json()

    # -- DPoP plumbing

    def _remember_nonce(self, r: requests.Response, server: str) -> None:
        nonce = r.headers.get("DPoP-Nonce")
        if nonce:
            setattr(self, f"{server}_nonce", nonce)

    @staticmethod
    def _asks_for_nonce(r: requests.Response) -> bool:
        if r.status_code == 400:
            try:
                return r.json().get("error") == "use_dpop_nonce"
            except ValueError:
                return False
        return r.status_code == 401 and 'error="use_dpop_nonce"' in r.headers.get("WWW-Authenticate", "")

    def _send(self, method: str, url: str, server: str, *, access_token: str | None = None, headers: dict | None = None,
              client_auth: bool = False, **kw) -> requests.Response:
        """Sends with a fresh DPoP proof (and fresh attestation PoP); on `use_dpop_nonce` it
        retries once with the nonce the server just gave (RFC 9449 §8.1, §9)."""
        for attempt in range(2):
            h = dict(headers or {})
            if self.use_dpop:
                h["DPoP"] = dpop_proof(self.dpop_key, method, url, access_token=access_token,
                                       nonce=getattr(self, f"{server}_nonce"))
            if access_token is not None:
                h["Authorization"] = f"{'DPoP' if self.use_dpop else 'Bearer'} {access_token}"
            if client_auth and self.client is not None:
                h.update(self.client.headers(self.issuer))
            r = self.http.request(method, url, headers=h, timeout=HTTP_TIMEOUT, **kw)
            self._remember_nonce(r, server)
            if attempt == 0 and self.use_dpop and self._asks_for_nonce(r):
                assert r.headers.get("DPoP-Nonce"), f"use_dpop_nonce without a DPoP-Nonce header: {describe(r)}"
                continue
            return r
        return r

    # -- token endpoint

    def token_request(self, form: dict) -> requests.Response:
        return self._send("POST", self.endpoint("token_endpoint"), "as", data=form, client_auth=True)

    def token(self, form: dict) -> dict:
        r = self.token_request(form)
        if r.status_code != 200:
            raise OAuthError(r, "token request")
        body = r.json()
        assert r.headers.get("Cache-Control") == "no-store", f"token response must be no-store (RFC 6749 §5.1): {describe(r)}"
        expected = "DPoP" if self.use_dpop else "Bearer"
        assert body.get("token_type", "").lower() == expected.lower(), f"token_type must be {expected}: {body}"
        assert isinstance(body.get("access_token"), str) and body["access_token"], body
        return body

    def pre_authorized_token(self, offer: dict, tx_code: str | None = None, extra: dict | None = None) -> dict:
        grant = offer["grants"][PRE_AUTH_GRANT]
        form = {"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": grant["pre-authorized_code"]}
        if tx_code is not None:
            form["tx_code"] = tx_code
        if self.client is not None:
            form["client_id"] = self.client.client_id
        form.update(extra or {})
        return self.token(form)

    # -- authorization code flow

    def par(self, *, redirect_uri: str, code_challenge: str, state: str, authorization_details: list | None = None,
            scope: str | None = None, issuer_state: str | None = None, extra: dict | None = None) -> requests.Response:
        """RFC 9126 §2.1 with the client attestation headers (the same client authentication as
        the token endpoint)."""
        assert self.client is not None, "PAR needs a client"
        form = {"response_type": "code", "client_id": self.client.client_id, "redirect_uri": redirect_uri,
                "code_challenge": code_challenge, "code_challenge_method": "S256", "state": state}
        if authorization_details is not None:
            form["authorization_details"] = json.dumps(authorization_details)
        if scope is not None:
            form["scope"] = scope
        if issuer_state is not None:
            form["issuer_state"] = issuer_state
        form.update(extra or {})
        return self._send("POST", self.endpoint("pushed_authorization_request_endpoint"), "as", data=form, client_auth=True)

    def authorize_url(self, request_uri: str, **extra: str) -> str:
        q = {"client_id": self.client.client_id, "request_uri": request_uri, **extra}
        return self.endpoint("authorization_endpoint") + "?" + urlencode(q)

    def authorization_code_flow(self, *, persona: str, redirect_uri: str, authorization_details: list | None = None,
                                scope: str | None = None) -> tuple[dict, dict]:
        """PAR → /authorize with login_hint (no page) → redirect with code, state, iss (RFC 9207)
        → token.  Returns (token response, redirect parameters)."""
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(12)
        r = self.par(redirect_uri=redirect_uri, code_challenge=challenge, state=state,
                     authorization_details=authorization_details, scope=scope)
        assert r.status_code == 201, f"PAR must answer 201 (RFC 9126 §2.2): {describe(r)}"
        par = r.json()
        assert par["request_uri"].startswith("urn:ietf:params:oauth:request_uri:"), par
        assert isinstance(par.get("expires_in"), int) and par["expires_in"] > 0, par
        r = self.http.get(self.authorize_url(par["request_uri"], login_hint=persona), allow_redirects=False, timeout=HTTP_TIMEOUT)
        assert r.status_code in (302, 303), f"authorize with login_hint must redirect: {describe(r)}"
        location = r.headers["Location"]
        assert location.startswith(redirect_uri + "?"), f"redirect to {location!r}, expected {redirect_uri}?..."
        params = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        assert params.get("state") == state, f"state must come back unchanged: {params}"
        assert params.get("iss") == self.issuer, f"RFC 9207 iss must be the issuer: {params}"
        assert params.get("code"), params
        form = {"grant_type": "authorization_code", "code": params["code"], "redirect_uri": redirect_uri,
                "code_verifier": verifier, "client_id": self.client.client_id}
        return self.token(form), params

    # -- credential issuer

    def nonce(self) -> str:
        r = self.http.post(self.endpoint("nonce_endpoint"), timeout=HTTP_TIMEOUT)
        assert r.status_code == 200, f"nonce endpoint: {describe(r)}"
        assert r.headers.get("Cache-Control") == "no-store", f"nonce response must be no-store (§7.2): {describe(r)}"
        c_nonce = r.json().get("c_nonce")
        assert isinstance(c_nonce, str) and c_nonce, r.text
        return c_nonce

    def credential_request(self, access_token: str, body: dict | bytes | str, *, content_type: str = "application/json",
                           endpoint: str = "credential_endpoint") -> requests.Response:
        data = json.dumps(body) if isinstance(body, dict) else body
        return self._send("POST", self.endpoint(endpoint), "rs", access_token=access_token,
                          headers={"Content-Type": content_type}, data=data)

    def credential(self, access_token: str, *, configuration_id: str | None = None, identifier: str | None = None,
                   keys: list[ECKey] | None = None, anonymous: bool = False) -> tuple[dict, list[ECKey]]:
        """Gets a c_nonce and asks for one credential per key (§8.2, proofs.jwt).  Returns the
        response body and the proof keys, in order."""
        keys = keys or [new_key()]
        c_nonce = self.nonce()
        client_id = None if anonymous or self.client is None else self.client.client_id
        proofs = [key_proof(k, self.issuer, c_nonce, client_id=client_id) for k in keys]
        body: dict[str, Any] = {"proofs": {"jwt": proofs}}
        if identifier is not None:
            body["credential_identifier"] = identifier
        else:
            body["credential_configuration_id"] = configuration_id
        r = self.credential_request(access_token, body)
        if r.status_code != 200:
            raise OAuthError(r, "credential request")
        assert r.headers.get("Cache-Control") == "no-store", f"credential response must be no-store: {describe(r)}"
        out = r.json()
        assert isinstance(out.get("credentials"), list) and len(out["credentials"]) == len(keys), \
            f"one credential per proof expected ({len(keys)}): {out}"
        return out, keys


# ---------------------------------------------------------------------------- admin API


def admin_offer(issuer: str, token: str, persona: str, configuration_ids: list[str], *, grant: str = "pre-authorized_code",
                tx_code: bool = False) -> dict:
    r = requests.post(issuer + "/admin/offers", headers={"Authorization": f"Bearer {token}"}, timeout=HTTP_TIMEOUT,
                      json={"persona": persona, "credential_configuration_ids": configuration_ids, "grant": grant,
                            "tx_code": tx_code})
    assert r.status_code == 201, f"admin offer: {describe(r)}"
    return r.json()


def admin_credentials(issuer: str, token: str, persona: str) -> list[dict]:
    r = requests.get(issuer + "/admin/credentials", params={"persona": persona}, headers={"Authorization": f"Bearer {token}"},
                     timeout=HTTP_TIMEOUT)
    assert r.status_code == 200, f"admin credentials: {describe(r)}"
    return r.json()["credentials"]


def admin_set_status(issuer: str, token: str, credential_id: str, status: str) -> requests.Response:
    return requests.post(f"{issuer}/admin/credentials/{credential_id}/status", json={"status": status},
                         headers={"Authorization": f"Bearer {token}"}, timeout=HTTP_TIMEOUT)


# ---------------------------------------------------------------------------- SD-JWT VC checks


def load_cert_b64(der_b64: str) -> x509.Certificate:
    return x509.load_der_x509_certificate(base64.b64decode(der_b64))


def split_sd_jwt(sd_jwt: str) -> tuple[str, list[str], str]:
    parts = sd_jwt.split("~")
    assert len(parts) >= 2, f"an SD-JWT has at least one '~': {sd_jwt[:80]!r}"
    return parts[0], parts[1:-1], parts[-1]


def decode_disclosure(d: str) -> list:
    value = json.loads(b64url_decode(d))
    assert isinstance(value, list) and len(value) in (2, 3), f"a disclosure is a 2- or 3-element array: {value!r}"
    return value


def sd_digest(disclosure: str) -> str:
    return b64url(hashlib.sha256(disclosure.encode("ascii")).digest())


def jwcrypto_key_from_cert(cert: x509.Certificate):
    from jwcrypto.jwk import JWK
    return JWK.from_pem(cert.public_key().public_bytes(serialization.Encoding.PEM,
                                                       serialization.PublicFormat.SubjectPublicKeyInfo))


def jwcrypto_private(key: ECKey):
    from jwcrypto.jwk import JWK
    return JWK(**key.as_dict(private=True))


def verify_sd_jwt_vc(credential: str, *, issuer: str, iaca: x509.Certificate, holder_key: ECKey, vct: str) -> dict:
    """Checks an issued SD-JWT VC with the `sd-jwt` reference implementation and returns
    {"header", "payload" (as signed), "claims" (all disclosed), "disclosures" (decoded)}."""
    from sd_jwt.verifier import SDJWTVerifier

    jwt_part, disclosures, kb = split_sd_jwt(credential)
    assert kb == "", "an issued SD-JWT ends with '~' and carries no key binding JWT (RFC 9901 §4)"
    header, payload = decode_jwt_unverified(jwt_part)
    assert header.get("typ") == "dc+sd-jwt", f"SD-JWT VC §3.2.1: typ must be dc+sd-jwt: {header}"
    assert header.get("alg") == "ES256", header
    x5c = header.get("x5c")
    assert isinstance(x5c, list) and x5c, f"x5c missing: {header}"
    leaf = load_cert_b64(x5c[0])
    certs = [load_cert_b64(c) for c in x5c]
    assert all(c.subject != c.issuer for c in certs), "x5c must not contain the (self-signed) IACA root (HAIP)"
    certs[-1].verify_directly_issued_by(iaca)
    for child, parent in zip(certs, certs[1:]):
        child.verify_directly_issued_by(parent)

    seen_keys = []

    def issuer_key(iss, hdr):
        seen_keys.append((iss, hdr.get("typ")))
        return jwcrypto_key_from_cert(leaf)

    verifier = SDJWTVerifier(credential, issuer_key)
    claims = verifier.get_verified_payload()
    assert seen_keys and seen_keys[0][0] == issuer, f"iss must be the credential issuer: {seen_keys}"
    t = now()
    assert payload["iss"] == issuer
    assert payload.get("vct") == vct, f"vct: {payload.get('vct')!r}, expected {vct!r}"
    assert payload.get("_sd_alg") == "sha-256", f"_sd_alg: {payload.get('_sd_alg')!r}"
    assert isinstance(payload.get("iat"), int) and abs(payload["iat"] - t) < 300, payload.get("iat")
    assert isinstance(payload.get("exp"), int) and payload["exp"] > t, payload.get("exp")
    if "nbf" in payload:
        assert payload["nbf"] <= t + 60, payload["nbf"]
    assert jwk_equal(payload["cnf"]["jwk"], public_jwk(holder_key)), f"cnf.jwk must be the proof key: {payload['cnf']}"
    assert "d" not in payload["cnf"]["jwk"]
    sl = payload.get("status", {}).get("status_list")
    assert isinstance(sl, dict) and isinstance(sl.get("idx"), int) and sl.get("uri", "").startswith(issuer), \
        f"status.status_list {{idx, uri}} expected: {payload.get('status')}"
    decoded = [decode_disclosure(d) for d in disclosures]
    # RFC 9901 §7.1 step 3.5: every disclosure is referenced by exactly one digest (the reference
    # verifier silently ignores a stray one, so this is checked here).
    digests = [x for v in find_values(payload, "_sd") for x in v] + find_values(payload, "...")
    for d in decoded:
        digests += [x for v in find_values(d[-1], "_sd") for x in v] + find_values(d[-1], "...")
    for raw, d in zip(disclosures, decoded):
        assert digests.count(sd_digest(raw)) == 1, f"disclosure {d[:2]} is not referenced by exactly one digest"
    # Key binding: present with the holder key; the reference verifier checks KB-JWT and sd_hash.
    present_and_verify(credential, holder_key, leaf, {k: True for k in claims if k in _top_level_sd(decoded)})
    return {"header": header, "payload": payload, "claims": claims, "disclosures": decoded, "raw_disclosures": disclosures,
            "leaf": leaf}


def _top_level_sd(decoded: list[list]) -> set[str]:
    return {d[1] for d in decoded if len(d) == 3}


def present_and_verify(credential: str, holder_key: ECKey, leaf: x509.Certificate, to_disclose: Any) -> dict:
    """RFC 9901 §4.3 with the reference holder and verifier: a presentation with a KB-JWT
    (aud, nonce, sd_hash) signed by the holder key; returns what the verifier sees."""
    from sd_jwt.holder import SDJWTHolder
    from sd_jwt.verifier import SDJWTVerifier

    holder = SDJWTHolder(credential)
    aud, nonce = "https://verifier.example", secrets.token_urlsafe(12)
    holder.create_presentation(to_disclose, nonce=nonce, aud=aud, holder_key=jwcrypto_private(holder_key), sign_alg="ES256")
    verifier = SDJWTVerifier(holder.sd_jwt_presentation, lambda iss, hdr: jwcrypto_key_from_cert(leaf),
                             expected_aud=aud, expected_nonce=nonce)
    return verifier.get_verified_payload()


# ---------------------------------------------------------------------------- mdoc checks


def verify_mdoc(credential: str, *, iaca: x509.Certificate, holder_key: ECKey, doctype: str = "eu.europa.ec.eudi.pid.1") -> dict:
    """Checks a base64url IssuerSigned (OpenID4VCI Appendix A.2.4) with pymdoccbor (the EUDI
    reference library, signature and every digest against the IACA), pycose (COSE_Sign1 with
    the DS key) and cbor2; returns {"mso", "elements" (identifier → value), "items" (decoded),
    "raw"}."""
    from pycose.keys import EC2Key
    from pycose.keys.curves import P256
    from pycose.messages import Sign1Message
    from pymdoccbor.mdoc.verifier import MobileDocument

    assert re.fullmatch(r"[A-Za-z0-9_-]+", credential), "the mdoc credential is base64url without padding"
    raw = b64url_decode(credential)
    issuer_signed = cbor2.loads(raw)
    assert set(issuer_signed) == {"nameSpaces", "issuerAuth"}, f"IssuerSigned keys: {list(issuer_signed)}"
    issuer_auth = issuer_signed["issuerAuth"]
    assert isinstance(issuer_auth, (list, tuple)) and len(issuer_auth) == 4, "issuerAuth is an untagged COSE_Sign1 array"
    protected = cbor2.loads(issuer_auth[0])
    assert protected.get(1) == -7, f"alg must be ES256 (-7) in the protected header: {protected}"
    x5chain = issuer_auth[1].get(33)
    assert x5chain is not None, f"x5chain (label 33) missing from the unprotected header: {issuer_auth[1]}"
    ds = x509.load_der_x509_certificate(x5chain if isinstance(x5chain, bytes) else x5chain[0])
    ds.verify_directly_issued_by(iaca)
    numbers = ds.public_key().public_numbers()
    message = Sign1Message.from_cose_obj(list(issuer_auth), True)
    message.key = EC2Key(crv=P256, x=numbers.x.to_bytes(32, "big"), y=numbers.y.to_bytes(32, "big"))
    assert message.verify_signature(), "pycose: issuerAuth signature does not verify with the DS key"

    mso_tag = cbor2.loads(issuer_auth[2])
    assert isinstance(mso_tag, cbor2.CBORTag) and mso_tag.tag == 24, "the COSE payload is a tag-24 MSO"
    mso = cbor2.loads(mso_tag.value)
    assert mso["version"] == "1.0" and mso["digestAlgorithm"] == "SHA-256", mso
    assert mso["docType"] == doctype, mso["docType"]
    elements: dict[str, Any] = {}
    items: list[dict] = []
    for ns, tagged_items in issuer_signed["nameSpaces"].items():
        for tagged in tagged_items:
            assert isinstance(tagged, cbor2.CBORTag) and tagged.tag == 24, f"IssuerSignedItemBytes must be tag 24 ({ns})"
            item = cbor2.loads(tagged.value)
            assert set(item) == {"digestID", "random", "elementIdentifier", "elementValue"}, item.keys()
            assert len(item["random"]) >= 16, "salts are at least 16 random bytes (ISO 18013-5 §9.1.2.5)"
            digest = hashlib.sha256(cbor2.dumps(tagged)).digest()
            assert mso["valueDigests"][ns][item["digestID"]] == digest, f"digest of {item['elementIdentifier']}"
            elements[item["elementIdentifier"]] = item["elementValue"]
            items.append(dict(item, namespace=ns, raw_value=cbor2.loads(tagged.value)))
    # cbor2 turns tags 1004/100 into dates and 0/1 into datetimes, so the encodings are checked on
    # the bytes: birth_date is a tag-1004 full-date (RFC 8943; ISO 18013-5 §7.2.1).
    birth = [i for i in items if i["elementIdentifier"] == "birth_date"]
    assert birth, f"birth_date missing: {sorted(elements)}"
    full_date = b"\xd9\x03\xec" + cbor2.dumps(birth[0]["elementValue"].isoformat())
    assert any(full_date in t.value for ns in issuer_signed["nameSpaces"].values() for t in ns), \
        "birth_date must be encoded as tag 1004 over a full-date string"
    device_key = mso["deviceKeyInfo"]["deviceKey"]
    hk = public_jwk(holder_key)
    assert device_key[1] == 2 and device_key[-1] == 1, f"deviceKey must be an EC2 P-256 COSE_Key: {device_key}"
    assert device_key[-2] == b64url_decode(hk["x"]) and device_key[-3] == b64url_decode(hk["y"]), "deviceKey must be the proof key"
    validity = mso["validityInfo"]
    assert {"signed", "validFrom", "validUntil"} <= set(validity), validity
    # §9.1.2.4: tdate is tag 0 over "YYYY-MM-DDTHH:MM:SSZ" (no fractions, UTC), 20 characters.
    tdates = re.findall(rb"\xc0\x74(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)", mso_tag.value)
    for k in ("signed", "validFrom", "validUntil"):
        text = validity[k].strftime("%Y-%m-%dT%H:%M:%SZ").encode()
        assert text in tdates, f"validityInfo.{k} must be a tag-0 tdate without fractions: {validity[k]!r}"
    assert validity["validUntil"] > validity["validFrom"]

    document = MobileDocument(docType=doctype, issuerSigned=issuer_signed)
    assert document.verify(trusted_root_certs=[iaca], verify_hashes=True), \
        f"pymdoccbor refuses the document: {document.hash_verification}"
    assert document.hash_verification["verified"] == len(items)
    return {"mso": mso, "elements": elements, "items": items, "raw": raw, "ds": ds}


# ---------------------------------------------------------------------------- status lists


def fetch_status_list(uri: str, *, issuer_leaf: x509.Certificate | None = None) -> tuple[dict, dict]:
    """Token Status List §5: GET the uri (Accept application/statuslist+jwt); typ statuslist+jwt,
    sub = uri, status_list {bits, lst}; the signature checked with the x5c leaf."""
    r = requests.get(uri, headers={"Accept": "application/statuslist+jwt"}, timeout=HTTP_TIMEOUT)
    assert r.status_code == 200, f"status list: {describe(r)}"
    assert r.headers.get("Content-Type", "").split(";")[0] == "application/statuslist+jwt", describe(r)
    token = r.text.strip()
    header, claims = decode_jwt_unverified(token)
    assert header.get("typ") == "statuslist+jwt", f"typ: {header}"
    assert isinstance(header.get("x5c"), list) and header["x5c"], f"the status list names its key by x5c: {header}"
    leaf = load_cert_b64(header["x5c"][0])
    verify_es256(token, leaf.public_key())
    if issuer_leaf is not None:
        assert leaf.issuer == issuer_leaf.issuer, "status list signer is not under the issuer's IACA"
    assert claims.get("sub") == uri, f"sub must equal the status list uri: {claims.get('sub')!r} vs {uri!r}"
    assert isinstance(claims.get("iat"), int) and isinstance(claims.get("exp"), int) and claims["exp"] > now()
    assert isinstance(claims.get("ttl"), int) and claims["ttl"] > 0, claims
    assert claims["status_list"]["bits"] == 2, f"bits must be 2 (suspended needs 0x02): {claims['status_list']}"
    return header, claims


def status_at(claims: dict, idx: int) -> int:
    """Decodes `lst` with the `token-status-list` package (zlib, LSB-first packing)."""
    from token_status_list import BitArray
    sl = claims["status_list"]
    return BitArray.from_b64(sl["bits"], sl["lst"]).get(idx)


def status_at_by_hand(claims: dict, idx: int) -> int:
    """The same read with zlib and the spec's bit order (§4.1), as a second opinion."""
    import zlib
    sl = claims["status_list"]
    data = zlib.decompress(b64url_decode(sl["lst"]))
    bits = sl["bits"]
    per_byte = 8 // bits
    return (data[idx // per_byte] >> ((idx % per_byte) * bits)) & ((1 << bits) - 1)


# ---------------------------------------------------------------------------- servers for the tests


def start_pid_server(workdir, *, label: str = "pid", wallet_provider: WalletProvider | None = None,
                     pid_overrides: dict | None = None):
    """A server of its own (the tests change its state: offers, codes, status lists) from the demo
    entities, plus optionally a test wallet provider entity under `intermediate` and changes to
    `services.pid_provider`.  The wallet provider's entity ID becomes <base>/test-wallet-provider."""
    from harness import TrustbedServer
    server = TrustbedServer(workdir, label=label)
    if pid_overrides:
        path = server.entities / "pid-provider.json"
        doc = json.loads(path.read_text())
        doc["services"]["pid_provider"].update(pid_overrides)
        path.write_text(json.dumps(doc, indent=2))
    if wallet_provider is not None:
        wallet_provider.entity_id = server.id("test-wallet-provider")
        server.write_entities({"test-wallet-provider": wallet_provider.entity_file()})
    return server.start()


def personas(server) -> list[dict]:
    """The demo personas as the server loaded them (Entities/personas/pid.json)."""
    doc = json.loads((server.entities / "pid-provider.json").read_text())["services"]["pid_provider"]["personas"]
    if isinstance(doc, str):
        doc = json.loads((server.entities / doc).read_text())
    return doc


def persona(server, index: int = 0, *, deferred: bool = False) -> dict:
    matching = [p for p in personas(server) if bool(p.get("deferred", False)) == deferred]
    assert len(matching) > index, f"the demo needs at least {index + 1} persona(s) with deferred={deferred}"
    return matching[index]


def recovery_secret(server, entity: str = "pid-provider") -> bytes:
    return bytes.fromhex((server.keys / entity / "issuer" / "recovery-secret").read_text().strip())


def iaca_certificate(issuer: str) -> x509.Certificate:
    r = requests.get(issuer + "/iaca.pem", timeout=HTTP_TIMEOUT)
    assert r.status_code == 200, describe(r)
    return x509.load_pem_x509_certificate(r.content)


def find_values(obj: Any, key: str) -> list:
    """Every value stored under `key` anywhere in a JSON-like structure."""
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == key:
                out.append(v)
            out += find_values(v, key)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            out += find_values(v, key)
    return out
