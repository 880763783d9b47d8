"""MOSIP Inji (issue 22, item 7).

(a) The PID Provider with `services.pid_provider.inji_compat` on reads the credential request
shape of Inji's VCI client (OpenID4VCI draft 13: `format` + `vct` / `doctype` /
`credential_definition`, singular `proof`), for all three formats; with it off the same
requests are `invalid_credential_request`; an unknown format or a vct no configuration has is
refused.  The credentials are checked with the independent verifiers of walletlib.

(b) PixelPass: `trustbed wallet qr --pixelpass` renders a stored credential; Python decodes it
with `base45` + zlib (+ cbor2) from PyPI and zxing-cpp reads the PNG back; texts encoded in
Python are verified at `POST <rp>/verify/pixelpass` (SD-JWT VC and mdoc, as text and as CBOR);
bad input (not base45, a zlib bomb, invalid CBOR, an image body) is a 400 with the reason."""
from __future__ import annotations

import base64
import json
import time
import zlib

import base45
import cbor2
import pytest
import requests
from fedlib import assert_json_error, describe
from harness import run_cli
from walletlib import (PRE_AUTH_GRANT, Wallet, admin_offer, iaca_certificate, key_proof, new_key, persona, start_pid_server,
                       verify_mdoc, verify_sd_jwt_vc)

SD = "urn:eudi:pid:1"
NL = "urn:eudi:pid:nl:1"
MDOC = "eu.europa.ec.eudi.pid.1"


def start(session_tmp, label, inji):
    return start_pid_server(session_tmp / f"{label}-{time.monotonic_ns()}", label=label, pid_overrides={"inji_compat": inji})


@pytest.fixture(scope="module")
def inji_on(session_tmp):
    server = start(session_tmp, "inji-on", True)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def inji_off(session_tmp):
    server = start(session_tmp, "inji-off", False)
    yield server
    server.stop()


def bearer(server, ids=(SD, NL, MDOC)) -> tuple[str, str]:
    issuer = server.id("pid-provider")
    answer = admin_offer(issuer, server.admin_token, persona(server)["id"], list(ids))
    code = answer["credential_offer"]["grants"][PRE_AUTH_GRANT]["pre-authorized_code"]
    token = Wallet(issuer, use_dpop=False).token({"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": code})
    return issuer, token["access_token"]


def c_nonce(issuer) -> str:
    return requests.post(issuer + "/nonce", timeout=10).json()["c_nonce"]


def inji_request(issuer, key, selector: dict) -> dict:
    """Inji's VCI client body: format + type selector + the singular draft-13 proof object."""
    return {**selector, "proof": {"proof_type": "jwt", "jwt": key_proof(key, issuer, c_nonce(issuer))}}


def post(issuer, token, body):
    return requests.post(issuer + "/credential", data=json.dumps(body), timeout=20,
                         headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})


INJI_SHAPES = [
    ({"format": "vc+sd-jwt", "vct": SD}, SD),
    ({"format": "dc+sd-jwt", "vct": NL}, NL),
    ({"format": "vc+sd-jwt", "credential_definition": {"type": ["VerifiableCredential", SD]}}, SD),
    ({"format": "mso_mdoc", "doctype": MDOC, "claims": {MDOC: {"family_name": {}}}}, MDOC),
]


@pytest.mark.parametrize("selector,config", INJI_SHAPES, ids=["vc+sd-jwt", "dc+sd-jwt", "credential_definition", "mso_mdoc"])
def test_inji_shape_issues_with_inji_compat(inji_on, selector, config):
    issuer, token = bearer(inji_on)
    key = new_key()
    r = post(issuer, token, inji_request(issuer, key, selector))
    assert r.status_code == 200, describe(r)
    credential = r.json()["credentials"][0]["credential"]
    iaca = iaca_certificate(issuer)
    if config == MDOC:
        verify_mdoc(credential, iaca=iaca, holder_key=key)
    else:
        verify_sd_jwt_vc(credential, issuer=issuer, iaca=iaca, holder_key=key, vct=config)


