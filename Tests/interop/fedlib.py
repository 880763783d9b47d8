"""Independent OpenID Federation 1.0 checks for the interop tests.

Everything here uses joserfc / cryptography and the spec text; nothing comes from the
Swift code.  Assertion messages say what was expected and what came back, so a failing
test reads as a bug report.
"""
from __future__ import annotations

import base64
import copy
import json
import time
from typing import Any, Callable, Iterable

import requests
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, KeySet

import oidf_policy

CLOCK_SKEW = 120  # seconds of leeway for iat checks
HTTP_TIMEOUT = 15

EC_TYPE = "application/entity-statement+jwt"
RESOLVE_TYPE = "application/resolve-response+jwt"
TRUST_MARK_TYPE = "application/trust-mark+jwt"
TM_STATUS_TYPE = "application/trust-mark-status-response+jwt"
JWKSET_JWT_TYPE = "application/jwk-set+jwt"

PID_MARK = "https://trustbed.example/trust-marks/pid-provider"
RP_MARK = "https://trustbed.example/trust-marks/certified-relying-party"

# Algorithms we accept on a federation signature; symmetric algorithms and "none" never.
ASYMMETRIC_ALGS = ["ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "RS256", "RS384", "RS512", "EdDSA"]


# ---------------------------------------------------------------------------- basics


def now() -> int:
    return int(time.time())


def b64url_decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def decode_jws(token: str, what: str = "JWS") -> tuple[dict, dict]:
    """Splits a compact JWS and returns (header, claims) without checking the signature."""
    assert isinstance(token, str), f"{what}: expected a compact JWS string, got {type(token).__name__}: {token!r:.200}"
    parts = token.strip().split(".")
    assert len(parts) == 3, f"{what}: compact JWS must have 3 parts, got {len(parts)}: {token[:120]!r}"
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"{what}: header/payload are not base64url JSON ({e}): {token[:120]!r}")
    assert isinstance(header, dict), f"{what}: header is not a JSON object: {header!r}"
    assert isinstance(claims, dict), f"{what}: payload is not a JSON object: {claims!r:.300}"
    return header, claims


def jwks_keys(jwks: Any, what: str) -> list[dict]:
    assert isinstance(jwks, dict) and isinstance(jwks.get("keys"), list), f"{what}: jwks must be {{\"keys\": [...]}}, got {jwks!r:.300}"
    return jwks["keys"]


def thumbprint(jwk: dict) -> str:
    """RFC 7638 thumbprint (SHA-256) computed by joserfc."""
    return ECKey.import_key(jwk).thumbprint() if jwk.get("kty") == "EC" else KeySet.import_key_set({"keys": [jwk]}).keys[0].thumbprint()


def assert_public_jwks(jwks: Any, what: str) -> list[dict]:
    """Every key is a public key with a kid; EC keys carry their RFC 7638 thumbprint as kid."""
    keys = jwks_keys(jwks, what)
    assert keys, f"{what}: jwks has no keys"
    kids = [k.get("kid") for k in keys]
    assert len(set(kids)) == len(kids), f"{what}: duplicate kids in jwks: {kids}"
    for k in keys:
        private = sorted(set(k) & {"d", "p", "q", "dp", "dq", "qi", "k"})
        assert not private, f"{what}: jwks leaks private key members {private} in key {k.get('kid')}"
        assert k.get("kid"), f"{what}: key without kid: {k}"
        assert k.get("kty") in ("EC", "RSA", "OKP"), f"{what}: unexpected kty in {k}"
    return keys


def verify_jws(token: str, jwks: Any, what: str, typ: str | None = None, algs: Iterable[str] = ASYMMETRIC_ALGS) -> tuple[dict, dict]:
    """Verifies a compact JWS with the key named by its kid in jwks; returns (header, claims)."""
    header, claims = decode_jws(token, what)
    algs = list(algs)
    assert header.get("alg") in algs, f"{what}: alg {header.get('alg')!r} not in allowed {algs}"
    if typ is not None:
        assert header.get("typ") == typ, f"{what}: JWS typ must be {typ!r}, got {header.get('typ')!r}"
    kid = header.get("kid")
    assert kid, f"{what}: JWS header has no kid: {header}"
    keys = jwks_keys(jwks, what + " verification jwks")
    match = [k for k in keys if k.get("kid") == kid]
    assert match, f"{what}: kid {kid!r} not found among {[k.get('kid') for k in keys]}"
    try:
        key = KeySet.import_key_set({"keys": [match[0]]})
        obj = jws.deserialize_compact(token.strip(), key, algorithms=[header["alg"]])
    except JoseError as e:
        raise AssertionError(f"{what}: signature does not verify with key {kid!r} ({type(e).__name__}: {e})")
    assert json.loads(obj.payload) == claims
    return header, claims


