"""NL accounts (issue 21, items 1 and 8): registration with a PIN key, instruction challenges,
instructions signed by the PIN key and the hardware key, the keys the provider holds, and every
bad input of the issue's list that concerns instructions, each answered with a JSON error and
`no-store`, changing nothing. Driven by the independent wallet of `nlwallet.py`."""
from __future__ import annotations

import base64
import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, utils

from harness import run_cli
from nlwallet import NLWallet, derive_pin_key, ec_jwk, error_of, new_nl_wallet, public_from_jwk
from walletlib import b64url, decode_jwt_unverified, start_pid_server, verify_es256


@pytest.fixture(scope="module")
def server(session_tmp):
    s = start_pid_server(session_tmp / f"nl-instructions-{time.monotonic_ns()}", label="nl-instructions")
    yield s
    s.stop()


@pytest.fixture
def wp(server):
    return server.id("wallet-provider")


def b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_register_with_a_pin_key_and_use_held_keys(wp):
    wallet = new_nl_wallet(wp)
    keys = wallet.run("generate_keys", {"count": 2})["keys"]
    assert len(keys) == 2 and all(set(k["jwk"]) == {"kty", "crv", "x", "y"} for k in keys), keys
    payload = b"header.payload"
    signed = wallet.run("sign", {"key_id": keys[0]["key_id"], "payload": b64url(payload)})
    raw = b64d(signed["signature"])
    assert len(raw) == 64 and signed["key_id"] == keys[0]["key_id"]
    der = utils.encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public_from_jwk(keys[0]["jwk"]).verify(der, payload, ec.ECDSA(hashes.SHA256()))
    # A DER hardware signature (what Android keystores give) is accepted too.
    wallet.run("generate_keys", der=True)


def test_key_attestation_and_proofs_for_held_keys(wp):
    wallet = new_nl_wallet(wp)
    made = wallet.run("create_proofs", {"aud": "https://issuer.example", "nonce": "c-nonce", "count": 2,
                                        "future_flag": True})
    assert len(made["proofs"]) == 2 and len(made["keys"]) == 2
    att_header, att = decode_jwt_unverified(made["key_attestation"])
    assert att_header["typ"] == "key-attestation+jwt" and att["nonce"] == "c-nonce" and att["iss"] == wp
    from cryptography import x509
    verify_es256(made["key_attestation"], x509.load_der_x509_certificate(base64.b64decode(att_header["x5c"][0])).public_key())
    for index, proof in enumerate(made["proofs"]):
        header, claims = decode_jwt_unverified(proof)
        assert header["typ"] == "openid4vci-proof+jwt" and header["kid"] == str(index), header
        assert header["key_attestation"] == made["key_attestation"]
        assert claims["aud"] == "https://issuer.example" and claims["nonce"] == "c-nonce"
        assert att["attested_keys"][index] == made["keys"][index]["jwk"]
        verify_es256(proof, public_from_jwk(att["attested_keys"][index]))
    attested = wallet.run("issue_key_attestation", {"key_ids": [k["key_id"] for k in made["keys"]], "nonce": "n2"})
    _, claims = decode_jwt_unverified(attested["key_attestation"])
    assert claims["attested_keys"] == [k["jwk"] for k in made["keys"]] and claims["nonce"] == "n2"