@pytest.mark.parametrize("selector,config", INJI_SHAPES, ids=["vc+sd-jwt", "dc+sd-jwt", "credential_definition", "mso_mdoc"])
def test_inji_shape_refused_without_inji_compat(inji_off, selector, config):
    issuer, token = bearer(inji_off)
    assert_json_error(post(issuer, token, inji_request(issuer, new_key(), selector)), 400, "invalid_credential_request")


def test_inji_shape_refusals(inji_on):
    issuer, token = bearer(inji_on)
    key = new_key()
    for selector in [{"format": "ldp_vc", "credential_definition": {"type": ["VerifiableCredential"]}},
                     {"format": "jwt_vc_json", "vct": SD},
                     {"format": "vc+sd-jwt", "vct": "urn:example:not-configured"},
                     {"format": "mso_mdoc", "doctype": "org.iso.18013.5.1.mDL"},
                     {"format": "mso_mdoc", "doctype": SD}]:
        assert_json_error(post(issuer, token, inji_request(issuer, key, selector)), 400, "unknown_credential_configuration")
    for selector in [{"format": "vc+sd-jwt"},                                  # no type selector
                     {"format": "vc+sd-jwt", "doctype": MDOC},                 # the other format's selector
                     {"format": "mso_mdoc", "vct": SD},
                     {"format": "vc+sd-jwt", "vct": SD, "credential_definition": {"vct": SD}},
                     {"format": 7, "vct": SD}]:
        assert_json_error(post(issuer, token, inji_request(issuer, key, selector)), 400, "invalid_credential_request")
    # The proof is checked as for 1.0 requests: a wrong audience, a proof type Inji may send.
    bad = {"format": "vc+sd-jwt", "vct": SD, "proof": {"proof_type": "jwt", "jwt": key_proof(key, "https://other.example", c_nonce(issuer))}}
    assert_json_error(post(issuer, token, bad), 400, "invalid_proof")
    assert_json_error(post(issuer, token, {"format": "vc+sd-jwt", "vct": SD, "proof": {"proof_type": "cwt", "cwt": "x"}}),
                      400, "invalid_proof")
    assert_json_error(post(issuer, token, {"format": "vc+sd-jwt", "vct": SD}), 400, "invalid_proof")
    # A 1.0 request is still read as 1.0 with inji_compat on.
    r = post(issuer, token, {"credential_configuration_id": SD, "proofs": {"jwt": [key_proof(key, issuer, c_nonce(issuer))]}})
    assert r.status_code == 200, describe(r)


# ---------------------------------------------------------------------------- PixelPass


def pixelpass_encode(data: bytes | str | dict) -> str:
    """MOSIP pixelpass generateQRData: JSON → CBOR, zlib level 9 (RFC 1950 stream), base45."""
    raw = cbor2.dumps(data) if isinstance(data, dict) else (data.encode() if isinstance(data, str) else data)
    return base45.b45encode(zlib.compress(raw, 9)).decode()


def pixelpass_decode(text: str) -> bytes:
    return zlib.decompress(base45.b45decode(text))


@pytest.fixture(scope="module")
def stored(inji_on, tmp_path_factory):
    """A test wallet file holding an SD-JWT PID and an mdoc PID (issued through Inji's shape)."""
    issuer, token = bearer(inji_on)
    entries = []
    for selector, config in [INJI_SHAPES[0], INJI_SHAPES[3]]:
        r = post(issuer, token, inji_request(issuer, new_key(), selector))
        assert r.status_code == 200, describe(r)
        entries.append({"credential_configuration_id": config, "format": "mso_mdoc" if config == MDOC else "dc+sd-jwt",
                        "credential": r.json()["credentials"][0]["credential"]})
    path = tmp_path_factory.mktemp("inji-wallet") / "wallet.json"
    path.write_text(json.dumps({"type": "trustbed-test-wallet", "version": 1, "credentials": entries}))
    return path, entries


