"""PIN recovery and PID renewal at the Wallet Provider (issue 21, items 3 and 4), driven by the
independent NL wallet (nlwallet.py: cryptography + joserfc, written from docs/wallet-provider.md)
against the real PID Provider, and by the CLI wallet (`trustbed wallet pin-recovery` and `renew`).

- PIN lockout, then PIN recovery: `start_pin_recovery` signed by the new PIN key (a PIN
  certificate and a wallet attestation checked with `cryptography`/`joserfc`), a PID of another
  persona on the recovery keys is a mismatch that leaves the account `recovering_pin` with no PIN
  usable, a retry with the right person's PID finishes it, and only the new PIN works after.
- Renewal: refused while the PID is valid (`renewal_not_needed`); after the PID Provider revokes
  it (its admin API), `create_proofs {"renewal": true}` disables the other keys; a mismatching
  PID undoes everything exactly; a matching one brings the keys back and keeps the new ones.
"""
from __future__ import annotations

import base64
import json
import time

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc.jwk import ECKey as JoseECKey

from harness import run_cli
from nlwallet import (NLWallet, derive_pin_key, ec_jwk, error_of, new_nl_wallet, pid_for_held_keys, present,
                      raw_signature)
from walletlib import (Wallet, admin_credentials, admin_offer, admin_set_status, b64url, decode_jwt_unverified, persona,
                       start_pid_server, verify_es256)

PID = "urn:eudi:pid:1"


@pytest.fixture(scope="module")
def server(session_tmp):
    s = start_pid_server(session_tmp / f"nl-recovery-{time.monotonic_ns()}", label="nl-recovery")
    yield s
    s.stop()


@pytest.fixture
def wp(server):
    return server.id("wallet-provider")


def disclose(wallet: NLWallet, sd_jwt: str, **kwargs) -> requests.Response:
    return wallet.instruct("disclose_recovery_code", {"sd_jwt": present(sd_jwt, {"recovery_code"})}, **kwargs)


def account_view(server, wp: str, account: str) -> dict:
    r = requests.get(f"{wp}/admin/accounts/{account}", headers={"Authorization": "Bearer " + server.admin_token}, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()


def account_of(server, wp: str, tag: str) -> str:
    admin = {"Authorization": "Bearer " + server.admin_token}
    [instance] = [i for i in requests.get(wp + "/admin/instances", headers=admin, timeout=10).json()["instances"] if i["id"] == tag]
    return instance["account"]


class IssuerSide:
    """The PID Provider's half of a recovery: an offer for a persona, its token and c_nonce."""

    def __init__(self, server, persona_index: int):
        self.issuer = server.id("pid-provider")
        answer = admin_offer(self.issuer, server.admin_token, persona(server, persona_index)["id"], [PID])
        self.holder = Wallet(self.issuer)
        self.token_response = self.holder.pre_authorized_token(self.holder.fetch_offer(answer))
        self.nonce = self.holder.nonce()

    def credential(self, proofs: list[str]) -> str:
        r = self.holder.credential_request(self.token_response["access_token"],
                                           {"credential_configuration_id": PID, "proofs": {"jwt": proofs}})
        assert r.status_code == 200, r.text
        return r.json()["credentials"][0]["credential"]


def start_pin_recovery(wallet: NLWallet, side: IssuerSide, new_pin_key, count: int = 1) -> requests.Response:
    return wallet.instruct("start_pin_recovery", {"pin_public_key": ec_jwk(new_pin_key), "c_nonce": side.nonce, "aud": side.issuer,
                                                  "count": count}, signer=new_pin_key)


def check_recovery_result(wallet: NLWallet, result: dict, new_pin_key, account: str, count: int) -> None:
    ca = wallet.ca()
    # The PIN certificate: a JWT by the provider binding the new PIN key to the account.
    header, claims = decode_jwt_unverified(result["pin_certificate"])
    assert header["typ"] == "wp-pin-certificate+jwt" and header["alg"] == "ES256", header
    leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
    leaf.verify_directly_issued_by(ca)
    verify_es256(result["pin_certificate"], leaf.public_key())
    assert claims["iss"] == wallet.provider and claims["sub"] == account and claims["instance"] == wallet.tag, claims
    assert claims["cnf"]["jwk"] == ec_jwk(new_pin_key), claims
    assert claims["hw_jkt"] == JoseECKey.import_key(ec_jwk(wallet.hardware_key)).thumbprint()
    # A fresh wallet attestation (oauth-client-attestation+jwt) for a key the provider holds.
    header, claims = decode_jwt_unverified(result["wallet_attestation"])
    assert header["typ"] == "oauth-client-attestation+jwt", header
    verify_es256(result["wallet_attestation"], x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0])).public_key())
    assert claims["iss"] == wallet.provider and "jwk" in claims["cnf"] and isinstance(result["wallet_attestation_key_id"], str)
    # Proofs by new recovery keys, each with their key attestation.
    assert len(result["proofs"]) == len(result["keys"]) == count
    for index, proof in enumerate(result["proofs"]):
        proof_header, _ = decode_jwt_unverified(proof)
        assert proof_header["typ"] == "openid4vci-proof+jwt" and proof_header["kid"] == str(index)
        _, attestation = decode_jwt_unverified(proof_header["key_attestation"])
        assert attestation["attested_keys"][index] == result["keys"][index]["jwk"]