def test_bad_instructions_get_json_errors_and_change_nothing(wp):
    wallet = new_nl_wallet(wp)
    other = new_nl_wallet(wp)
    [key] = wallet.run("generate_keys")["keys"]
    challenge = wallet.challenge()
    stranger = ec.generate_private_key(ec.SECP256R1())
    # Each of these is refused and leaves the challenge unspent.
    cases = [
        (wallet.instruction_body(challenge, hardware_key=stranger), 403, "invalid_request"),
        ({**wallet.instruction_body(challenge), "hardware_signature": ""}, 400, "bad_request"),
        ({"instruction": wallet.instruction_body(challenge)["instruction"]}, 400, "bad_request"),
        (wallet.instruction_body(challenge, aud="https://elsewhere.example"), 403, "invalid_request"),
        (wallet.instruction_body(challenge, iat=int(time.time()) - 7200), 403, "invalid_request"),
        (other.instruction_body(challenge), 403, "invalid_request"),            # another instance's challenge
        (wallet.instruction_body(challenge, {"count": 11}), 400, "invalid_instruction"),
        (wallet.instruction_body(challenge, {"count": "2"}), 400, "invalid_instruction"),
        ({"instruction": "not a jwt", "hardware_signature": "AA"}, 400, "bad_request"),
    ]
    for body, status, code in cases:
        error_of(wallet.send("generate_keys", body), status, code)
    error_of(wallet.send("no_such_instruction", wallet.instruction_body(challenge)), 400, "invalid_instruction")
    error_of(requests.post(wp + "/instructions/sign", data=b"{", headers={"Content-Type": "application/json"}, timeout=10),
             400, "bad_request")
    # A key id of another account.
    body = other.instruction_body(other.challenge(), {"key_id": key["key_id"], "payload": "AA"})
    error_of(other.send("sign", body), 400, "invalid_instruction")
    # The challenge still works once; then it is spent.
    body = wallet.instruction_body(challenge)
    assert wallet.send("generate_keys", body).status_code == 200
    error_of(wallet.send("generate_keys", body), 403, "invalid_request")
    error_of(wallet.send("generate_keys", wallet.instruction_body(challenge)), 403, "invalid_request")
    # Unknown instance for a challenge; a body that is not JSON.
    error_of(requests.post(wp + "/instructions/challenge", json={"instance": "nobody"}, timeout=10), 404, "not_found")
    error_of(requests.post(wp + "/instructions/challenge", json={}, timeout=10), 400, "bad_request")
    # Registration with a private JWK as PIN key is refused.
    bad = NLWallet(wp, "1")
    jwk = ec_jwk(bad.pin_key, private=True)
    error_of(bad.register(pin_public_key=jwk), 400, "bad_request")


def test_fifty_concurrent_uses_of_one_challenge_one_wins(wp):
    wallet = new_nl_wallet(wp)
    body = wallet.instruction_body(wallet.challenge(), {"count": 1})
    with ThreadPoolExecutor(max_workers=50) as pool:
        responses = list(pool.map(lambda _: wallet.send("generate_keys", body), range(50)))
    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(200) == 1 and statuses.count(403) == 49, statuses
    for r in responses:
        if r.status_code == 403:
            error_of(r, 403, "invalid_request")


def test_lockout_after_four_wrong_pins_and_a_right_pin_resets(wp, server):
    wallet = new_nl_wallet(wp, pin="111111")
    wrong = derive_pin_key("999999", wallet.salt)
    for left in (3, 2):
        body = error_of(wallet.instruct("generate_keys", signer=wrong), 403, "invalid_pin")
        assert body["attempts_left"] == left and body["pin_failures"] == 4 - left, body
    wallet.run("generate_keys")              # the right PIN: the count starts again
    for left in (3, 2, 1):
        assert error_of(wallet.instruct("generate_keys", signer=wrong), 403, "invalid_pin")["attempts_left"] == left
    body = error_of(wallet.instruct("generate_keys", signer=wrong), 403, "account_blocked")
    assert body["attempts_left"] == 0 and body["pin_failures"] == 4
    # Blocked: the right PIN is refused too.
    error_of(wallet.instruct("generate_keys"), 403, "account_blocked")
    error_of(wallet.instruct("sign", {"key_id": "x", "payload": "AA"}), 403, "account_blocked")
    # One challenge buys one PIN attempt: the wrong-PIN answer spent it.
    other = new_nl_wallet(wp)
    challenge = other.challenge()
    error_of(other.send("generate_keys", other.instruction_body(challenge, signer=wrong)), 403, "invalid_pin")
    error_of(other.send("generate_keys", other.instruction_body(challenge)), 403, "invalid_request")


