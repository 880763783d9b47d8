"""Trust mark, trust mark status and trust mark list endpoints (sections 8.4 - 8.6)."""
from __future__ import annotations

import pytest
import requests

from fedlib import (PID_MARK, RP_MARK, TM_STATUS_TYPE, TRUST_MARK_TYPE, assert_json_error, assert_ok, assert_times,
                    content_type, describe, fetch_entity_configuration, get, verify_jws, verify_trust_mark)

MARKS = [("ta", PID_MARK, "pid-provider"), ("intermediate", RP_MARK, "relying-party")]


def issue(fed, issuer: str, mark: str, subject: str) -> str:
    r = get(fed.id(issuer) + "/trust-mark", params={"trust_mark_type": mark, "sub": fed.id(subject)})
    assert_ok(r, TRUST_MARK_TYPE)
    return r.text.strip()


def status(fed, issuer: str, token: str) -> requests.Response:
    return requests.post(fed.id(issuer) + "/trust-mark-status", data={"trust_mark": token}, timeout=15)


def status_claims(fed, issuer: str, resp: requests.Response) -> dict:
    assert_ok(resp, TM_STATUS_TYPE)
    _, _, ec = fetch_entity_configuration(fed.id(issuer))
    _, claims = verify_jws(resp.text.strip(), ec["jwks"], f"trust mark status from {issuer}", typ="trust-mark-status-response+jwt")
    assert claims.get("iss") == fed.id(issuer), f"status iss {claims.get('iss')}"
    assert_times(claims, "trust mark status", require_exp=False)
    return claims


@pytest.mark.parametrize("issuer,mark,subject", MARKS)
def test_trust_mark_endpoint_issues_a_verifiable_mark(fed, issuer, mark, subject):
    token = issue(fed, issuer, mark, subject)
    _, _, ta = fetch_entity_configuration(fed.id("ta"))
    c = verify_trust_mark(token, ta, expected_type=mark, expected_sub=fed.id(subject))
    assert c["iss"] == fed.id(issuer), f"trust mark iss {c['iss']} != {fed.id(issuer)}"
    assert "exp" in c, "demo marks have a lifetime, so exp is expected"


@pytest.mark.parametrize("missing", ["trust_mark_type", "sub"])
def test_trust_mark_missing_parameter(fed, missing):
    params = {"trust_mark_type": PID_MARK, "sub": fed.id("pid-provider")}
    del params[missing]
    assert_json_error(get(fed.id("ta") + "/trust-mark", params=params), 400, "invalid_request")


@pytest.mark.parametrize("params", [
    {"trust_mark_type": PID_MARK, "sub": "wallet-provider"},
    {"trust_mark_type": "https://trustbed.example/trust-marks/unknown", "sub": "pid-provider"},
    {"trust_mark_type": RP_MARK, "sub": "relying-party"},  # ta does not issue this type itself
])
def test_trust_mark_not_issued(fed, params):
    params = dict(params, sub=fed.id(params["sub"]))
    assert_json_error(get(fed.id("ta") + "/trust-mark", params=params), 404, "not_found")


@pytest.mark.parametrize("issuer,mark,subject", MARKS)
def test_trust_mark_status_active(fed, issuer, mark, subject):
    token = issue(fed, issuer, mark, subject)
    claims = status_claims(fed, issuer, status(fed, issuer, token))
    assert claims.get("trust_mark") == token, "status response must echo the trust mark"
    assert claims.get("status") == "active", f"status for a fresh mark: {claims.get('status')!r}"


def test_trust_mark_status_of_mark_from_entity_configuration(fed):
    _, _, pid = fetch_entity_configuration(fed.id("pid-provider"))
    token = next(m["trust_mark"] for m in pid.get("trust_marks", []) if m["trust_mark_type"] == PID_MARK)
    assert status_claims(fed, "ta", status(fed, "ta", token)).get("status") == "active"


