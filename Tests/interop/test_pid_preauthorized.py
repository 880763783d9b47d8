"""The pre-authorized code flow (OpenID4VCI 1.0 §3.5, §4.1, §6.1, §7, §8) against the real
server, every artifact checked with independent libraries: the SD-JWT VC with the `sd-jwt`
reference implementation (including a key-binding presentation), the mdoc with `pymdoccbor`
and `pycose`, the status list with `token-status-list` and zlib by hand, the offer QR code
with `zxing-cpp`.  Also: recovery codes (issue 7 item 9), token claim previews, batch
issuance, revocation and suspension through the admin API."""
from __future__ import annotations

import datetime
import io
import time
from urllib.parse import quote

import pytest
import requests
from fedlib import assert_json_error, describe
from walletlib import (PRE_AUTH_GRANT, Wallet, key_proof, admin_credentials, admin_offer, admin_set_status, fetch_status_list,
                       find_values, iaca_certificate, new_key, persona, personas, present_and_verify, recovery_code,
                       recovery_secret, start_pid_server, status_at, status_at_by_hand, verify_mdoc,
                       verify_sd_jwt_vc)

SD = "urn:eudi:pid:1"
NL = "urn:eudi:pid:nl:1"
MDOC = "eu.europa.ec.eudi.pid.1"


@pytest.fixture(scope="module")
def pid(session_tmp):
    server = start_pid_server(session_tmp / f"pid-preauth-{time.monotonic_ns()}", label="pid-preauth",
                              pid_overrides={"deferred_interval": 1})
    yield server
    server.stop()


def issuer_of(server) -> str:
    return server.id("pid-provider")


def issue(server, configuration_ids, who: dict, *, dpop: bool = True, tx_code: bool = True, keys_per_config: int = 1):
    """Admin offer → credential_offer_uri → token (tx_code) → nonce → credential, per configuration.
    Returns (admin answer, token response, {configuration id: (credential response, keys)})."""
    issuer = issuer_of(server)
    answer = admin_offer(issuer, server.admin_token, who["id"], configuration_ids, tx_code=tx_code)
    wallet = Wallet(issuer, use_dpop=dpop)
    offer = wallet.fetch_offer(answer)
    token = wallet.pre_authorized_token(offer, tx_code=answer.get("tx_code"))
    out = {}
    for cid in configuration_ids:
        out[cid] = wallet.credential(token["access_token"], configuration_id=cid, keys=[new_key() for _ in range(keys_per_config)],
                                     anonymous=True)
    return answer, token, out


# ---------------------------------------------------------------------------- the offer