def test_cli_register_with_pin_derives_the_documented_key(wp, tmp_path):
    path = tmp_path / "nl.json"
    p = run_cli("wallet", "register", "--provider", wp, "--wallet", str(path), "--pin", "246810", timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["nl_account"] is True and out["account_state"] == "active", out
    doc = json.loads(path.read_text())
    assert "246810" not in path.read_text()
    salt = b64d(doc["nl"]["pin_salt"])
    assert len(salt) == 16 and doc["nl"]["pin_public_key"] == ec_jwk(derive_pin_key("246810", salt))
    # The Python wallet, with the CLI's hardware key and the PIN key it derives itself, instructs.
    hardware = doc["hardware_key"]
    d = int.from_bytes(b64d(hardware["d"]), "big")
    wallet = NLWallet(wp, "246810", tag=doc["hardware_key_tag"], hardware_key=ec.derive_private_key(d, ec.SECP256R1()), salt=salt)
    assert len(wallet.run("generate_keys", {"count": 1})["keys"]) == 1


# ---------------------------------------------------------------------------- disclose_recovery_code (item 2)

from nlwallet import pid_for_held_keys, present, with_key_binding  # noqa: E402
from walletlib import Wallet, admin_credentials, admin_offer, admin_set_status, persona, recovery_code, recovery_secret  # noqa: E402


def disclose(wallet: NLWallet, sd_jwt: str, challenge: str | None = None) -> requests.Response:
    return wallet.send("disclose_recovery_code", wallet.instruction_body(challenge or wallet.challenge(), {"sd_jwt": sd_jwt}))


def test_disclosure_stores_then_matches_and_a_mismatch_changes_nothing(server, wp):
    wallet = new_nl_wallet(wp)
    pid, _ = pid_for_held_keys(server, wallet)
    assert wallet.result(disclose(wallet, present(pid, {"recovery_code"})))["recovery_code"] == "stored"
    assert wallet.result(disclose(wallet, present(pid, {"recovery_code"})))["recovery_code"] == "matched"
    # Another person's PID, bound to this account's keys: a mismatch, with one security-event line.
    other_pid, _ = pid_for_held_keys(server, wallet, persona_index=1)
    other = persona(server, 1)
    code = recovery_code(recovery_secret(server), other["personal_administrative_number"]) if "personal_administrative_number" in other else None
    before = server.log_tail(200_000).count("recovery_code_mismatch")
    challenge = wallet.challenge()
    error_of(disclose(wallet, present(other_pid, {"recovery_code"}), challenge), 403, "recovery_code_mismatch")
    log = server.log_tail(200_000)
    assert log.count("recovery_code_mismatch") == before + 1, log[-2000:]
    if code:
        assert code not in log
    # Nothing changed: the challenge is unspent and the account still takes its own code.
    assert wallet.result(disclose(wallet, present(pid, {"recovery_code"}), challenge))["recovery_code"] == "matched"


def test_refused_disclosures(server, wp):
    wallet = new_nl_wallet(wp)
    pid, made = pid_for_held_keys(server, wallet)
    # More than recovery_code; nothing disclosed; not an SD-JWT.
    error_of(disclose(wallet, present(pid, {"recovery_code", "given_name"})), 403, "invalid_request")
    error_of(disclose(wallet, present(pid, set())), 403, "invalid_request")
    error_of(disclose(wallet, "garbage"), 400, "invalid_instruction")
    # Another account presenting this account's PID: bound to a key it does not hold, no KB-JWT.
    thief = new_nl_wallet(wp)
    body = error_of(disclose(thief, present(pid, {"recovery_code"})), 403, "invalid_request")
    assert "does not hold" in body["error_description"], body
    # An untrusted issuer: the same PID re-signed by a key of our own.
    forged_key = ec.generate_private_key(ec.SECP256R1())
    header, claims = decode_jwt_unverified(pid.split("~")[0])
    from walletlib import sign_jwt
    from nlwallet import joserfc_key
    forged = sign_jwt({**{k: v for k, v in header.items() if k != "x5c"}, "alg": "ES256"}, claims, joserfc_key(forged_key))
    body = error_of(disclose(wallet, present(forged + "~" + "~".join(pid.split("~")[1:]), {"recovery_code"})), 403, "invalid_request")
    assert "does not verify" in body["error_description"], body
    # A revoked PID.
    issuer = server.id("pid-provider")
    revoked_pid, _ = pid_for_held_keys(server, wallet, persona_index=0)
    status = decode_jwt_unverified(revoked_pid.split("~")[0])[1]["status"]["status_list"]
    records = admin_credentials(issuer, server.admin_token, persona(server, 0)["id"])
    [record] = [c for c in records if c["status_list"] == {"uri": status["uri"], "idx": status["idx"]}]
    assert admin_set_status(issuer, server.admin_token, record["id"], "invalid").status_code in (200, 204)
    body = error_of(disclose(wallet, present(revoked_pid, {"recovery_code"})), 403, "invalid_request")
    assert "revoked" in body["error_description"], body
    # None of the refusals stored a code: the first valid disclosure is "stored".
    assert wallet.result(disclose(wallet, present(pid, {"recovery_code"})))["recovery_code"] == "stored"


def test_a_device_bound_pid_needs_key_binding_to_the_challenge(server, wp):
    wallet = new_nl_wallet(wp)
    issuer = server.id("pid-provider")
    holder = Wallet(issuer)
    answer = admin_offer(issuer, server.admin_token, persona(server)["id"], ["urn:eudi:pid:1"])
    token = holder.pre_authorized_token(holder.fetch_offer(answer))["access_token"]
    out, [key] = holder.credential(token, configuration_id="urn:eudi:pid:1")
    pid = out["credentials"][0]["credential"]
    device = ec.derive_private_key(int.from_bytes(b64d(key.as_dict(private=True)["d"]), "big"), ec.SECP256R1())
    presentation = present(pid, {"recovery_code"})
    error_of(disclose(wallet, presentation), 403, "invalid_request")
    challenge = wallet.challenge()
    error_of(disclose(wallet, with_key_binding(presentation, device, wp, "another-nonce"), challenge), 403, "invalid_request")
    error_of(disclose(wallet, with_key_binding(presentation, device, "https://elsewhere", challenge), challenge), 403, "invalid_request")
    result = wallet.result(disclose(wallet, with_key_binding(presentation, device, wp, challenge), challenge))
    assert result["recovery_code"] == "stored"


def test_presentations_made_by_the_sd_jwt_reference_holder(server, wp):
    """Disclosures made by the `sd-jwt` reference implementation's holder, not by nlwallet.present:
    without key binding for a PID on a held key, with a KB-JWT to the challenge for a device-bound one."""
    from sd_jwt.holder import SDJWTHolder
    from walletlib import jwcrypto_private
    wallet = new_nl_wallet(wp)
    pid, _ = pid_for_held_keys(server, wallet)
    holder = SDJWTHolder(pid)
    holder.create_presentation({"recovery_code": True})
    assert wallet.result(disclose(wallet, holder.sd_jwt_presentation))["recovery_code"] == "stored"

    other = new_nl_wallet(wp)
    issuer = server.id("pid-provider")
    device_wallet = Wallet(issuer)
    answer = admin_offer(issuer, server.admin_token, persona(server, 2)["id"], ["urn:eudi:pid:1"])
    token = device_wallet.pre_authorized_token(device_wallet.fetch_offer(answer))["access_token"]
    out, [key] = device_wallet.credential(token, configuration_id="urn:eudi:pid:1")
    challenge = other.challenge()
    bound = SDJWTHolder(out["credentials"][0]["credential"])
    bound.create_presentation({"recovery_code": True}, nonce=challenge, aud=wp, holder_key=jwcrypto_private(key), sign_alg="ES256")
    assert other.result(disclose(other, bound.sd_jwt_presentation, challenge))["recovery_code"] == "stored"


# ---------------------------------------------------------------------------- admin view (item 8, the account part)


def test_admin_account_view_and_instances_page(server, wp):
    wallet = new_nl_wallet(wp)
    wallet.run("generate_keys", {"count": 3})
    admin = {"Authorization": "Bearer " + server.admin_token}
    [instance] = [i for i in requests.get(wp + "/admin/instances", headers=admin, timeout=10).json()["instances"] if i["id"] == wallet.tag]
    account = instance["account"]
    error_of(requests.get(f"{wp}/admin/accounts/{account}", timeout=10), 401, "unauthorized")
    error_of(requests.get(f"{wp}/admin/accounts/nobody", headers=admin, timeout=10), 404, "not_found")
    wrong = derive_pin_key("000000", wallet.salt)
    for _ in range(4):
        wallet.instruct("generate_keys", signer=wrong)
    r = requests.get(f"{wp}/admin/accounts/{account}", headers=admin, timeout=10)
    assert r.status_code == 200 and r.headers.get("Cache-Control") == "no-store", r.text
    view = r.json()
    assert view["id"] == account and view["state"] == "blocked" and view["nl_account"] is True, view
    assert view["pin_failures"] == 4 and view["held_keys"] == 3 and view["recovery_code_stored"] is False, view
    assert [i["id"] for i in view["instances"]] == [wallet.tag] and view["transfer_sessions"] == [], view
    assert wallet.pin not in r.text and ec_jwk(wallet.pin_key)["x"] not in r.text
    page = requests.get(wp + "/instances", timeout=10)
    assert page.status_code == 200
    section = page.text[page.text.index(f'id="instance-{wallet.tag}"'):]
    section = section[:section.index("</section>")]
    assert '<dd class="account-state">blocked</dd>' in section, section


def test_bench_sign_flow_runs(wp):
    """`trustbed wallet bench --flow sign` (Tests/bench/wallet-provider.sh): every iteration a
    challenge and a sign instruction answered with a signature."""
    p = run_cli("wallet", "bench", "--flow", "sign", "--provider", wp, "--concurrency", "2", "--count", "20", timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "flows: 20 " in p.stdout and "errors: none" in p.stdout, p.stdout
    assert "challenge" in p.stdout and "instruction" in p.stdout


def test_cli_instruct(wp, tmp_path):
    path = str(tmp_path / "nl.json")
    assert run_cli("wallet", "register", "--provider", wp, "--wallet", path, "--pin", "1357", timeout=120).returncode == 0
    p = run_cli("wallet", "instruct", "generate_keys", "--params", '{"count": 2}', "--pin", "1357", "--wallet", path, timeout=120)
    assert p.returncode == 0, p.stderr
    keys = json.loads(p.stdout)["keys"]
    assert len(keys) == 2
    p = run_cli("wallet", "instruct", "sign", "--params", json.dumps({"key_id": keys[0]["key_id"], "payload": b64url(b"x")}),
                "--pin", "1357", "--wallet", path, "--verbose", timeout=120)
    assert p.returncode == 0 and len(b64d(json.loads(p.stdout)["signature"])) == 64, p.stderr
    assert "> POST " + wp + "/instructions/sign" in p.stderr and "1357" not in p.stderr
    p = run_cli("wallet", "instruct", "generate_keys", "--pin", "0000", "--wallet", path, timeout=120)
    assert p.returncode == 1 and "invalid_pin" in p.stderr and "attempts_left" in p.stderr, p.stderr
    p = run_cli("wallet", "instruct", "generate_keys", "--params", "[1]", "--pin", "1357", "--wallet", path, timeout=120)
    assert p.returncode == 1 and "--params" in p.stderr
    # Three more wrong PINs block the account (pin_attempts 4): the wallet file records it.
    for _ in range(3):
        p = run_cli("wallet", "instruct", "generate_keys", "--pin", "0000", "--wallet", path, timeout=120)
        assert p.returncode == 1, p.stderr
    assert "account_blocked" in p.stderr, p.stderr
    assert json.load(open(path))["nl"]["account_state"] == "blocked"