def verify_pixelpass(server, body, content_type="application/json"):
    data = json.dumps(body) if isinstance(body, dict) else body
    return requests.post(server.id("relying-party") + "/verify/pixelpass", data=data, timeout=30,
                         headers={"Content-Type": content_type})


def test_cli_pixelpass_text_of_the_whole_credential(stored):
    path, entries = stored
    for which, entry in [("1", entries[0]), (MDOC, entries[1]), ("dc+sd-jwt", entries[0])]:
        p = run_cli("wallet", "qr", "--pixelpass", "--wallet", str(path), "--credential", which, timeout=60)
        assert p.returncode == 0, p.stderr
        assert pixelpass_decode(p.stdout.strip()).decode() == entry["credential"], "zlib + base45 of the stored credential"
    # A whole PID with its portrait does not fit in a QR code: refused with the way out.
    p = run_cli("wallet", "qr", "--pixelpass", "--wallet", str(path), "--png", str(path.parent / "big.png"), timeout=60)
    assert p.returncode == 1 and "--disclose" in p.stderr, p.stderr
    p = run_cli("wallet", "qr", "--pixelpass", "--wallet", str(path), "--credential", "9", timeout=60)
    assert p.returncode != 0 and "holds" in p.stderr, p.stderr


@pytest.mark.parametrize("which,claims", [("1", ["given_name", "family_name", "birthdate"]),
                                          (MDOC, ["family_name", "given_name", "birth_date"])], ids=["sd-jwt", "mdoc"])
def test_cli_pixelpass_decodes_in_python_and_reads_back_from_png(inji_on, stored, tmp_path, which, claims):
    import zxingcpp
    from PIL import Image
    path, entries = stored
    png = tmp_path / "qr.png"
    p = run_cli("wallet", "qr", "--pixelpass", "--wallet", str(path), "--credential", which, "--disclose", *claims,
                "--png", str(png), timeout=60)
    assert p.returncode == 0, p.stderr
    text = p.stdout.strip()
    inner = pixelpass_decode(text).decode()
    if which == "1":
        disclosures = [json.loads(base64.urlsafe_b64decode(d + "=" * (-len(d) % 4)))[1] for d in inner.split("~")[1:] if d]
        assert sorted(disclosures) == sorted(claims) and inner.split("~")[0] == entries[0]["credential"].split("~")[0]
    else:
        issuer_signed = cbor2.loads(base64.urlsafe_b64decode(inner + "=" * (-len(inner) % 4)))
        names = [cbor2.loads(item.value)["elementIdentifier"] for item in issuer_signed["nameSpaces"][MDOC]]
        assert sorted(names) == sorted(claims)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    found = zxingcpp.read_barcodes(Image.open(png))
    assert found and found[0].text == text, "zxing-cpp reads the PixelPass text back from the PNG"
    # The verifier accepts what the CLI rendered.
    r = verify_pixelpass(inji_on, {"pixelpass": text})
    assert r.status_code == 200, describe(r)
    report = r.json()
    assert report["state"] == "verified", report
    elements = report["claims"][SD] if which == "1" else report["claims"][MDOC][MDOC]
    assert set(claims) <= set(elements), elements


def test_python_encoded_sd_jwt_verified(inji_on, stored):
    _, entries = stored
    credential = entries[0]["credential"]
    for text, encoding in [(pixelpass_encode(credential), "text"),
                           (pixelpass_encode({"credential": credential}), "cbor")]:
        r = verify_pixelpass(inji_on, {"pixelpass": text})
        assert r.status_code == 200, describe(r)
        report = r.json()
        assert report["state"] == "verified", report
        assert report["format"] == "dc+sd-jwt" and report["pixelpass_payload"] == encoding
        names = {c["name"] for c in report["checks"]}
        assert {"format", "issuer_trust", "issuer_signature", "disclosures", "status"} <= names, names
        assert "key_binding" in {c["name"] for c in report["not_applicable"]}
        assert report["claims"][SD]["family_name"], report["claims"]