def test_pin_lockout_then_recovery_with_a_mismatching_pid_first(server, wp):
    wallet = new_nl_wallet(wp, pin="123456")
    pid, _ = pid_for_held_keys(server, wallet, persona_index=0)
    assert wallet.result(disclose(wallet, pid))["recovery_code"] == "stored"
    account = account_of(server, wp, wallet.tag)
    held_before = account_view(server, wp, account)["held_keys"]
    wrong = derive_pin_key("000000", wallet.salt)
    for _ in range(3):
        error_of(wallet.instruct("generate_keys", signer=wrong), 403, "invalid_pin")
    error_of(wallet.instruct("generate_keys", signer=wrong), 403, "account_blocked")
    error_of(wallet.instruct("generate_keys"), 403, "account_blocked")
    assert account_view(server, wp, account)["state"] == "blocked"

    new_pin = derive_pin_key("654321", wallet.salt)
    # Signed by the old PIN, or by another key than the one it carries: refused, no PIN attempt.
    side = IssuerSide(server, persona_index=1)
    error_of(wallet.instruct("start_pin_recovery", {"pin_public_key": ec_jwk(new_pin), "c_nonce": side.nonce, "aud": side.issuer}),
             403, "invalid_request")
    error_of(wallet.instruct("start_pin_recovery", {"pin_public_key": {"kty": "EC"}, "aud": side.issuer}, signer=new_pin),
             400, "invalid_instruction")
    assert account_view(server, wp, account)["state"] == "blocked"

    # Another persona's PID (the wallet-side check would have caught it; the provider must too).
    result = wallet.result(start_pin_recovery(wallet, side, new_pin), "start_pin_recovery")
    assert result["state"] == "recovering_pin" and result["previous_state"] == "blocked"
    check_recovery_result(wallet, result, new_pin, account, 1)
    assert account_view(server, wp, account)["state"] == "recovering_pin"
    other_pid = side.credential(result["proofs"])
    error_of(disclose(wallet, other_pid, signer=new_pin), 403, "recovery_code_mismatch")
    view = account_view(server, wp, account)
    assert view["state"] == "recovering_pin", view
    # No PIN is usable meanwhile: not the old, not the new.
    error_of(wallet.instruct("generate_keys"), 409, "invalid_account_state")
    error_of(wallet.instruct("generate_keys", signer=new_pin), 409, "invalid_account_state")
    error_of(disclose(wallet, pid), 403, "invalid_request")  # the old PIN cannot sign the disclosure either

    # The right person: a retry of start_pin_recovery, the PID on its recovery keys, a match.
    side = IssuerSide(server, persona_index=0)
    result = wallet.result(start_pin_recovery(wallet, side, new_pin, count=2), "start_pin_recovery")
    check_recovery_result(wallet, result, new_pin, account, 2)
    # The old PID (not on a recovery key) does not finish a PIN recovery.
    error_of(disclose(wallet, pid, signer=new_pin), 403, "invalid_request")
    done = wallet.result(disclose(wallet, side.credential(result["proofs"]), signer=new_pin), "disclose_recovery_code")
    assert done["account_state"] == "active" and done["pin_recovery"] == "completed", done
    view = account_view(server, wp, account)
    assert view["state"] == "active" and view["pin_failures"] == 0, view
    # Recovery keys deleted; the wallet attestation keys of the two calls stay.
    assert view["held_keys"] == held_before + 2, view
    wallet.pin = "654321"
    assert len(wallet.run("generate_keys", {"count": 1})["keys"]) == 1
    error_of(wallet.instruct("generate_keys", signer=derive_pin_key("123456", wallet.salt)), 403, "invalid_pin")