def assert_times(claims: dict, what: str, require_exp: bool = True) -> None:
    t = now()
    iat = claims.get("iat")
    assert isinstance(iat, int) and not isinstance(iat, bool), f"{what}: iat must be an integer NumericDate, got {iat!r}"
    assert iat <= t + CLOCK_SKEW, f"{what}: iat {iat} is in the future (now {t})"
    if require_exp or "exp" in claims:
        exp = claims.get("exp")
        assert isinstance(exp, int) and not isinstance(exp, bool), f"{what}: exp must be an integer NumericDate, got {exp!r}"
        assert exp > t, f"{what}: expired (exp {exp}, now {t})"
        assert exp > iat, f"{what}: exp {exp} <= iat {iat}"


def content_type(resp: requests.Response) -> str:
    return resp.headers.get("Content-Type", "").split(";")[0].strip().lower()


def describe(resp: requests.Response) -> str:
    body = resp.text
    return f"{resp.request.method} {resp.url} -> {resp.status_code} {resp.headers.get('Content-Type')!r} body={body[:400]!r}"


def assert_ok(resp: requests.Response, ctype: str) -> None:
    assert resp.status_code == 200, f"expected 200: {describe(resp)}"
    assert content_type(resp) == ctype, f"expected Content-Type {ctype}: {describe(resp)}"


def assert_json_error(resp: requests.Response, status: int | Iterable[int], codes: str | Iterable[str]) -> dict:
    """The response is a spec error: the given HTTP status and JSON {"error", "error_description"}."""
    statuses = {status} if isinstance(status, int) else set(status)
    codes = {codes} if isinstance(codes, str) else set(codes)
    assert resp.status_code in statuses, f"expected HTTP {sorted(statuses)}: {describe(resp)}"
    assert content_type(resp) == "application/json", f"error must be application/json: {describe(resp)}"
    try:
        body = resp.json()
    except ValueError:
        raise AssertionError(f"error body is not JSON: {describe(resp)}")
    assert isinstance(body, dict), f"error body must be an object: {describe(resp)}"
    assert body.get("error") in codes, f"expected error code in {sorted(codes)}, got {body.get('error')!r}: {describe(resp)}"
    assert isinstance(body.get("error_description"), str) and body["error_description"], f"error_description missing/empty: {describe(resp)}"
    return body


def normalize(v: Any) -> Any:
    """Makes JSON comparable ignoring array order (policy results are sets)."""
    if isinstance(v, dict):
        return {k: normalize(x) for k, x in v.items()}
    if isinstance(v, list):
        return sorted((normalize(x) for x in v), key=lambda x: json.dumps(x, sort_keys=True))
    return v