def test_python_encoded_mdoc_verified(inji_on, stored):
    _, entries = stored
    r = verify_pixelpass(inji_on, {"pixelpass": pixelpass_encode(entries[1]["credential"])})
    assert r.status_code == 200, describe(r)
    report = r.json()
    assert report["state"] == "verified" and report["format"] == "mso_mdoc", report
    assert {"issuer_trust", "issuer_authentication", "status"} <= {c["name"] for c in report["checks"]}
    assert "device_authentication" in {c["name"] for c in report["not_applicable"]}
    assert report["claims"][MDOC][MDOC]["family_name"]


def test_tampered_credentials_refused_with_the_failed_check(inji_on, stored):
    _, entries = stored
    sd = entries[0]["credential"]
    jwt, rest = sd.split("~", 1)
    header, payload, signature = jwt.split(".")
    flipped = signature[:-2] + ("AA" if signature[-2:] != "AA" else "BB")
    r = verify_pixelpass(inji_on, {"pixelpass": pixelpass_encode(f"{header}.{payload}.{flipped}~{rest}")})
    assert r.status_code == 200, describe(r)
    report = r.json()
    assert report["state"] == "refused" and not report["claims"]
    assert [c for c in report["checks"] if not c["ok"]][0]["name"] == "issuer_signature", report
    # A disclosure that the issuer never signed.
    forged = sd + "WyJzYWx0IiwgImZhbWlseV9uYW1lIiwgIk1BTExPUlkiXQ~"
    report = verify_pixelpass(inji_on, {"pixelpass": pixelpass_encode(forged)}).json()
    assert report["state"] == "refused" and [c for c in report["checks"] if not c["ok"]][0]["name"] == "disclosures", report


def test_bad_pixelpass_input_is_400_with_reason(inji_on):
    bomb = base45.b45encode(zlib.compress(b"\0" * (2 << 20), 9)).decode()
    cases = [
        ({"pixelpass": "abc!def"}, "base45"),                                       # lower case and '!' are not base45
        ({"pixelpass": "ABCD"}, "base45"),                                          # length 1 mod 3
        ({"pixelpass": "GGW"}, "base45"),                                           # triple above 65535
        ({"pixelpass": base45.b45encode(b"not zlib at all").decode()}, "zlib"),
        ({"pixelpass": bomb}, "1048576"),                                           # inflates past 1 MiB
        ({"pixelpass": base45.b45encode(zlib.compress(b"\xa2\x61a\x01", 9)).decode()}, "CBOR"),  # map of 2, one entry
        ({"pixelpass": base45.b45encode(zlib.compress(b"\x81" * 100000 + b"\x00", 9)).decode()}, "CBOR"),  # nesting bomb
        ({"pixelpass": pixelpass_encode("hello, not a credential")}, "neither"),
        ({"pixelpass": pixelpass_encode({"@context": ["https://www.w3.org/2018/credentials/v1"], "type": ["VerifiableCredential"]})},
         "ldp_vc"),
        ({"pixelpass": 42}, "pixelpass"),
        ({"qr": "x"}, "pixelpass"),
    ]
    for body, reason in cases:
        start = time.monotonic()
        r = verify_pixelpass(inji_on, body)
        assert time.monotonic() - start < 10, "refused promptly"
        assert_json_error(r, 400, "invalid_request")
        assert reason in r.json()["error_description"], (body if len(json.dumps(body)) < 200 else reason, r.json())
    r = verify_pixelpass(inji_on, b"\x89PNG\r\n\x1a\n", content_type="image/png")
    assert r.status_code == 415, describe(r)
    assert "text" in r.json()["error_description"]