def test_start_pin_recovery_needs_a_recovery_code(server, wp):
    wallet = new_nl_wallet(wp)
    side = IssuerSide(server, persona_index=0)
    new_pin = derive_pin_key("999999", wallet.salt)
    body = error_of(start_pin_recovery(wallet, side, new_pin), 403, "invalid_request")
    assert "no recovery code" in body["error_description"]
    assert account_view(server, wp, account_of(server, wp, wallet.tag))["state"] == "active"


def revoke(server, pid: str, persona_index: int) -> None:
    issuer = server.id("pid-provider")
    status = decode_jwt_unverified(pid.split("~")[0])[1]["status"]["status_list"]
    records = admin_credentials(issuer, server.admin_token, persona(server, persona_index)["id"])
    [record] = [c for c in records if c["status_list"] == {"uri": status["uri"], "idx": status["idx"]}]
    assert admin_set_status(issuer, server.admin_token, record["id"], "invalid").status_code in (200, 204)


def test_renewal_after_the_pid_provider_revokes_the_pid_with_a_mismatch_first(server, wp):
    wallet = new_nl_wallet(wp)
    pid, made = pid_for_held_keys(server, wallet, persona_index=0)
    assert wallet.result(disclose(wallet, pid))["recovery_code"] == "stored"
    account = account_of(server, wp, wallet.tag)
    old_key = made["keys"][0]["key_id"]
    side = IssuerSide(server, persona_index=1)
    renewal = {"renewal": True, "aud": side.issuer, "nonce": side.nonce, "count": 1}
    body = error_of(wallet.instruct("create_proofs", renewal), 403, "renewal_not_needed")
    assert "valid" in body["error_description"]
    error_of(wallet.instruct("create_proofs", {**renewal, "renewal": "yes"}), 400, "invalid_instruction")
    before = account_view(server, wp, account)
    assert before["state"] == "active"

    revoke(server, pid, 0)
    result = wallet.run("create_proofs", renewal)
    assert account_view(server, wp, account)["state"] == "renewing"
    # Every other key is disabled meanwhile.
    error_of(wallet.instruct("sign", {"key_id": old_key, "payload": b64url(b"x")}), 409, "invalid_account_state")
    # Another person's PID on the renewal key: undone exactly, then 403.
    error_of(disclose(wallet, side.credential(result["proofs"])), 403, "recovery_code_mismatch")
    after = account_view(server, wp, account)
    assert after["state"] == "active" and after["held_keys"] == before["held_keys"], (before, after)
    wallet.run("sign", {"key_id": old_key, "payload": b64url(b"x")})
    error_of(wallet.instruct("sign", {"key_id": result["keys"][0]["key_id"], "payload": b64url(b"x")}), 400, "invalid_instruction")

    # The same person: the renewal completes; old and new keys both usable.
    side = IssuerSide(server, persona_index=0)
    result = wallet.run("create_proofs", {"renewal": True, "aud": side.issuer, "nonce": side.nonce, "count": 1})
    done = wallet.result(disclose(wallet, side.credential(result["proofs"])))
    assert done["account_state"] == "active" and done["renewal"] == "completed", done
    assert account_view(server, wp, account)["held_keys"] == before["held_keys"] + 1
    wallet.run("sign", {"key_id": old_key, "payload": b64url(b"x")})
    wallet.run("sign", {"key_id": result["keys"][0]["key_id"], "payload": b64url(b"x")})
    # The new PID is valid: no second renewal.
    side = IssuerSide(server, persona_index=0)
    error_of(wallet.instruct("create_proofs", {"renewal": True, "aud": side.issuer, "nonce": side.nonce}), 403, "renewal_not_needed")


# ---------------------------------------------------------------------------- the CLI wallet


def offer_uri(server, persona_index: int) -> str:
    issuer = server.id("pid-provider")
    answer = admin_offer(issuer, server.admin_token, persona(server, persona_index)["id"], [PID])
    return answer.get("credential_offer_uri") or answer["credential_offer"]


def cli_device(path) -> NLWallet:
    """The CLI wallet file as an NLWallet (its hardware key, tag and PIN salt), to send wrong PINs."""
    doc = json.loads(path.read_text())
    hw = doc["hardware_key"]
    key = ec.derive_private_key(int.from_bytes(base64.urlsafe_b64decode(hw["d"] + "=="), "big"), ec.SECP256R1())
    salt = base64.urlsafe_b64decode(doc["nl"]["pin_salt"] + "==")
    return NLWallet(doc["provider"], "000000", tag=doc["hardware_key_tag"], hardware_key=key, salt=salt)