def test_admin_offer_by_reference_with_tx_code(pid):
    issuer = issuer_of(pid)
    who = persona(pid)
    answer = admin_offer(issuer, pid.admin_token, who["id"], [SD, MDOC], tx_code=True)
    for key in ("credential_offer", "credential_offer_uri", "offer_url", "tx_code", "qr_png", "qr_svg", "offer_page"):
        assert key in answer, f"admin answer lacks {key}: {answer}"
    uri = answer["credential_offer_uri"]
    assert uri.startswith(issuer + "/offers/") and uri.endswith("/credential-offer"), uri
    assert answer["offer_url"] == "openid-credential-offer://?credential_offer_uri=" + quote(uri, safe=""), answer["offer_url"]
    r = requests.get(uri, timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"].split(";")[0] == "application/json", describe(r)
    assert r.headers.get("Cache-Control") == "no-store", "the offer carries a code: it must not be cached"
    offer = r.json()
    assert offer == answer["credential_offer"]
    assert offer["credential_issuer"] == issuer
    assert offer["credential_configuration_ids"] == [SD, MDOC]
    grant = offer["grants"][PRE_AUTH_GRANT]
    assert isinstance(grant["pre-authorized_code"], str) and len(grant["pre-authorized_code"]) >= 16
    tx = grant["tx_code"]
    # §4.1.1: tx_code describes the code (length, input_mode), never carries it.
    assert answer["tx_code"] not in str(offer), "the offer must not contain the transaction code"
    assert tx.get("length") == len(answer["tx_code"]) and tx.get("input_mode", "numeric") in ("numeric", "text"), tx
    if tx.get("input_mode", "numeric") == "numeric":
        assert answer["tx_code"].isdigit(), answer["tx_code"]
    # A wallet that gets the offer URL follows it the same way.
    assert Wallet(issuer).fetch_offer(answer["offer_url"]) == offer


def test_offer_qr_png_decodes_to_the_offer_url(pid):
    import zxingcpp
    from PIL import Image

    issuer = issuer_of(pid)
    answer = admin_offer(issuer, pid.admin_token, persona(pid)["id"], [SD], tx_code=False)
    r = requests.get(answer["qr_png"], timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"] == "image/png", describe(r)
    results = zxingcpp.read_barcodes(Image.open(io.BytesIO(r.content)))
    assert [x.text for x in results] == [answer["offer_url"]], f"zxing-cpp read {[x.text for x in results]}"
    assert results[0].format == zxingcpp.BarcodeFormat.QRCode
    r = requests.get(answer["qr_svg"], timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("image/svg+xml") and "<svg" in r.text, describe(r)
    assert "tx_code" not in answer


# ---------------------------------------------------------------------------- SD-JWT VC


def test_sd_jwt_vc_pid_with_tx_code_and_dpop(pid):
    issuer = issuer_of(pid)
    who = persona(pid)
    answer, token, out = issue(pid, [SD], who, dpop=True)
    assert token["token_type"] == "DPoP"
    body, keys = out[SD]
    assert isinstance(body.get("notification_id"), str) and body["notification_id"], body
    credential = body["credentials"][0]["credential"]
    checked = verify_sd_jwt_vc(credential, issuer=issuer, iaca=iaca_certificate(issuer), holder_key=keys[0], vct=SD)
    claims, payload, disclosures = checked["claims"], checked["payload"], checked["disclosures"]

    for name in ("given_name", "family_name", "birthdate"):
        assert claims[name] == who[name], f"{name}: {claims.get(name)!r} != persona {who[name]!r}"
    assert claims["personal_administrative_number"] == who["personal_administrative_number"]
    for name in ("issuing_country", "issuing_authority", "date_of_expiry"):
        assert name in claims, f"PID Rulebook claim {name} missing: {sorted(claims)}"
    assert claims["recovery_code"] == recovery_code(recovery_secret(pid), who["personal_administrative_number"])
    assert "bsn" not in claims, "bsn belongs to the NL profile only"

    # Every personal claim is selectively disclosable: none sits in the signed payload in clear.
    for name in ("given_name", "family_name", "birthdate", "recovery_code", "personal_administrative_number", "address",
                 "nationalities"):
        assert name not in payload, f"{name} must be selectively disclosable, found in clear"
    for name in ("iss", "iat", "exp", "vct", "cnf", "status"):
        assert name not in {d[1] for d in disclosures if len(d) == 3}, f"{name} must not be selectively disclosable"
    top = [d for d in disclosures if len(d) == 3 and d[1] in claims]
    assert len(payload["_sd"]) > len(top), "decoy digests expected (RFC 9901 §4.2.5)"

    assert "address" in who and "nationalities" in who, "the first demo persona has an address and nationalities"
    # Address: the object and each member disclosable.
    addr = next(d for d in disclosures if len(d) == 3 and d[1] == "address")
    assert isinstance(addr[2], dict) and addr[2].get("_sd"), "address members must be disclosable one by one"
    assert not (set(addr[2]) - {"_sd"}), f"no address member in clear: {addr[2]}"
    assert claims["address"] == who["address"]
    first = sorted(who["address"])[0]
    seen = present_and_verify(credential, keys[0], checked["leaf"], {"address": {first: True}, "given_name": True})
    assert seen.get("address") == {first: who["address"][first]}, f"presenting only address.{first}: {seen.get('address')}"
    assert "family_name" not in seen and seen["given_name"] == who["given_name"]
    # Nationalities: each array element disclosable.
    nat = next(d for d in disclosures if len(d) == 3 and d[1] == "nationalities")
    assert all(isinstance(e, dict) and set(e) == {"..."} for e in nat[2]), \
        f"each nationality is an array element disclosure: {nat[2]}"
    elements = [d for d in disclosures if len(d) == 2]
    assert {d[1] for d in elements} >= set(who["nationalities"])
    assert claims["nationalities"] == who["nationalities"]
    seen = present_and_verify(credential, keys[0], checked["leaf"], {"nationalities": [True]})
    assert seen["nationalities"] == who["nationalities"][:1], seen


def test_nl_profile_carries_bsn_and_the_same_recovery_code(pid):
    issuer = issuer_of(pid)
    who = next(p for p in personas(pid) if "bsn" in p and not p.get("deferred"))
    _, _, out = issue(pid, [NL, SD], who, dpop=False, tx_code=False)
    iaca = iaca_certificate(issuer)
    nl = verify_sd_jwt_vc(out[NL][0]["credentials"][0]["credential"], issuer=issuer, iaca=iaca, holder_key=out[NL][1][0], vct=NL)
    eu = verify_sd_jwt_vc(out[SD][0]["credentials"][0]["credential"], issuer=issuer, iaca=iaca, holder_key=out[SD][1][0], vct=SD)
    assert nl["claims"].get("bsn") == who["bsn"] and "bsn" not in nl["payload"], "bsn is a selectively disclosable NL claim"
    assert nl["claims"]["recovery_code"] == eu["claims"]["recovery_code"]


def test_batch_issuance_one_credential_per_proof_key(pid):
    issuer = issuer_of(pid)
    _, _, out = issue(pid, [SD], persona(pid), dpop=True, tx_code=False, keys_per_config=3)
    body, keys = out[SD]
    iaca = iaca_certificate(issuer)
    idx = set()
    for item, key in zip(body["credentials"], keys):
        checked = verify_sd_jwt_vc(item["credential"], issuer=issuer, iaca=iaca, holder_key=key, vct=SD)
        idx.add((checked["payload"]["status"]["status_list"]["uri"], checked["payload"]["status"]["status_list"]["idx"]))
    assert len(idx) == 3, f"each credential needs its own status list entry: {idx}"


# ---------------------------------------------------------------------------- mdoc


def test_mdoc_pid_with_tx_code(pid):
    issuer = issuer_of(pid)
    who = persona(pid)
    _, token, out = issue(pid, [MDOC], who, dpop=False)
    assert token["token_type"] == "Bearer"
    body, keys = out[MDOC]
    checked = verify_mdoc(body["credentials"][0]["credential"], iaca=iaca_certificate(issuer), holder_key=keys[0])
    el = checked["elements"]
    assert el["family_name"] == who["family_name"] and el["given_name"] == who["given_name"]
    assert el["birth_date"] == datetime.date.fromisoformat(who["birthdate"]), f"birth_date: {el['birth_date']!r}"
    assert el["recovery_code"] == recovery_code(recovery_secret(pid), who["personal_administrative_number"])
    for name in ("issuing_country", "issuing_authority", "expiry_date"):
        assert name in el, f"PID Rulebook element {name} missing: {sorted(el)}"
    # ARF Annex 2 PID_06: the recovery code is ours, so it sits in the domestic nameSpace.
    assert {i["namespace"] for i in checked["items"]} == {MDOC, "eu.europa.ec.eudi.pid.nl.1"}
    assert [i["namespace"] for i in checked["items"] if i["elementIdentifier"] == "recovery_code"] == ["eu.europa.ec.eudi.pid.nl.1"]
    salts = [i["random"] for i in checked["items"]]
    assert len(set(salts)) == len(salts), "every item has its own random salt"
    sl = checked["mso"]["status"]["status_list"]
    assert isinstance(sl["idx"], int) and sl["uri"].startswith(issuer + "/status/"), sl
    _, claims = fetch_status_list(sl["uri"])
    assert status_at(claims, sl["idx"]) == 0


def test_recovery_codes_same_person_across_formats_and_previews(pid):
    issuer = issuer_of(pid)
    a, b = persona(pid, 0), persona(pid, 1)
    iaca = iaca_certificate(issuer)
    _, token, out = issue(pid, [SD, MDOC], a, dpop=True)
    sd = verify_sd_jwt_vc(out[SD][0]["credentials"][0]["credential"], issuer=issuer, iaca=iaca, holder_key=out[SD][1][0], vct=SD)
    md = verify_mdoc(out[MDOC][0]["credentials"][0]["credential"], iaca=iaca, holder_key=out[MDOC][1][0])
    code_a = sd["claims"]["recovery_code"]
    assert md["elements"]["recovery_code"] == code_a, "same person, same recovery code in both formats"
    assert code_a == code_a.lower() and len(code_a) == 64 and int(code_a, 16) >= 0

    # token_claims_preview is on in the demo: the token response previews each configuration.
    previews = token.get("credential_previews")
    assert isinstance(previews, list) and {p["credential_configuration_id"] for p in previews} == {SD, MDOC}, token
    for p in previews:
        assert p["format"] in ("dc+sd-jwt", "mso_mdoc") and isinstance(p["claims"], dict), p
        assert find_values(p["claims"], "recovery_code") == [code_a], f"preview recovery_code differs: {p}"

    _, _, out_b = issue(pid, [SD], b, dpop=False, tx_code=False)
    sd_b = verify_sd_jwt_vc(out_b[SD][0]["credentials"][0]["credential"], issuer=issuer, iaca=iaca,
                           holder_key=out_b[SD][1][0], vct=SD)
    assert sd_b["claims"]["recovery_code"] != code_a, "different persons must get different recovery codes"


def test_recovery_code_survives_restart(session_tmp):
    server = start_pid_server(session_tmp / f"pid-restart-{time.monotonic_ns()}", label="pid-restart")
    try:
        who = persona(server)
        _, _, out = issue(server, [SD], who, tx_code=False)
        before = verify_sd_jwt_vc(out[SD][0]["credentials"][0]["credential"], issuer=issuer_of(server),
                                  iaca=iaca_certificate(issuer_of(server)), holder_key=out[SD][1][0], vct=SD)
        server.stop()
        server.start()
        _, _, out = issue(server, [SD], who, tx_code=False)
        after = verify_sd_jwt_vc(out[SD][0]["credentials"][0]["credential"], issuer=issuer_of(server),
                                 iaca=iaca_certificate(issuer_of(server)), holder_key=out[SD][1][0], vct=SD)
        assert before["claims"]["recovery_code"] == after["claims"]["recovery_code"]
        # The first credential's status entry is still known after the restart.
        assert len(admin_credentials(issuer_of(server), server.admin_token, who["id"])) >= 2
    finally:
        server.stop()


# ---------------------------------------------------------------------------- status lists


def test_revoke_and_suspend_through_admin_api_show_at_once(pid):
    issuer = issuer_of(pid)
    who = persona(pid, 1)
    _, _, out = issue(pid, [SD], who, tx_code=False)
    body, keys = out[SD]
    checked = verify_sd_jwt_vc(body["credentials"][0]["credential"], issuer=issuer, iaca=iaca_certificate(issuer),
                               holder_key=keys[0], vct=SD)
    ref = checked["payload"]["status"]["status_list"]
    header, claims = fetch_status_list(ref["uri"])
    assert status_at(claims, ref["idx"]) == 0 == status_at_by_hand(claims, ref["idx"])

    records = [c for c in admin_credentials(issuer, pid.admin_token, who["id"]) if c["status_list"] == ref]
    assert len(records) == 1, f"exactly one admin record for {ref}"
    rec = records[0]
    assert rec["persona"] == who["id"] and rec["credential_configuration_id"] == SD and rec["status"] == "valid", rec
    assert isinstance(rec["issued_at"], int) and rec["expires_at"] > rec["issued_at"], rec
    assert "given_name" not in str(rec) and who["family_name"] not in str(rec), "records carry no claim values"

    for status, value in (("suspended", 2), ("valid", 0), ("invalid", 1)):
        r = admin_set_status(issuer, pid.admin_token, rec["id"], status)
        assert r.status_code in (200, 204), describe(r)
        _, claims = fetch_status_list(ref["uri"])  # at once: no memo, no cache
        assert status_at(claims, ref["idx"]) == value == status_at_by_hand(claims, ref["idx"]), f"after {status}"
        rec_now = [c for c in admin_credentials(issuer, pid.admin_token, who["id"]) if c["id"] == rec["id"]][0]
        assert rec_now["status"] == status
    r = admin_set_status(issuer, pid.admin_token, rec["id"], "revoked-ish")
    assert r.status_code == 400 and r.json()["error"] == "invalid_request", describe(r)
    r = admin_set_status(issuer, "wrong-token", rec["id"], "valid")
    assert r.status_code == 401 and r.json()["error"], describe(r)
    r = admin_set_status(issuer, pid.admin_token, "no-such-credential", "valid")
    assert r.status_code == 404, describe(r)


def test_mdoc_and_sd_jwt_status_entries_are_distinct(pid):
    issuer = issuer_of(pid)
    _, _, out = issue(pid, [SD, MDOC], persona(pid), tx_code=False)
    iaca = iaca_certificate(issuer)
    sd = verify_sd_jwt_vc(out[SD][0]["credentials"][0]["credential"], issuer=issuer, iaca=iaca, holder_key=out[SD][1][0], vct=SD)
    md = verify_mdoc(out[MDOC][0]["credentials"][0]["credential"], iaca=iaca, holder_key=out[MDOC][1][0])
    a = sd["payload"]["status"]["status_list"]
    b = md["mso"]["status"]["status_list"]
    assert (a["uri"], a["idx"]) != (b["uri"], b["idx"])


# ---------------------------------------------------------------------------- deferred issuance, notifications


def test_deferred_persona_and_notification(pid):
    """§9: a deferred persona gets 202 {transaction_id, interval}; the deferred endpoint answers
    "not yet" until the interval has passed, then the credential, then invalid_transaction_id.
    §11: notifications are 204; an unknown notification_id is invalid_notification_id."""
    issuer = issuer_of(pid)
    who = persona(pid, deferred=True)
    answer = admin_offer(issuer, pid.admin_token, who["id"], [SD])
    wallet = Wallet(issuer, use_dpop=True)
    token = wallet.pre_authorized_token(wallet.fetch_offer(answer))["access_token"]
    key = new_key()
    r = wallet.credential_request(token, {"credential_configuration_id": SD,
                                          "proofs": {"jwt": [key_proof(key, issuer, wallet.nonce())]}})
    assert r.status_code == 202, f"deferred issuance is 202 Accepted (§8.3): {describe(r)}"
    body = r.json()
    assert isinstance(body.get("transaction_id"), str) and isinstance(body.get("interval"), int) and "credentials" not in body, body
    tx = body["transaction_id"]
    r = wallet.credential_request(token, {"transaction_id": tx}, endpoint="deferred_credential_endpoint")
    # Still pending: 202 with the transaction again (1.0 Final), or the older issuance_pending error.
    assert (r.status_code == 202 and r.json().get("transaction_id") == tx) or \
        (r.status_code == 400 and r.json().get("error") == "issuance_pending"), describe(r)
    time.sleep(body["interval"] + 0.2)
    r = wallet.credential_request(token, {"transaction_id": tx}, endpoint="deferred_credential_endpoint")
    assert r.status_code == 200, describe(r)
    done = r.json()
    verify_sd_jwt_vc(done["credentials"][0]["credential"], issuer=issuer, iaca=iaca_certificate(issuer), holder_key=key, vct=SD)
    r = wallet.credential_request(token, {"transaction_id": tx}, endpoint="deferred_credential_endpoint")
    assert_json_error(r, 400, "invalid_transaction_id")
    r = wallet.credential_request(token, {"transaction_id": "never-issued"}, endpoint="deferred_credential_endpoint")
    assert_json_error(r, 400, "invalid_transaction_id")

    note = done.get("notification_id")
    assert isinstance(note, str) and note, done
    r = wallet.credential_request(token, {"notification_id": note, "event": "credential_accepted"}, endpoint="notification_endpoint")
    assert r.status_code == 204 and not r.content, describe(r)
    r = wallet.credential_request(token, {"notification_id": "nope", "event": "credential_accepted"}, endpoint="notification_endpoint")
    assert_json_error(r, 400, "invalid_notification_id")
    r = wallet.credential_request(token, {"notification_id": note, "event": "credential_eaten"}, endpoint="notification_endpoint")
    assert_json_error(r, 400, "invalid_notification_request")
