"""`trustbed wallet receive` and `trustbed wallet bench` (issue 7 items 14 and 16) against the
real server's PID Provider: offers created through the admin API, the CLI wallet runs the whole
OpenID4VCI 1.0 flow, verifies what it receives (issuer signature, x5c chain to the IACA with
--trust, cnf/deviceKey = the proof key, status list) and prints it.  The output lines asserted
here are the CLI's contract for people reading it: `credential i/n: <id> (<format>): verified`,
`check: ...`, `status: valid (...)`, `token_type: ...`.

Skips, with the reason, while the server has no issuer endpoints yet (token, nonce, credential)."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import requests
from harness import run_cli
from walletlib import admin_offer, persona, start_pid_server

SD = "urn:eudi:pid:1"
MDOC = "eu.europa.ec.eudi.pid.1"
TIMEOUT = 90


@pytest.fixture(scope="module")
def pid(session_tmp):
    server = start_pid_server(session_tmp / f"pid-cli-wallet-{time.monotonic_ns()}", label="pid-cli-wallet")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def issuer(pid) -> str:
    """The issuer URL, once its endpoints answer; a clean skip while they are not served yet."""
    issuer = pid.id("pid-provider")
    r = requests.get(issuer + "/.well-known/openid-credential-issuer", timeout=15)
    if r.status_code != 200:
        pytest.skip(f"the server has no PID Provider metadata yet ({r.status_code})")
    metadata = r.json()
    r = requests.get(issuer + "/.well-known/oauth-authorization-server", timeout=15)
    if r.status_code != 200:
        pytest.skip(f"the server has no authorization server metadata yet ({r.status_code})")
    endpoints = {"token_endpoint": r.json().get("token_endpoint"), "credential_endpoint": metadata.get("credential_endpoint"),
                 "nonce_endpoint": metadata.get("nonce_endpoint")}
    for name, url in endpoints.items():
        if not url:
            pytest.skip(f"the issuer metadata has no {name} yet")
        probe = requests.post(pid.local(url), data={}, timeout=15)
        if probe.status_code in (404, 405):
            pytest.skip(f"the server does not serve the {name} yet ({url} answers {probe.status_code})")
    return issuer


def receive(offer: str, *args: str, expect_ok: bool = True, stdin: str | None = None):
    p = run_cli("wallet", "receive", offer, *args, timeout=TIMEOUT) if stdin is None else _run_with_stdin(offer, args, stdin)
    if expect_ok:
        assert p.returncode == 0, (f"`trustbed wallet receive {' '.join(args)}` exited {p.returncode}\n"
                                   f"stderr: {p.stderr[-3000:]}\nstdout: {p.stdout[-3000:]}")
    return p


def _run_with_stdin(offer: str, args, stdin: str):
    import subprocess
    from harness import trustbed_binary
    return subprocess.run([str(trustbed_binary()), "wallet", "receive", offer, *args], input=stdin, capture_output=True,
                          text=True, timeout=TIMEOUT)


def lines(p) -> list[str]:
    return [line.strip() for line in p.stdout.splitlines()]


def assert_line(p, text: str) -> None:
    assert any(text in line for line in lines(p)), f"no output line contains {text!r}:\n{p.stdout[-3000:]}"


# ---------------------------------------------------------------------------- receive


def test_receive_sd_jwt_pre_authorized_with_tx_code(pid, issuer):
    answer = admin_offer(issuer, pid.admin_token, persona(pid)["id"], [SD], tx_code=True)
    p = receive(answer["offer_url"], "--tx-code", answer["tx_code"], "--trust", issuer + "/iaca.pem")
    assert_line(p, f"credential 1/1: {SD} (dc+sd-jwt): verified")
    assert_line(p, "token_type: Bearer")
    assert_line(p, "check: x5c chain to the trusted IACA")
    assert_line(p, "check: cnf.jwk = proof key")
    assert_line(p, f"check: vct {SD}")
    assert_line(p, "status: valid")
    assert persona(pid)["family_name"] in p.stdout, "the disclosed claims should include the persona's family_name"


def test_receive_mdoc_with_dpop(pid, issuer):
    answer = admin_offer(issuer, pid.admin_token, persona(pid)["id"], [MDOC])
    p = receive(answer["offer_url"], "--dpop", "--trust", issuer + "/iaca.pem")
    assert_line(p, f"credential 1/1: {MDOC} (mso_mdoc): verified")
    assert_line(p, "token_type: DPoP")
    assert_line(p, "check: deviceKey = proof key")
    assert_line(p, "check: x5chain to the trusted IACA")
    assert_line(p, "status: valid")


def test_receive_sd_jwt_with_dpop_and_batch_as_json(pid, issuer):
    answer = admin_offer(issuer, pid.admin_token, persona(pid)["id"], [SD, MDOC])
    p = receive(answer["offer_url"], "--dpop", "--format", "dc+sd-jwt", "--batch", "3", "--json")
    doc = json.loads(p.stdout)
    assert doc["token_type"].lower() == "dpop", doc["token_type"]
    assert [c["credential_configuration_id"] for c in doc["credentials"]] == [SD] * 3, doc["credentials"]
    assert all(c["verified"] and c["status"]["status"] == "valid" for c in doc["credentials"])
    # Three fresh proof keys: three different holder bindings.
    assert len({json.dumps(c["claims"]["cnf"], sort_keys=True) for c in doc["credentials"]}) == 3


def test_receive_mdoc_offer_by_value_without_dpop(pid, issuer):
    answer = admin_offer(issuer, pid.admin_token, persona(pid)["id"], [MDOC])
    offer = answer.get("offer_url_by_value") or json.dumps(answer["credential_offer"])
    p = receive(offer)
    assert_line(p, f"credential 1/1: {MDOC} (mso_mdoc): verified")
    assert_line(p, "token_type: Bearer")


def test_receive_offer_json_and_credential_offer_uri(pid, issuer):
    answer = admin_offer(issuer, pid.admin_token, persona(pid)["id"], [SD])
    receive(json.dumps(answer["credential_offer"]), "--no-status")
    answer = admin_offer(issuer, pid.admin_token, persona(pid)["id"], [SD])
    p = receive(pid.local(answer["credential_offer_uri"]), "--no-status")
    assert_line(p, f"credential 1/1: {SD} (dc+sd-jwt): verified")


def test_receive_tx_code_from_stdin(pid, issuer):
    answer = admin_offer(issuer, pid.admin_token, persona(pid)["id"], [SD], tx_code=True)
    p = receive(answer["offer_url"], "--no-status", stdin=answer["tx_code"] + "\n")
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Transaction code" in p.stderr, p.stderr[-1000:]


def test_receive_wrong_tx_code_fails_with_the_spec_error(pid, issuer):
    answer = admin_offer(issuer, pid.admin_token, persona(pid)["id"], [SD], tx_code=True)
    wrong = "0" * len(answer["tx_code"]) if answer["tx_code"] != "0" * len(answer["tx_code"]) else "1" * len(answer["tx_code"])
    p = receive(answer["offer_url"], "--tx-code", wrong, expect_ok=False)
    assert p.returncode != 0
    assert "invalid_grant" in p.stderr, f"the token endpoint's error JSON should be printed: {p.stderr[-1500:]}"


def test_receive_authorization_code_with_login_hint(pid, issuer):
    md = requests.get(issuer + "/.well-known/oauth-authorization-server", timeout=15).json()
    if not md.get("authorization_endpoint"):
        pytest.skip("the authorization server has no authorization_endpoint yet")
    who = persona(pid)["id"]
    answer = admin_offer(issuer, pid.admin_token, who, [SD], grant="authorization_code")
    p = receive(answer["offer_url"], "--login-hint", who, "--dpop", "--trust", issuer + "/iaca.pem")
    assert_line(p, "grant: authorization_code")
    assert_line(p, f"credential 1/1: {SD} (dc+sd-jwt): verified")


def test_receive_untrusted_iaca_fails(pid, issuer, tmp_path):
    # Another server's IACA: the credential's chain must not verify against it.
    other = tmp_path / "other-iaca.pem"
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    import datetime
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "Not the issuer's IACA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(key, hashes.SHA256()))
    other.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    answer = admin_offer(issuer, pid.admin_token, persona(pid)["id"], [SD])
    p = receive(answer["offer_url"], "--trust", str(other), expect_ok=False)
    assert p.returncode != 0
    assert "verification failed" in p.stderr, p.stderr[-1500:]


def test_receive_rejects_garbage_offer(trustbed_bin):
    p = run_cli("wallet", "receive", "not an offer", timeout=30)
    assert p.returncode != 0
    assert "offer" in p.stderr.lower(), p.stderr


# ---------------------------------------------------------------------------- bench


@pytest.mark.parametrize("configuration,extra", [(SD, []), (MDOC, ["--dpop"]), (SD, ["--batch", "10"])])
def test_bench_smoke(pid, issuer, configuration, extra):
    p = run_cli("wallet", "bench", "--issuer", issuer, "--admin-token", pid.admin_token, "--persona", persona(pid)["id"],
                "--configuration", configuration, "--concurrency", "2", "--count", "20", "--verify-every", "10", "--json",
                *extra, timeout=TIMEOUT)
    assert p.returncode == 0, f"bench exited {p.returncode}: {p.stderr[-2000:]}\n{p.stdout[-2000:]}"
    report = json.loads(p.stdout)
    per_flow = 10 if "--batch" in extra else 1
    assert report["errors"] == {}, report["errors"]
    assert report["flows"] == 20 and report["credentials"] == 20 * per_flow, report
    assert report["verified_samples"] == 2, report
    for step in ("offer", "token", "nonce", "credential"):
        assert report["steps"][step]["count"] == 20, report["steps"]
    # The client's own CPU, which on shared cores is taken from the issuer.
    assert report["client_cpu_seconds"] > 0 and report["client_cpu_ms_per_flow"] == pytest.approx(
        report["client_cpu_seconds"] * 1000 / 20), report


def bench_thread_policies(pid, issuer, *extra: str) -> tuple[dict, set[int]]:
    """Runs a 3-second bench and reads the scheduling policy (field 41 of /proc/PID/task/TID/stat)
    of its client threads ("bench-N") while they run: returns the report and the policies seen."""
    from harness import trustbed_binary
    import subprocess
    proc = subprocess.Popen([str(trustbed_binary()), "wallet", "bench", "--issuer", issuer, "--admin-token", pid.admin_token,
                             "--persona", persona(pid)["id"], "--concurrency", "2", "--duration", "3", "--json", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    policies: set[int] = set()
    deadline = time.time() + 30
    while proc.poll() is None and time.time() < deadline and not policies:
        for task in Path(f"/proc/{proc.pid}/task").glob("*"):
            try:
                if (task / "comm").read_text().strip().startswith("bench-"):
                    stat = (task / "stat").read_text()
                    policies.add(int(stat[stat.rindex(")") + 2:].split()[38]))
            except (OSError, ValueError):
                pass
        time.sleep(0.05)
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, f"bench exited {proc.returncode}: {err[-2000:]}"
    return json.loads(out), policies


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_bench_threads_run_under_sched_batch_unless_told_otherwise(pid, issuer):
    """The client threads yield to the issuer on shared cores: SCHED_BATCH (3) by default, the
    default policy (SCHED_OTHER, 0) with --scheduling normal; the report says which."""
    report, policies = bench_thread_policies(pid, issuer)
    assert policies == {3} and report["scheduling"] == "batch" and report["errors"] == {}, (policies, report)
    report, policies = bench_thread_policies(pid, issuer, "--scheduling", "normal")
    assert policies == {0} and report["scheduling"] == "normal" and report["errors"] == {}, (policies, report)
    bad = run_cli("wallet", "bench", "--issuer", issuer, "--scheduling", "fifo", timeout=TIMEOUT)
    assert bad.returncode != 0 and "scheduling" in bad.stderr, bad.stderr


# ---------------------------------------------------------------------------- an independent mock issuer
#
# The CLI wallet must work with any OpenID4VCI 1.0 issuer, not only ours, so it is also run
# against this one: written in Python from the specs (joserfc, cryptography, cbor2), with the
# issuer identifier carrying a path (metadata only at the inserted well-known URLs, §12.2.2 and
# RFC 8414 §3.1), DPoP nonces demanded by both the AS and the RS (RFC 9449 §8, §9),
# credential_identifiers in the token response (§6.2), deferred issuance (§9), encrypted
# responses (§10), notifications (§11) and a status list with a suspended entry.

import base64
import datetime
import hashlib
import secrets
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils
from cryptography.x509.oid import NameOID
from joserfc import jwe, jws
from joserfc.jwk import ECKey

PRE = "urn:ietf:params:oauth:grant-type:pre-authorized_code"


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64u_json(token_part: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(token_part + "=" * (-len(token_part) % 4)))


def make_pki():
    """An IACA root and a document signer under it (SKI/AKI, key usage, the mdoc DS EKU)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    iaca_key, ds_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    iaca_name = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "UT"), x509.NameAttribute(NameOID.COMMON_NAME, "Mock IACA")])
    ds_name = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "UT"), x509.NameAttribute(NameOID.COMMON_NAME, "Mock DS")])
    iaca_ski = x509.SubjectKeyIdentifier.from_public_key(iaca_key.public_key())
    iaca = (x509.CertificateBuilder().subject_name(iaca_name).issuer_name(iaca_name).public_key(iaca_key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .add_extension(iaca_ski, critical=False)
            .sign(iaca_key, hashes.SHA256()))
    ds = (x509.CertificateBuilder().subject_name(ds_name).issuer_name(iaca_name).public_key(ds_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=90))
          .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
          .add_extension(x509.ExtendedKeyUsage([x509.ObjectIdentifier("1.0.18013.5.1.2")]), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ds_key.public_key()), critical=False)
          .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(iaca_ski), critical=False)
          .sign(iaca_key, hashes.SHA256()))
    return iaca, ds, ds_key