def test_cli_renew_lockout_pin_recovery_and_renew_after_revocation(server, wp, tmp_path):
    path = tmp_path / "nl-wallet.json"
    r = run_cli(*["wallet", "register", "--provider", wp, "--pin", "1111", "--wallet", str(path)])
    assert r.returncode == 0, r.stderr
    # A first PID: renew works from an account with no PID (nothing valid is held).
    r = run_cli(*["wallet", "renew", "--pin", "1111", "--wallet", str(path), offer_uri(server, 0)])
    assert r.returncode == 0, r.stderr
    assert "renewing" in r.stderr and "account: active" in r.stderr, r.stderr
    assert json.loads(r.stdout)["account_state"] == "active"
    doc = json.loads(path.read_text())
    assert doc["credentials"][-1]["held_key_ids"] and doc["credentials"][-1]["claims"]["recovery_code"]

    device = cli_device(path)
    for _ in range(4):
        device.instruct("generate_keys")
    account = account_of(server, wp, device.tag)
    assert account_view(server, wp, account)["state"] == "blocked"

    # Another person's offer: the wallet-side check stops before the provider is asked.
    r = run_cli(*["wallet", "pin-recovery", "--new-pin", "2222", "--wallet", str(path), offer_uri(server, 1)])
    assert r.returncode == 1 and "MISMATCH" in r.stderr, r.stderr
    assert account_view(server, wp, account)["state"] == "blocked"

    r = run_cli(*["wallet", "pin-recovery", "--new-pin", "2222", "--wallet", str(path), "--verbose", offer_uri(server, 0)])
    assert r.returncode == 0, r.stderr
    states = [line for line in r.stderr.splitlines() if "account:" in line]
    assert "blocked → recovering_pin" in states[1] and "account: active" in states[-1], states
    assert "matches the stored PID's" in r.stderr
    assert "/instructions/start_pin_recovery" in r.stderr and "/instructions/disclose_recovery_code" in r.stderr, "--verbose"
    assert json.loads(r.stdout) == {"account_state": "active", "pin_recovered": True, "wallet": str(path)}
    assert account_view(server, wp, account)["state"] == "active"
    assert "2222" not in path.read_text()

    # The old PIN is gone; renewal while the PID is valid is refused; after revocation it works.
    r = run_cli(*["wallet", "renew", "--pin", "1111", "--wallet", str(path), offer_uri(server, 0)])
    assert r.returncode == 1 and "invalid_pin" in r.stderr, r.stderr
    r = run_cli(*["wallet", "renew", "--pin", "2222", "--wallet", str(path), offer_uri(server, 0)])
    assert r.returncode == 1 and "renewal_not_needed" in r.stderr, r.stderr
    revoke(server, json.loads(path.read_text())["credentials"][-1]["credential"], 0)
    r = run_cli(*["wallet", "renew", "--pin", "2222", "--wallet", str(path), offer_uri(server, 0)])
    assert r.returncode == 0, r.stderr
    assert account_view(server, wp, account)["state"] == "active"
    assert len(json.loads(path.read_text())["credentials"]) == 2


# ---------------------------------------------------------------------------- the load client


def test_bench_pin_recovery_flow(server, wp):
    """`trustbed wallet bench --flow pin-recovery`: whole PIN recoveries, every step timed, no
    errors, and each thread's account `active` again at the end with its recovery keys gone."""
    before = {i["id"] for i in requests.get(wp + "/admin/instances", headers={"Authorization": "Bearer " + server.admin_token},
                                            timeout=10).json()["instances"]}
    p = run_cli("wallet", "bench", "--flow", "pin-recovery", "--issuer", server.id("pid-provider"), "--provider", wp,
                "--admin-token", server.admin_token, "--persona", persona(server)["id"], "--configuration", PID,
                "--concurrency", "2", "--duration", "1", "--json", timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    report = json.loads(p.stdout)
    assert report["errors"] == {} and report["flows"] > 0 and report["flow"] == "pin-recovery", report
    steps = ["offer", "token", "nonce", "start_pin_recovery", "credential", "disclose_recovery_code"]
    assert sorted(report["steps"]) == sorted(steps), report["steps"]
    for step in steps:
        assert report["steps"][step]["count"] == report["flows"], (step, report["steps"][step])
    assert report["credentials"] == report["flows"]
    admin = {"Authorization": "Bearer " + server.admin_token}
    new = [i for i in requests.get(wp + "/admin/instances", headers=admin, timeout=10).json()["instances"] if i["id"] not in before]
    assert len(new) == 2, new
    for instance in new:
        view = account_view(server, wp, instance["account"])
        assert view["state"] == "active", view