def diff(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Human-readable differences between two JSON values (arrays compared as sets)."""
    e, a = normalize(expected), normalize(actual)
    if isinstance(e, dict) and isinstance(a, dict):
        out = []
        for k in sorted(set(e) | set(a)):
            if k not in a:
                out.append(f"{path}/{k}: missing (expected {e[k]!r})")
            elif k not in e:
                out.append(f"{path}/{k}: unexpected {a[k]!r}")
            else:
                out += diff(e[k], a[k], f"{path}/{k}")
        return out
    return [] if e == a else [f"{path}: expected {e!r}, got {a!r}"]


# ---------------------------------------------------------------------------- fetching


def get(url: str, **kw) -> requests.Response:
    kw.setdefault("timeout", HTTP_TIMEOUT)
    return requests.get(url, **kw)


def fetch_entity_configuration(entity_id: str) -> tuple[str, dict, dict]:
    """Fetches and self-verifies an Entity Configuration; returns (jwt, header, claims)."""
    resp = get(entity_id.rstrip("/") + "/.well-known/openid-federation")
    assert_ok(resp, EC_TYPE)
    token = resp.text.strip()
    header, claims = decode_jws(token, f"EC of {entity_id}")
    header, claims = verify_jws(token, claims.get("jwks"), f"EC of {entity_id}", typ="entity-statement+jwt")
    return token, header, claims


# ---------------------------------------------------------------------------- chains


def validate_trust_chain(chain: list[str], subject: str, trust_anchor: str, ta_jwks: dict | None = None) -> list[dict]:
    """OpenID Federation 1.0 section 10.2 trust chain validation, done independently.

    chain = [subject EC, subordinate statements upwards..., TA EC] (a single TA EC when the
    subject is the trust anchor).  Returns the claims of each statement.
    """
    assert isinstance(chain, list) and chain, f"trust_chain must be a non-empty array, got {chain!r:.200}"
    decoded = [decode_jws(s, f"trust_chain[{i}]") for i, s in enumerate(chain)]
    claims = [c for _, c in decoded]
    n = len(chain)
    for i, (h, c) in enumerate(decoded):
        what = f"trust_chain[{i}] ({c.get('iss')} about {c.get('sub')})"
        assert h.get("typ") == "entity-statement+jwt", f"{what}: typ must be entity-statement+jwt, got {h.get('typ')!r}"
        assert_times(c, what)
        assert_public_jwks(c.get("jwks"), what)
    # ES[0]: the subject's Entity Configuration, self-signed.
    first = claims[0]
    assert first.get("iss") == first.get("sub") == subject, f"trust_chain[0] must be the EC of {subject}: iss={first.get('iss')} sub={first.get('sub')}"
    verify_jws(chain[0], first["jwks"], "trust_chain[0] with its own jwks")
    # Last: the TA's Entity Configuration, self-signed (or with keys we were given).
    last = claims[-1]
    assert last.get("iss") == last.get("sub") == trust_anchor, f"last element must be the EC of the trust anchor {trust_anchor}: iss={last.get('iss')} sub={last.get('sub')}"
    verify_jws(chain[-1], ta_jwks or last["jwks"], "trust anchor EC")
    if ta_jwks is not None:
        verify_jws(chain[-1], last["jwks"], "trust anchor EC with its own jwks")
    if n == 1:
        assert subject == trust_anchor
        return claims
    # Linkage and signatures: ES[j] is issued by ES[j+1]'s subject and verifies with ES[j+1].jwks.
    for j in range(n - 1):
        cj, nxt = claims[j], claims[j + 1]
        what = f"trust_chain[{j}] ({cj.get('iss')} about {cj.get('sub')})"
        if j >= 1:
            assert cj.get("iss") != cj.get("sub"), f"{what}: a subordinate statement must have iss != sub"
            assert cj.get("sub") == claims[j - 1].get("iss"), f"{what}: sub must be the issuer of trust_chain[{j-1}] ({claims[j-1].get('iss')})"
            for forbidden in ("authority_hints", "trust_marks", "trust_anchor_hints"):
                assert forbidden not in cj, f"{what}: {forbidden} is only for Entity Configurations"
        assert cj.get("iss") == nxt.get("sub"), f"{what}: iss must equal sub of trust_chain[{j+1}] ({nxt.get('sub')})"
        verify_jws(chain[j], nxt["jwks"], f"{what} with keys of trust_chain[{j+1}] ({nxt.get('iss')} about {nxt.get('sub')})")
    # The superior's statement about the subject carries the subject's keys, and the EC kid is one of them.
    h0, _ = decoded[0]
    assert h0["kid"] in [k["kid"] for k in claims[1]["jwks"]["keys"]], "subject EC kid is not in the superior's statement about it"
    # The subject's authority_hints point at the issuer of the statement about it.
    hints = first.get("authority_hints") or []
    assert claims[1].get("iss") in hints, f"subject EC authority_hints {hints} do not include the issuer of trust_chain[1] {claims[1].get('iss')}"
    # Constraints: max_path_length counts intermediates between the constraining entity and the subject.
    for j in range(1, n - 1):
        cons = claims[j].get("constraints") or {}
        if "max_path_length" in cons:
            between = j - 1
            assert between <= cons["max_path_length"], f"trust_chain[{j}] max_path_length {cons['max_path_length']} violated: {between} intermediates"
    return claims


def resolve_metadata_independently(claims: list[dict]) -> dict:
    """Applies the chain's merged metadata policies (TA first) and constraints to the subject's metadata."""
    leaf = claims[0]
    metadata = copy.deepcopy(leaf.get("metadata") or {})
    if len(claims) == 1:
        return metadata
    # Metadata in the immediate superior's statement overrides the subject's own values.
    for etype, params in (claims[1].get("metadata") or {}).items():
        metadata.setdefault(etype, {}).update(copy.deepcopy(params))
    subordinate_statements = claims[1:-1]
    policies = [s.get("metadata_policy") or {} for s in reversed(subordinate_statements)]
    merged = oidf_policy.merge_policies(policies)
    resolved = oidf_policy.apply_policy(merged, metadata)
    for s in subordinate_statements:
        allowed = (s.get("constraints") or {}).get("allowed_entity_types")
        if allowed is not None:
            resolved = {t: v for t, v in resolved.items() if t in allowed or t == "federation_entity"}
    return resolved


# ---------------------------------------------------------------------------- trust marks


def verify_trust_mark(token: str, ta_claims: dict, fetch_ec: Callable[[str], dict] | None = None,
                      expected_type: str | None = None, expected_sub: str | None = None) -> dict:
    """Verifies a Trust Mark JWT against the TA's trust_mark_issuers / trust_mark_owners."""
    fetch_ec = fetch_ec or (lambda eid: fetch_entity_configuration(eid)[2])
    header, claims = decode_jws(token, "trust mark")
    what = f"trust mark {claims.get('trust_mark_type')} for {claims.get('sub')}"
    assert header.get("typ") == "trust-mark+jwt", f"{what}: typ must be trust-mark+jwt, got {header.get('typ')!r}"
    for c in ("iss", "sub", "trust_mark_type", "iat"):
        assert c in claims, f"{what}: missing required claim {c}: {claims}"
    assert_times(claims, what, require_exp=False)
    if expected_type:
        assert claims["trust_mark_type"] == expected_type, f"{what}: trust_mark_type {claims['trust_mark_type']} != {expected_type}"
    if expected_sub:
        assert claims["sub"] == expected_sub, f"{what}: sub {claims['sub']} != {expected_sub}"
    tmtype = claims["trust_mark_type"]
    issuers = (ta_claims.get("trust_mark_issuers") or {}).get(tmtype)
    if issuers is not None:
        assert claims["iss"] in issuers, f"{what}: issuer {claims['iss']} not authorised by the TA ({issuers})"
    issuer_ec = fetch_ec(claims["iss"])
    verify_jws(token, issuer_ec["jwks"], what + " signature (issuer's EC jwks)", typ="trust-mark+jwt")
    owner = (ta_claims.get("trust_mark_owners") or {}).get(tmtype)
    if owner is not None:
        assert "delegation" in claims, f"{what}: the type has an owner ({owner.get('sub')}) so a delegation is required"
        dh, dc = verify_jws(claims["delegation"], owner.get("jwks"), what + " delegation (owner jwks from TA)", typ="trust-mark-delegation+jwt")
        assert dc.get("iss") == owner.get("sub"), f"{what}: delegation iss {dc.get('iss')} != owner {owner.get('sub')}"
        assert dc.get("sub") == claims["iss"], f"{what}: delegation sub {dc.get('sub')} != trust mark issuer {claims['iss']}"
        assert dc.get("trust_mark_type") == tmtype, f"{what}: delegation trust_mark_type {dc.get('trust_mark_type')} != {tmtype}"
        assert_times(dc, what + " delegation", require_exp=False)
    return claims


def build_trust_chain(subject: str, trust_anchor: str, max_depth: int = 6) -> list[str]:
    """Builds the shortest trust chain by crawling over HTTP (independent of any resolve endpoint):
    subject EC, then for each authority hint the superior's fetch endpoint, up to the TA's EC."""
    subject_jwt, _, subject_ec = fetch_entity_configuration(subject)
    if subject == trust_anchor:
        return [subject_jwt]
    frontier = [([subject_jwt], subject_ec)]
    seen = {subject}
    for _ in range(max_depth):
        nxt = []
        for chain, current in frontier:
            for hint in current.get("authority_hints") or []:
                if hint in seen and hint != trust_anchor:
                    continue
                seen.add(hint)
                sup_jwt, _, sup_ec = fetch_entity_configuration(hint)
                fetch_url = (sup_ec.get("metadata") or {}).get("federation_entity", {}).get("federation_fetch_endpoint")
                assert fetch_url, f"{hint} is named in authority_hints of {current['sub']} but advertises no federation_fetch_endpoint"
                r = get(fetch_url, params={"sub": current["sub"]})
                assert_ok(r, EC_TYPE)
                statement = r.text.strip()
                if hint == trust_anchor:
                    return chain + [statement, sup_jwt]
                nxt.append((chain + [statement], sup_ec))
        frontier = nxt
        if not frontier:
            break
    raise AssertionError(f"no trust chain from {subject} to {trust_anchor} found by crawling authority_hints")


# How long a running server may take to pick up a change made by the CLI: it polls once a second,
# and rebuilding what depends on a key (the federation host, the services whose metadata it signs)
# took over 3 s once on the debug build while the rest of the suite ran.
PICKUP_SECONDS = 6.0


def wait_for(predicate, what: str, timeout: float = PICKUP_SECONDS):
    """Polls predicate() (returning (ok, observation)) until ok; fails with the last observation."""
    deadline = time.monotonic() + timeout
    while True:
        ok, last = predicate()
        if ok:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not seen within {timeout}s; last observation: {last!r:.600}")
        time.sleep(0.1)