def _tamper(token: str) -> str:
    h, p, s = token.split(".")
    s = ("A" if s[0] != "A" else "B") + s[1:]
    return f"{h}.{p}.{s}"


def test_trust_mark_status_tampered_signature(fed):
    token = _tamper(issue(fed, "ta", PID_MARK, "pid-provider"))
    r = status(fed, "ta", token)
    assert r.status_code < 500, f"tampered mark must not cause a server error: {describe(r)}"
    if r.status_code == 200:
        assert status_claims(fed, "ta", r).get("status") == "invalid", f"tampered mark status: {r.text[:300]}"
    else:
        assert_json_error(r, (400, 404), ("invalid_request", "not_found"))


def test_trust_mark_status_tampered_payload(fed):
    import base64
    import json

    token = issue(fed, "ta", PID_MARK, "pid-provider")
    h, p, s = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
    claims["sub"] = fed.id("wallet-provider")
    p2 = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    r = status(fed, "ta", f"{h}.{p2}.{s}")
    assert r.status_code < 500, describe(r)
    if r.status_code == 200:
        assert status_claims(fed, "ta", r).get("status") == "invalid", f"forged-subject mark status: {r.text[:300]}"
    else:
        assert_json_error(r, (400, 404), ("invalid_request", "not_found"))


@pytest.mark.parametrize("junk", ["junk", "a.b.c", "...", "eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0.", "%%%", "x" * 5000])
def test_trust_mark_status_malformed_input_is_not_a_server_error(fed, junk):
    r = status(fed, "ta", junk)
    assert r.status_code < 500, f"malformed trust mark {junk[:40]!r} caused a server error: {describe(r)}"
    if r.status_code != 200:
        assert_json_error(r, r.status_code, ("invalid_request", "not_found"))
    else:
        assert status_claims(fed, "ta", r).get("status") == "invalid"


def test_trust_mark_status_alg_none_is_not_active(fed):
    import base64
    import json

    token = issue(fed, "ta", PID_MARK, "pid-provider")
    _, p, _ = token.split(".")
    h = base64.urlsafe_b64encode(json.dumps({"alg": "none", "typ": "trust-mark+jwt"}).encode()).rstrip(b"=").decode()
    r = status(fed, "ta", f"{h}.{p}.")
    assert r.status_code < 500, describe(r)
    if r.status_code == 200:
        assert status_claims(fed, "ta", r).get("status") != "active", "an unsigned (alg none) trust mark must not be active"


def test_trust_mark_status_missing_parameter(fed):
    r = requests.post(fed.id("ta") + "/trust-mark-status", data={}, timeout=15)
    assert_json_error(r, 400, "invalid_request")


@pytest.mark.parametrize("issuer,mark,subject", MARKS)
def test_trust_mark_list(fed, issuer, mark, subject):
    r = get(fed.id(issuer) + "/trust-mark-list", params={"trust_mark_type": mark})
    assert r.status_code == 200 and content_type(r) == "application/json", describe(r)
    assert r.json() == [fed.id(subject)], f"trust-mark-list: {r.json()}"
    r = get(fed.id(issuer) + "/trust-mark-list", params={"trust_mark_type": mark, "sub": fed.id(subject)})
    assert r.status_code == 200 and r.json() == [fed.id(subject)], describe(r)
    r = get(fed.id(issuer) + "/trust-mark-list", params={"trust_mark_type": mark, "sub": fed.id("wallet-provider")})
    assert r.status_code == 200 and r.json() == [], describe(r)


def test_trust_mark_list_missing_type(fed):
    assert_json_error(get(fed.id("ta") + "/trust-mark-list"), 400, "invalid_request")


def test_trust_mark_list_unknown_type(fed):
    r = get(fed.id("ta") + "/trust-mark-list", params={"trust_mark_type": "https://trustbed.example/trust-marks/unknown"})
    assert r.status_code in (200, 404), describe(r)
    if r.status_code == 200:
        assert r.json() == [], describe(r)
    else:
        assert_json_error(r, 404, "not_found")
