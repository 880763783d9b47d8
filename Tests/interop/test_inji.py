"""MOSIP Inji (issue 22, item 7).

(a) The PID Provider with `services.pid_provider.inji_compat` on reads the credential request
shape of Inji's VCI client (OpenID4VCI draft 13: `format` + `vct` / `doctype` /
`credential_definition`, singular `proof`), for all three formats; with it off the same
requests are `invalid_credential_request`; an unknown format or a vct no configuration has is
refused.  The credentials are checked with the independent verifiers of walletlib.

(b) PixelPass: `trustbed wallet qr --pixelpass` renders a stored credential; Python decodes it
with `base45` + zlib (+ cbor2) from PyPI and zxing-cpp reads the PNG back; texts encoded in
Python are verified at `POST <rp>/verify/pixelpass` (SD-JWT VC and mdoc, as text and as CBOR);
bad input (not base45, a zlib bomb, invalid CBOR) is a 400 with the reason.  The QR code itself as
an `image/png` body (drawn by PyPI's `qrcode`, or the CLI's `--png`, re-encoded by Pillow in other
colour types) is read by the server and verified the same; images that are not PNG, truncated,
declare a huge canvas or hold no QR code are 400 with the reason."""
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
    # Image types other than PNG are 415 with a pointer to what is read.
    r = verify_pixelpass(inji_on, b"\xff\xd8\xff\xe0", content_type="image/jpeg")
    assert r.status_code == 415, describe(r)
    assert "image/png" in r.json()["error_description"]


# ------------------------------------------------------------------ PixelPass as a QR image


def png_bytes(image, fmt="PNG") -> bytes:
    import io
    out = io.BytesIO()
    image.save(out, format=fmt)
    return out.getvalue()


def python_qr_png(text: str, **colours) -> bytes:
    """The QR code drawn by PyPI's `qrcode` (error correction L, as MOSIP's library draws it)."""
    import qrcode
    code = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_L, box_size=4, border=4)
    code.add_data(text)
    code.make(fit=True)
    return png_bytes(code.make_image(**colours).get_image())


def cli_pixelpass(path, which, claims, png=None) -> str:
    args = ["wallet", "qr", "--pixelpass", "--wallet", str(path), "--credential", which, "--disclose", *claims]
    p = run_cli(*args, *(["--png", str(png)] if png else []), timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def claims_of(report, which):
    return report["claims"][SD] if which == "1" else report["claims"][MDOC][MDOC]


QR_CASES = [("1", ["given_name", "family_name", "birthdate"]), (MDOC, ["family_name", "given_name", "birth_date"])]


@pytest.mark.parametrize("which,claims", QR_CASES, ids=["sd-jwt", "mdoc"])
def test_python_drawn_qr_png_verified(inji_on, stored, which, claims):
    """The CLI's PixelPass text, drawn as a QR code by Python's `qrcode` (a 1-bit PNG, and an
    RGB one in navy on cream), posted as image/png: the same verdict as the text."""
    path, _ = stored
    text = cli_pixelpass(path, which, claims)
    by_text = verify_pixelpass(inji_on, {"pixelpass": text}).json()
    for png in [python_qr_png(text), python_qr_png(text, fill_color="navy", back_color=(255, 250, 220))]:
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        r = verify_pixelpass(inji_on, png, content_type="image/png")
        assert r.status_code == 200, describe(r)
        report = r.json()
        assert report["state"] == "verified", report
        verdicts = lambda rep: [(c["name"], c["ok"]) for c in rep["checks"]]     # details say fetched / cached
        assert verdicts(report) == verdicts(by_text) and report["format"] == by_text["format"]
        assert report["claims"] == by_text["claims"]
        assert set(claims) <= set(claims_of(report, which))


@pytest.mark.parametrize("which,claims", QR_CASES, ids=["sd-jwt", "mdoc"])
def test_cli_png_verified(inji_on, stored, tmp_path, which, claims):
    """What `wallet qr --pixelpass --png` writes, posted as it is (and with a transparent
    background and as a 16-bit greyscale re-encoding by Pillow), is verified."""
    from PIL import Image
    path, _ = stored
    png = tmp_path / "qr.png"
    cli_pixelpass(path, which, claims, png=png)
    image = Image.open(png)
    grey = image.convert("L")
    transparent = Image.new("RGBA", grey.size, (0, 0, 0, 0))
    transparent.putalpha(grey.point(lambda v: 255 - v))            # black modules, clear paper
    variants = [png.read_bytes(), png_bytes(transparent), png_bytes(grey.convert("I").point(lambda v: v * 257).convert("I;16"))]
    for body in variants:
        r = verify_pixelpass(inji_on, body, content_type="image/png")
        assert r.status_code == 200, describe(r)
        report = r.json()
        assert report["state"] == "verified", report
        assert set(claims) <= set(claims_of(report, which))


def huge_png_header(width: int, height: int) -> bytes:
    """Signature + IHDR declaring width × height 8-bit grey + a one-byte IDAT + IEND."""
    import struct

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\0")) + chunk(b"IEND", b""))


def test_bad_qr_images_are_400_with_reason(inji_on, stored):
    from PIL import Image
    path, _ = stored
    good = python_qr_png(cli_pixelpass(path, "1", ["given_name"]))
    qr = Image.open(__import__("io").BytesIO(good)).convert("RGB")
    cases = [
        (b"garbage, not an image", "not a PNG"),
        (png_bytes(qr, "JPEG"), "not a PNG"),                                      # a JPEG labelled image/png
        (b"", "not a PNG"),
        (good[: len(good) // 2], "not a valid PNG"),                                # truncated
        (good[:29] + bytes(b ^ 0xFF for b in good[29:33]) + good[33:], "CRC"),      # IHDR's CRC flipped
        (huge_png_header(100_000, 100_000), "100000 x 100000 pixels"),              # 40 GB as RGBA, from 66 bytes
        (huge_png_header(4096, 4096), "4096 x 4096 pixels"),                        # past the 4 Mpx bound
        (png_bytes(Image.new("L", (200, 200), 255)), "no QR code"),
        (python_qr_png("hello, not PixelPass"), "base45"),                           # a QR code, but not PixelPass
    ]
    for body, reason in cases:
        start = time.monotonic()
        r = verify_pixelpass(inji_on, body, content_type="image/png")
        assert time.monotonic() - start < 10, "refused promptly"
        assert_json_error(r, 400, "invalid_request")
        assert reason in r.json()["error_description"], (reason, r.json())
        assert r.json()["error_description"].startswith("pixelpass"), r.json()
    # Past the server's body limit (1 MiB): 413 before the route runs.
    r = verify_pixelpass(inji_on, good + b"\0" * (1 << 20), content_type="image/png")
    assert r.status_code == 413, describe(r)