class MockIssuer:
    def __init__(self, *, require_dpop: bool = False, deferred: bool = False, encrypt: bool = False, status_value: int = 0,
                 http11: bool = False, chunked: bool = False, drop_after: int | None = None, close_delimited: bool = False,
                 token_extra: str | None = None, bearer_only: bool = False, no_metadata: bool = False,
                 typeless_details: bool = False, no_as_metadata: bool = False):
        """http11: keep-alive connections (the default HTTP/1.0 closes each after one response);
        chunked: bodies in two chunks with a chunk extension; drop_after: close a keep-alive
        connection after that many responses without saying so (as servers do with idle ones);
        close_delimited: HTTP/1.0 bodies without Content-Length, ended by closing the connection;
        token_extra: raw JSON members added to each token response, whose access_token is then
        written with a \\u escape (the wallet reads only the members it uses);
        bearer_only: an AS that answers a DPoP-proofed token request with token_type Bearer (RFC
        9449 §5 allows it; the token is then not bound, and the RS refuses a DPoP proof with it);
        no_metadata: no well-known document at all (404); no_as_metadata: only the AS metadata
        missing (both placements, both suffixes); typeless_details: authorization_details
        entries without their required "type" (RFC 9396 §2), a peer's bug."""
        self.bearer_only, self.no_metadata, self.typeless_details = bearer_only, no_metadata, typeless_details
        self.no_as_metadata = no_as_metadata
        self.require_dpop, self.deferred, self.encrypt, self.status_value = require_dpop, deferred, encrypt, status_value
        self.chunked, self.drop_after, self.close_delimited, self.connections = chunked, drop_after, close_delimited, 0
        self.token_extra = token_extra
        self.iaca, self.ds, ds_key = make_pki()
        self.ds_jwk = ECKey.import_key(ds_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                            serialization.NoEncryption()))
        self.ds_key = ds_key
        self.x5c = [base64.b64encode(self.ds.public_bytes(serialization.Encoding.DER)).decode()]
        self.codes, self.tokens, self.nonces, self.transactions = {}, {}, set(), {}
        self.dpop_nonces, self.notifications, self.offers, self.requests = set(), [], {}, []
        self.lock = threading.Lock()
        handler = type("Handler", (MockHandler,), {"mock": self, "protocol_version": "HTTP/1.1" if http11 else "HTTP/1.0"})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.issuer = self.base + "/mock"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()

    def iaca_pem(self, path) -> str:
        path.write_bytes(self.iaca.public_bytes(serialization.Encoding.PEM))
        return str(path)

    def offer(self, configuration_ids, *, tx_code: str | None = None, grant: str = PRE) -> dict:
        code = secrets.token_urlsafe(16)
        self.codes[code] = {"tx_code": tx_code, "configurations": list(configuration_ids)}
        grants = {PRE: {"pre-authorized_code": code}} if grant == PRE else {"authorization_code": {"issuer_state": code}}
        if tx_code:
            grants[PRE]["tx_code"] = {"input_mode": "numeric", "length": len(tx_code), "description": "the code"}
        return {"credential_issuer": self.issuer, "credential_configuration_ids": list(configuration_ids), "grants": grants}

    def offer_by_reference(self, offer: dict) -> str:
        oid = secrets.token_urlsafe(8)
        self.offers[oid] = offer
        return "openid-credential-offer://?" + urlencode({"credential_offer_uri": f"{self.issuer}/offers/{oid}"})

    # -- metadata

    def metadata(self) -> dict:
        md = {
            "credential_issuer": self.issuer, "authorization_servers": [self.issuer],
            "credential_endpoint": self.issuer + "/credential", "nonce_endpoint": self.issuer + "/nonce",
            "deferred_credential_endpoint": self.issuer + "/deferred", "notification_endpoint": self.issuer + "/notification",
            "batch_credential_issuance": {"batch_size": 4},
            "credential_configurations_supported": {
                "pid-sd": {"format": "dc+sd-jwt", "vct": "urn:mock:pid", "scope": "pid_sd",
                           "proof_types_supported": {"jwt": {"proof_signing_alg_values_supported": ["ES256"]}}},
                "pid-mdoc": {"format": "mso_mdoc", "doctype": "org.mock.pid", "scope": "pid_mdoc",
                             "proof_types_supported": {"jwt": {"proof_signing_alg_values_supported": ["ES256"]}}},
            },
        }
        if self.encrypt:
            md["credential_response_encryption"] = {"alg_values_supported": ["ECDH-ES"], "enc_values_supported": ["A128GCM"],
                                                    "encryption_required": True}
        return md

    def as_metadata(self) -> dict:
        return {"issuer": self.issuer, "token_endpoint": self.issuer + "/token", "authorization_endpoint": self.issuer + "/authorize",
                "pushed_authorization_request_endpoint": self.issuer + "/par", "dpop_signing_alg_values_supported": ["ES256"],
                "code_challenge_methods_supported": ["S256"], "authorization_response_iss_parameter_supported": True,
                "pre-authorized_grant_anonymous_access_supported": True}

    # -- checks

    def check_dpop(self, headers, method: str, url: str, access_token: str | None):
        """Returns (jwk thumbprint input, None) or (None, error kind). Demands a nonce first."""
        proof = headers.get("DPoP")
        if not proof:
            return None, "missing"
        header = b64u_json(proof.split(".")[0])
        assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256" and "d" not in header["jwk"], header
        claims = json.loads(jws.deserialize_compact(proof, ECKey.import_key(header["jwk"])).payload)
        assert claims["htm"] == method and claims["htu"] == url, (claims, method, url)
        assert abs(claims["iat"] - time.time()) < 60 and claims["jti"], claims
        if access_token is not None:
            assert claims["ath"] == b64u(hashlib.sha256(access_token.encode()).digest()), claims
        if claims.get("nonce") not in self.dpop_nonces:
            return None, "nonce"
        return header["jwk"], None

    def check_proof(self, proof: str, client_id: str | None) -> dict:
        header = b64u_json(proof.split(".")[0])
        assert header["typ"] == "openid4vci-proof+jwt" and header["alg"] == "ES256", header
        claims = json.loads(jws.deserialize_compact(proof, ECKey.import_key(header["jwk"])).payload)
        assert claims["aud"] == self.issuer, claims
        # Appendix F.1: iss = the client_id, absent in the anonymous pre-authorized flow.
        assert claims.get("iss") == client_id, (claims, client_id)
        with self.lock:
            assert claims["nonce"] in self.nonces, claims
        return header["jwk"]

    # -- credentials

    def status_claim(self) -> dict:
        return {"status_list": {"idx": 3, "uri": self.issuer + "/status"}}

    def sd_jwt(self, holder_jwk: dict) -> str:
        disclosures = []
        def disclose(name, value):
            d = b64u(json.dumps([b64u(secrets.token_bytes(16)), name, value]).encode())
            disclosures.append(d)
            return b64u(hashlib.sha256(d.encode()).digest())
        address = {"_sd": [disclose("locality", "Zürich"), disclose("country", "CH")]}
        payload = {"iss": self.issuer, "iat": int(time.time()), "exp": int(time.time()) + 3600, "vct": "urn:mock:pid",
                   "cnf": {"jwk": holder_jwk}, "status": self.status_claim(), "_sd_alg": "sha-256",
                   "_sd": sorted([disclose("given_name", "Zoë"), disclose("family_name", "Mock"), disclose("address", address)])}
        header = {"alg": "ES256", "typ": "dc+sd-jwt", "x5c": self.x5c}
        jwt = jws.serialize_compact(header, json.dumps(payload).encode(), self.ds_jwk, algorithms=["ES256"])
        return jwt + "~" + "~".join(disclosures) + "~"

    def mdoc(self, holder_jwk: dict) -> str:
        ns = "org.mock.pid.1"
        items, digests = [], {}
        for i, (name, value) in enumerate([("family_name", "Mock"), ("given_name", "Zoë"),
                                           ("birth_date", cbor2.CBORTag(1004, "1990-02-03"))]):
            item = cbor2.dumps({"digestID": i, "random": secrets.token_bytes(16), "elementIdentifier": name, "elementValue": value})
            tagged = cbor2.CBORTag(24, item)
            items.append(tagged)
            digests[i] = hashlib.sha256(cbor2.dumps(tagged)).digest()
        def tdate(t):
            return cbor2.CBORTag(0, datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
        now_s = int(time.time()) - 5
        device_key = {1: 2, -1: 1, -2: base64.urlsafe_b64decode(holder_jwk["x"] + "=="), -3: base64.urlsafe_b64decode(holder_jwk["y"] + "==")}
        mso = {"version": "1.0", "digestAlgorithm": "SHA-256", "valueDigests": {ns: digests},
               "deviceKeyInfo": {"deviceKey": device_key}, "docType": "org.mock.pid",
               "validityInfo": {"signed": tdate(now_s), "validFrom": tdate(now_s), "validUntil": tdate(now_s + 86400)},
               "status": self.status_claim()}
        payload = cbor2.dumps(cbor2.CBORTag(24, cbor2.dumps(mso)))
        protected = cbor2.dumps({1: -7})
        to_sign = cbor2.dumps(["Signature1", protected, b"", payload])
        r, s = utils.decode_dss_signature(self.ds_key.sign(to_sign, ec.ECDSA(hashes.SHA256())))
        signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        issuer_auth = [protected, {33: self.ds.public_bytes(serialization.Encoding.DER)}, payload, signature]
        return b64u(cbor2.dumps({"nameSpaces": {ns: items}, "issuerAuth": issuer_auth}))

    def status_list(self) -> str:
        raw = bytearray(4)
        raw[0] = (self.status_value & 3) << 6  # idx 3: bits 6-7 of byte 0 (2 bits per entry, LSB first)
        claims = {"sub": self.issuer + "/status", "iat": int(time.time()), "exp": int(time.time()) + 600, "ttl": 60,
                  "status_list": {"bits": 2, "lst": b64u(zlib.compress(bytes(raw)))}}
        return jws.serialize_compact({"alg": "ES256", "typ": "statuslist+jwt", "x5c": self.x5c}, json.dumps(claims).encode(),
                                     self.ds_jwk, algorithms=["ES256"])


class MockHandler(BaseHTTPRequestHandler):
    mock: MockIssuer

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        self.served = 0
        with self.mock.lock:
            self.mock.connections += 1

    def send(self, status: int, body=None, *, content_type: str = "application/json", headers: dict | None = None):
        data = b"" if body is None else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if self.mock.chunked and status not in (204, 304):
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            half = len(data) // 2
            for part in (data[:half], data[half:]):
                if part:
                    self.wfile.write(b"%x;part=1\r\n" % len(part) + part + b"\r\n")
            self.wfile.write(b"0\r\nX-Trailer: ignored\r\n\r\n")
        else:
            if not self.mock.close_delimited:
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        self.served += 1
        if self.mock.drop_after and self.served >= self.mock.drop_after:
            self.close_connection = True

    def new_dpop_nonce(self) -> str:
        nonce = secrets.token_urlsafe(8)
        self.mock.dpop_nonces.add(nonce)
        return nonce

    def do_GET(self):
        m, path = self.mock, urlsplit(self.path).path
        m.requests.append(("GET", path))
        if (m.no_metadata and "/.well-known/" in path) or (m.no_as_metadata and (
                "/.well-known/oauth-authorization-server" in path or "/.well-known/openid-configuration" in path)):
            return self.send(404, {"error": "not_found"})
        if path == "/.well-known/openid-credential-issuer/mock":
            return self.send(200, m.metadata())
        if path == "/.well-known/oauth-authorization-server/mock":
            return self.send(200, m.as_metadata())
        if path.startswith("/mock/offers/"):
            return self.send(200, m.offers[path.rsplit("/", 1)[1]])
        if path == "/mock/status":
            return self.send(200, m.status_list(), content_type="application/statuslist+jwt")
        if path == "/mock/authorize":
            q = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
            request = m.codes.pop(q["request_uri"])
            code = secrets.token_urlsafe(12)
            m.codes[code] = {"tx_code": None, "configurations": request["configurations"], "pkce": request["code_challenge"],
                             "redirect_uri": request["redirect_uri"], "client_id": q["client_id"]}
            target = request["redirect_uri"] + "?" + urlencode({"code": code, "state": request["state"], "iss": m.issuer})
            return self.send(302, None, headers={"Location": target})
        return self.send(404, {"error": "not_found"})

    def do_POST(self):
        m, path = self.mock, urlsplit(self.path).path
        m.requests.append(("POST", path))
        body = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
        url = m.base + path
        if path == "/mock/nonce":
            nonce = secrets.token_urlsafe(12)
            with m.lock:
                m.nonces.add(nonce)
            return self.send(200, {"c_nonce": nonce})
        if path == "/mock/admin/offers":  # Trustbed's admin API shape, for `wallet bench`
            if self.headers.get("Authorization") != "Bearer admin-secret":
                return self.send(401, {"error": "invalid_token"})
            request = json.loads(body)
            assert request["grant"] == "pre-authorized_code" and request["tx_code"] is False, request
            return self.send(201, {"credential_offer": m.offer(request["credential_configuration_ids"])})
        if path == "/mock/par":
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            assert form["code_challenge_method"] == "S256" and form["response_type"] == "code", form
            details = json.loads(form["authorization_details"])
            uri = "urn:ietf:params:oauth:request_uri:" + secrets.token_urlsafe(8)
            m.codes[uri] = {**form, "configurations": [d["credential_configuration_id"] for d in details]}
            return self.send(201, {"request_uri": uri, "expires_in": 60})
        if path == "/mock/token":
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            jwk, problem = m.check_dpop(self.headers, "POST", url, None)
            if problem == "missing" and m.require_dpop:
                return self.send(400, {"error": "invalid_dpop_proof", "error_description": "DPoP required"})
            if problem == "nonce":
                return self.send(400, {"error": "use_dpop_nonce"}, headers={"DPoP-Nonce": self.new_dpop_nonce()})
            if form["grant_type"] == PRE:
                grant = m.codes.pop(form.get("pre-authorized_code"), None)
                if grant is None or grant["tx_code"] != form.get("tx_code"):
                    return self.send(400, {"error": "invalid_grant", "error_description": "unknown code or wrong tx_code"})
            else:
                grant = m.codes.pop(form["code"])
                challenge = b64u(hashlib.sha256(form["code_verifier"].encode()).digest())
                assert challenge == grant["pkce"] and form["redirect_uri"] == grant["redirect_uri"], (form, grant)
            token = "tok-" + secrets.token_urlsafe(16)
            if m.bearer_only:
                jwk = None
            identifiers = {c: [f"{c}-identifier"] for c in grant["configurations"]}
            m.tokens[token] = {"dpop": jwk, "identifiers": identifiers, "client_id": grant.get("client_id")}
            details = [{"type": "openid_credential", "credential_configuration_id": c, "credential_identifiers": ids}
                       for c, ids in identifiers.items()]
            if m.typeless_details:
                details = [{k: v for k, v in d.items() if k != "type"} for d in details]
            answer = {"access_token": token, "token_type": "DPoP" if jwk else "Bearer", "expires_in": 300,
                      "authorization_details": details}
            if m.token_extra is None:
                return self.send(200, answer)
            text = json.dumps(answer).replace('"tok-', '"tok\\u002d', 1)
            return self.send(200, text[:-1] + ", " + m.token_extra + "}")
        scheme, _, token = self.headers.get("Authorization", "").partition(" ")
        grant = m.tokens.get(token)
        if grant is None:
            return self.send(401, {"error": "invalid_token"}, headers={"WWW-Authenticate": "Bearer"})
        if grant["dpop"]:
            jwk, problem = m.check_dpop(self.headers, "POST", url, token)
            if problem == "nonce":
                return self.send(401, {"error": "use_dpop_nonce"}, headers={
                    "WWW-Authenticate": 'DPoP error="use_dpop_nonce"', "DPoP-Nonce": self.new_dpop_nonce()})
            assert scheme == "DPoP" and jwk == grant["dpop"], (scheme, jwk)
        else:
            assert scheme == "Bearer", scheme
            # RFC 9449 §7.1 binds a proof to a DPoP token; a Bearer token comes without one.
            if self.headers.get("DPoP") is not None:
                return self.send(400, {"error": "invalid_request", "error_description": "DPoP proof with a Bearer token"})
        request = json.loads(body)
        if path == "/mock/credential":
            identifier = request["credential_identifier"]
            configuration = identifier.removesuffix("-identifier")
            assert identifier in grant["identifiers"][configuration], request
            assert "credential_configuration_id" not in request, request
            keys = [m.check_proof(p, grant["client_id"]) for p in request["proofs"]["jwt"]]
            make = m.sd_jwt if configuration == "pid-sd" else m.mdoc
            credentials = [{"credential": make(k)} for k in keys]
            if m.deferred:
                tid = secrets.token_urlsafe(8)
                m.transactions[tid] = {"credentials": credentials, "polls": 0}
                return self.reply(request, 202, {"transaction_id": tid, "interval": 1})
            return self.reply(request, 200, {"credentials": credentials, "notification_id": "n-" + secrets.token_urlsafe(6)})
        if path == "/mock/deferred":
            transaction = m.transactions[request["transaction_id"]]
            transaction["polls"] += 1
            if transaction["polls"] < 2:
                return self.send(202, {"transaction_id": request["transaction_id"], "interval": 1})
            return self.send(200, {"credentials": transaction["credentials"], "notification_id": "n-deferred"})
        if path == "/mock/notification":
            m.notifications.append(request)
            return self.send(204)
        return self.send(404, {"error": "not_found"})

    def reply(self, request: dict, status: int, body: dict):
        if not self.mock.encrypt:
            return self.send(status, body)
        spec = request["credential_response_encryption"]
        assert spec["enc"] == "A128GCM" and spec["jwk"]["alg"] == "ECDH-ES" and "d" not in spec["jwk"], spec
        token = jwe.encrypt_compact({"alg": "ECDH-ES", "enc": "A128GCM"}, json.dumps(body).encode(),
                                    ECKey.import_key(spec["jwk"]), algorithms=["ECDH-ES", "A128GCM"])
        return self.send(status, token, content_type="application/jwt")


@pytest.fixture
def mock_issuer():
    made = []

    def factory(**kw) -> MockIssuer:
        made.append(MockIssuer(**kw))
        return made[-1]

    yield factory
    for m in made:
        m.stop()


def test_mock_issuer_sd_jwt_by_reference_with_tx_code_and_trust(mock_issuer, trustbed_bin, tmp_path):
    m = mock_issuer()
    offer = m.offer_by_reference(m.offer(["pid-sd", "pid-mdoc"], tx_code="4711"))
    p = receive(offer, "--tx-code", "4711", "--trust", m.iaca_pem(tmp_path / "iaca.pem"))
    assert_line(p, "credential 1/1: pid-sd (dc+sd-jwt): verified")
    assert_line(p, "credential 1/1: pid-mdoc (mso_mdoc): verified")
    assert_line(p, "check: x5c chain to the trusted IACA")
    assert_line(p, "check: x5chain to the trusted IACA (document signer EKU)")
    assert_line(p, "status: valid")
    disclosed = [line.split(":", 1)[1].split() for line in lines(p) if line.startswith("disclosed:")]
    assert [sorted(d) for d in disclosed] == [sorted(["given_name", "family_name", "address", "address.locality", "address.country"])], disclosed
    assert "Zoë" in p.stdout and "1990-02-03" in p.stdout, p.stdout
    # credential_identifier (from authorization_details) was used, and each credential acknowledged.
    assert sorted(n["event"] for n in m.notifications) == ["credential_accepted"] * 2, m.notifications


def test_mock_issuer_dpop_nonces_batch_and_suspended_status(mock_issuer, trustbed_bin):
    m = mock_issuer(status_value=2)
    p = receive(json.dumps(m.offer(["pid-mdoc"])), "--dpop", "--batch", "3", "--json")
    doc = json.loads(p.stdout)
    assert doc["token_type"] == "DPoP" and len(doc["credentials"]) == 3, doc
    assert {c["status"]["status"] for c in doc["credentials"]} == {"suspended"}, doc["credentials"]
    # Both the AS and the RS asked for a nonce once each; the wallet retried and went on.
    assert m.requests.count(("POST", "/mock/token")) == 2 and m.requests.count(("POST", "/mock/credential")) == 2, m.requests


def test_mock_issuer_insists_on_dpop(mock_issuer, trustbed_bin):
    m = mock_issuer(require_dpop=True)
    p = receive(json.dumps(m.offer(["pid-sd"])), "--no-status")
    assert_line(p, "token_type: DPoP")


def test_mock_issuer_deferred_and_encrypted(mock_issuer, trustbed_bin):
    m = mock_issuer(deferred=True, encrypt=True)
    p = receive(json.dumps(m.offer(["pid-sd"])), "--dpop")
    assert_line(p, "credential 1/1: pid-sd (dc+sd-jwt) [deferred]: verified")
    assert m.requests.count(("POST", "/mock/deferred")) == 2, m.requests
    assert m.notifications == [{"notification_id": "n-deferred", "event": "credential_accepted"}], m.notifications


def test_mock_issuer_authorization_code_with_par(mock_issuer, trustbed_bin):
    m = mock_issuer()
    p = receive(json.dumps(m.offer(["pid-mdoc"], grant="authorization_code")), "--dpop", "--login-hint", "zoe")
    assert_line(p, "grant: authorization_code")
    assert_line(p, "credential 1/1: pid-mdoc (mso_mdoc): verified")


def test_mock_issuer_wrong_tx_code(mock_issuer, trustbed_bin):
    m = mock_issuer()
    p = receive(json.dumps(m.offer(["pid-sd"], tx_code="1234")), "--tx-code", "9999", expect_ok=False)
    assert p.returncode != 0
    assert 'token endpoint: HTTP 400: {"error": "invalid_grant"' in p.stderr, p.stderr


@pytest.mark.parametrize("extra", [[], ["--dpop", "--batch", "2", "--configuration", "pid-mdoc"]])
def test_mock_issuer_bench(mock_issuer, trustbed_bin, extra):
    m = mock_issuer()
    p = run_cli("wallet", "bench", "--issuer", m.issuer, "--admin-token", "admin-secret", "--persona", "zoe", "--concurrency", "3",
                "--count", "30", "--verify-every", "10", "--json", *extra, timeout=TIMEOUT)
    assert p.returncode == 0, f"bench exited {p.returncode}: {p.stderr[-2000:]}\n{p.stdout[-2000:]}"
    report = json.loads(p.stdout)
    assert report["errors"] == {}, report["errors"]
    assert report["flows"] == 30 and report["credentials"] == 30 * (2 if extra else 1), report
    assert report["verified_samples"] == 3, report
    assert report["format"] == ("mso_mdoc" if extra else "dc+sd-jwt"), report
    for step in ("offer", "token", "nonce", "credential"):
        assert report["steps"][step]["count"] == 30 and report["steps"][step]["p99_ms"] >= report["steps"][step]["p50_ms"] > 0

    # HTTP/1.0: one connection per exchange (4 per flow, plus the metadata), each closed by the server.
    if not extra:
        assert m.connections >= 4 * 30, m.connections

    # A wrong admin token: every flow fails at the offer step, grouped as one kind, exit status 1.
    p = run_cli("wallet", "bench", "--issuer", m.issuer, "--admin-token", "wrong", "--count", "5", "--json", timeout=TIMEOUT)
    assert p.returncode == 1
    assert json.loads(p.stdout)["errors"] == {"offer: HTTP 401 invalid_token": 5}, p.stdout


@pytest.mark.parametrize("options", [{"http11": True, "chunked": True}, {"http11": True, "drop_after": 3},
                                     {"http11": True, "chunked": True, "drop_after": 5}, {"close_delimited": True}])
def test_mock_issuer_bench_over_keep_alive(mock_issuer, trustbed_bin, options):
    """The bench's lean HTTP/1.1 client (PlainHTTPConnection): connections are kept alive and
    reused, chunked bodies (with extensions and trailers) are decoded, a connection the server
    closed without saying so is replaced and the request sent again, with no flow lost, and an
    HTTP/1.0 body without Content-Length is read to the end of its connection."""
    m = mock_issuer(**options)
    p = run_cli("wallet", "bench", "--issuer", m.issuer, "--admin-token", "admin-secret", "--persona", "zoe", "--concurrency", "3",
                "--count", "30", "--verify-every", "10", "--dpop", "--json", timeout=TIMEOUT)
    assert p.returncode == 0, f"bench exited {p.returncode}: {p.stderr[-2000:]}\n{p.stdout[-2000:]}"
    report = json.loads(p.stdout)
    assert report["errors"] == {}, report["errors"]
    assert report["flows"] == 30 and report["credentials"] == 30 and report["verified_samples"] == 3, report
    exchanges = len(m.requests)
    if "close_delimited" in options:
        assert m.connections == exchanges, (m.connections, exchanges)
    elif "drop_after" in options:
        # Every drop_after-th response ends its connection; each one is replaced once.
        assert m.connections >= exchanges // options["drop_after"], (m.connections, exchanges)
    else:
        # One connection for the metadata and one per thread, whatever the number of exchanges.
        assert m.connections <= 4 < exchanges, (m.connections, exchanges)


# Members the wallet does not read, with escapes, non-ASCII text, numbers and nesting: skipped, not
# built. Then the same response made malformed in a member it does not read, or with a repeated
# member name, at the top level or inside a member it does not read: refused all the same.
PREVIEWS = ('"credential_previews": [{"claims": {"name": "Zo\\u00eb \\"Z\\" \\\\ \\/", "city": "K\u00f6ln", '
            '"n": [1, -2.5e3, 0.0, true, false, null, {}, []], "deep": {"a": {"b": [[{"c": "\\ud83d\\ude00"}]]}}}}], "x": 1E2')


@pytest.mark.parametrize("extra, ok", [(PREVIEWS, True), ('"credential_previews": [{"name": "bad \\x escape"}]', False),
                                       ('"credential_previews": [{"n": 1e999}]', False), ('"x": [1, 2', False),
                                       ('"token_type": "Bearer"', False), ('"x": "\u0001"', False),
                                       ('"credential_previews": [{"n": 1, "n": 2}]', False)])
def test_mock_issuer_token_response_members(mock_issuer, trustbed_bin, extra, ok):
    m = mock_issuer(http11=True, token_extra=extra)
    p = run_cli("wallet", "bench", "--issuer", m.issuer, "--admin-token", "admin-secret", "--persona", "zoe", "--concurrency", "2",
                "--count", "6", "--verify-every", "3", "--json", timeout=TIMEOUT)
    report = json.loads(p.stdout)
    if ok:
        assert p.returncode == 0 and report["errors"] == {} and report["flows"] == 6, report
    else:
        assert p.returncode == 1 and report["errors"] == {"token: HTTP 200": 6}, report
    p = receive(json.dumps(m.offer(["pid-sd"])), "--no-status", expect_ok=ok)
    if ok:
        assert_line(p, "credential 1/1: pid-sd (dc+sd-jwt): verified")
    else:
        assert "token endpoint: HTTP 200: {" in p.stderr, p.stderr


def test_mock_issuer_bench_with_curl(mock_issuer, trustbed_bin):
    """--curl sends the bench's requests through libcurl, as `wallet receive` does."""
    m = mock_issuer(http11=True, chunked=True)
    p = run_cli("wallet", "bench", "--issuer", m.issuer, "--admin-token", "admin-secret", "--persona", "zoe", "--concurrency", "2",
                "--count", "10", "--curl", "--json", timeout=TIMEOUT)
    assert p.returncode == 0, f"bench exited {p.returncode}: {p.stderr[-2000:]}\n{p.stdout[-2000:]}"
    report = json.loads(p.stdout)
    assert report["errors"] == {} and report["flows"] == 10, report


def test_bench_does_not_spin_when_the_issuer_goes_away(mock_issuer, trustbed_bin):
    """When the issuer disappears mid-run (the benchmark's kill -9), each thread pauses after a
    transport error instead of retrying connect(2) in a tight loop on the shared cores."""
    import subprocess
    m = mock_issuer()  # HTTP/1.0: a connection per exchange, so closing the listener ends the issuer
    bench = subprocess.Popen([str(trustbed_bin), "wallet", "bench", "--issuer", m.issuer, "--admin-token", "admin-secret",
                              "--persona", "zoe", "--concurrency", "2", "--duration", "2.5", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    m.stop()
    m.httpd.server_close()
    out, err = bench.communicate(timeout=TIMEOUT)
    report = json.loads(out)
    transport = sum(n for kind, n in report["errors"].items() if "transport" in kind)
    # About 1.5 s without an issuer, 2 threads, a 20 ms pause: some 150 errors, not tens of thousands.
    assert 0 < transport <= 400, report["errors"]
    assert report["flows"] > 0, report


def test_dpop_wallet_goes_on_with_a_bearer_token(mock_issuer, trustbed_bin):
    """RFC 9449 §5: the AS may answer a DPoP client with a Bearer token; the wallet uses it as one
    (no DPoP proof at the credential endpoint) and says so."""
    m = mock_issuer(bearer_only=True)
    p = receive(json.dumps(m.offer(["pid-sd"])), "--dpop", "--no-status")
    assert_line(p, "credential 1/1: pid-sd (dc+sd-jwt): verified")
    assert "token_type: Bearer" in p.stdout, p.stdout
    assert "Bearer token although the request carried a DPoP proof" in p.stdout + p.stderr, (p.stdout, p.stderr)
    doc = json.loads(receive(json.dumps(m.offer(["pid-sd"])), "--dpop", "--no-status", "--json").stdout)
    assert doc["token_type"] == "Bearer" and any("RFC 9449" in w for w in doc["warnings"]), doc.get("warnings")


def test_missing_metadata_names_every_url_tried(mock_issuer, trustbed_bin):
    m = mock_issuer(no_metadata=True)
    p = receive(json.dumps(m.offer(["pid-sd"])), expect_ok=False)
    assert p.returncode == 1, p
    for url in (m.base + "/.well-known/openid-credential-issuer/mock", m.issuer + "/.well-known/openid-credential-issuer"):
        assert url in p.stderr, (url, p.stderr)
    assert "Traceback" not in p.stderr and "Fatal error" not in p.stderr, p.stderr


def test_missing_as_metadata_names_every_url_tried(mock_issuer, trustbed_bin):
    m = mock_issuer(no_as_metadata=True)
    p = receive(json.dumps(m.offer(["pid-sd"])), expect_ok=False)
    assert p.returncode == 1, p
    for suffix in ("oauth-authorization-server", "openid-configuration"):
        for url in (f"{m.base}/.well-known/{suffix}/mock", f"{m.issuer}/.well-known/{suffix}"):
            assert url in p.stderr, (url, p.stderr)


def test_typeless_authorization_details_are_read_with_one_warning(mock_issuer, trustbed_bin):
    m = mock_issuer(typeless_details=True)
    p = receive(json.dumps(m.offer(["pid-sd", "pid-mdoc"])), "--no-status")
    assert_line(p, "credential 1/1: pid-sd (dc+sd-jwt): verified")
    assert_line(p, "credential 1/1: pid-mdoc (mso_mdoc): verified")
    warnings = [line for line in (p.stdout + p.stderr).splitlines() if 'without "type"' in line]
    # Printed once in the result (and once on stderr), not once per entry.
    assert len([w for w in p.stdout.splitlines() if 'without "type"' in w]) == 1, p.stdout
    assert warnings, (p.stdout, p.stderr)
    # The identifiers were read from the typeless entries: credential_identifier was sent.
    assert m.requests.count(("POST", "/mock/credential")) == 2, m.requests
