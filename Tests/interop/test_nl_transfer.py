"""Device transfer (issue 21, item 5) driven by the independent NL wallet of `nlwallet.py`: two
accounts of the same person (the old phone, `source`, and the new one, `destination`), the
destination's first recovery code disclosure opening a session, the source's wallet encrypted
with jwcrypto (ECDH-ES + A256GCM) to the key of the destination's QR code, relayed by the
provider without being read, and decrypted by jwcrypto on the destination. Then cancel from each
side, expiry, every bad input of the issue's list that concerns transfers (out of order, wrong
side, foreign session, a payload that is not a compact JWE or is too large), each a JSON error
with `no-store` that changes nothing, and `kill -9` of the server between every step."""
from __future__ import annotations

import json
import time
import uuid

import pytest
import requests
from jwcrypto import jwe, jwk

from harness import TrustbedServer
from nlwallet import NLWallet, error_of, joserfc_key, new_nl_wallet, pid_for_held_keys, present, public_from_jwk
from test_wallet_provider import Instance, token
from walletlib import b64url, start_pid_server, verify_es256

APP = "1.4.0"


@pytest.fixture(scope="module")
def server(session_tmp):
    s = start_pid_server(session_tmp / f"nl-transfer-{time.monotonic_ns()}", label="nl-transfer")
    yield s
    s.stop()


def disclose(wallet: NLWallet, server, persona_index: int, app_version: str | None = APP) -> dict:
    pid, _ = pid_for_held_keys(server, wallet, persona_index=persona_index)
    params = {"sd_jwt": present(pid, {"recovery_code"})}
    if app_version:
        params["app_version"] = app_version
    return wallet.run("disclose_recovery_code", params)


class Pair:
    """A source account holding a PID's recovery code, and a destination of the same person
    whose first disclosure opened a transfer session; the destination's ephemeral key."""

    def __init__(self, server, persona_index: int, *, destination_version: str = APP):
        self.server = server
        wp = server.id("wallet-provider")
        self.source = new_nl_wallet(wp)
        # Without app_version: the old phone's disclosure only stores its code, even when an
        # earlier test left another account of this persona.
        assert disclose(self.source, server, persona_index, None)["recovery_code"] == "stored"
        self.destination = new_nl_wallet(wp)
        answer = disclose(self.destination, server, persona_index, destination_version)
        assert set(answer) == {"transfer_session_id"}, answer
        self.session = answer["transfer_session_id"]
        uuid.UUID(self.session)  # the NL wallet's session ids are UUIDs
        self.key = jwk.JWK.generate(kty="EC", crv="P-256")  # the destination's QR code key

    def params(self, **extra) -> dict:
        return {"transfer_session_id": self.session, **extra}

    def payload(self, credentials: list | None = None) -> str:
        """The source's wallet, encrypted by jwcrypto to the destination's public key."""
        public = jwk.JWK.from_json(self.key.export_public())
        token_ = jwe.JWE(json.dumps({"credentials": credentials or ["pid-1", "mdl-1"]}).encode(),
                         protected=json.dumps({"alg": "ECDH-ES", "enc": "A256GCM"}), recipient=public)
        return token_.serialize(compact=True)

    def account(self, wallet: NLWallet) -> dict:
        """The admin view of the wallet's account."""
        headers = {"Authorization": "Bearer " + self.server.admin_token}
        wp = self.server.id("wallet-provider")
        listed = requests.get(wp + "/admin/instances", headers=headers, timeout=30).json()["instances"]
        account = next(i["account"] for i in listed if i["id"] == wallet.tag)
        r = requests.get(f"{wp}/admin/accounts/{account}", headers=headers, timeout=30)
        assert r.status_code == 200, r.text
        return r.json()


def wallet_attestation(server, wallet: NLWallet) -> requests.Response:
    """A wallet attestation request (`<wp>/token`) signed by the wallet's hardware key."""
    instance = Instance.__new__(Instance)
    instance.server, instance.tag, instance.hardware = server, wallet.tag, joserfc_key(wallet.hardware_key)
    return token(server, instance.request()[0])


def test_full_transfer_moves_the_keys_and_ends_the_source(server):
    pair = Pair(server, 0)
    source, destination = pair.source, pair.destination
    moving = source.run("generate_keys", {"count": 1})["keys"][0]
    keys_before = pair.account(source)["held_keys"] + pair.account(destination)["held_keys"]
    assert wallet_attestation(server, source).status_code == 200
    # Nothing to download before the source confirmed and sent.
    assert destination.run("receive_payload", pair.params()) == {"state": "pending"}

    confirmed = source.run("confirm_transfer_session", pair.params(app_version="1.3.9"))
    assert confirmed["state"] == "ready_for_transfer"
    assert source.run("confirm_transfer_session", pair.params(app_version="1.3.9")) == confirmed, "a retry answers the same"
    assert pair.account(source)["state"] == "transferring"
    assert source.run("check_transfer_status", pair.params()) == {"state": "pending"}

    payload = pair.payload()
    sent = source.run("send_wallet_payload", pair.params(encrypted_payload=payload))
    assert sent["state"] == "ready_for_download"
    assert source.run("send_wallet_payload", pair.params(encrypted_payload=payload)) == sent, "a retry answers the same"

    received = destination.run("receive_payload", pair.params())
    assert received["state"] == "ready" and received["encrypted_payload"] == payload
    opened = jwe.JWE()
    opened.deserialize(received["encrypted_payload"], key=pair.key)
    assert json.loads(opened.payload) == {"credentials": ["pid-1", "mdl-1"]}

    assert destination.run("complete_transfer", pair.params())["state"] == "completed"
    assert destination.run("complete_transfer", pair.params())["state"] == "completed", "a retry answers the same"
    assert source.run("check_transfer_status", pair.params()) == {"state": "completed"}

    source_view, destination_view = pair.account(source), pair.account(destination)
    assert source_view["state"] == "transferred" and source_view["held_keys"] == 0
    assert destination_view["state"] == "active" and destination_view["held_keys"] == keys_before
    assert [s["state"] for s in destination_view["transfer_sessions"]] == ["completed"]
    session = source_view["transfer_sessions"][0]
    assert session["id"] == pair.session and session["role"] == "source" and session["ended_by"] == "destination"
    assert "payload" not in json.dumps(source_view) and payload not in json.dumps(destination_view)
    # The old phone gets no more attestations and no instruction but the status check.
    error_of(wallet_attestation(server, source), 403, "invalid_request")
    error_of(source.instruct("generate_keys", {"count": 1}), 409, "invalid_account_state")
    # The new phone took over the held keys: it signs a JWS signing input with one of the old
    # phone's, and the signature verifies under that key's public JWK (cryptography).
    signing_input = "eyJhbGciOiJFUzI1NiJ9.bW92ZWQ"
    signed = destination.run("sign", {"key_id": moving["key_id"], "payload": b64url(signing_input.encode())})
    verify_es256(signing_input + "." + signed["signature"], public_from_jwk(moving["jwk"]))
    assert destination.run("generate_keys", {"count": 1})["keys"]


@pytest.mark.parametrize("side", ["source", "destination"])
def test_cancel_from_either_side(server, side):
    pair = Pair(server, 1 if side == "source" else 2)
    error_of(pair.destination.instruct("cancel_transfer", pair.params()), 409, "invalid_transfer_state")  # not paired yet
    pair.source.run("confirm_transfer_session", pair.params(app_version=APP))
    if side == "destination":
        pair.source.run("send_wallet_payload", pair.params(encrypted_payload=pair.payload()))
    canceller = pair.source if side == "source" else pair.destination
    assert canceller.run("cancel_transfer", pair.params())["state"] == "cancelled"
    assert canceller.run("cancel_transfer", pair.params())["state"] == "cancelled", "a retry answers the same"
    assert pair.account(pair.source)["state"] == "active"
    assert pair.source.run("check_transfer_status", pair.params()) == {"state": "cancelled"}
    assert pair.destination.run("receive_payload", pair.params()) == {"state": "cancelled"}
    error_of(pair.destination.instruct("complete_transfer", pair.params()), 409, "invalid_transfer_state")
    # The source is active again, so the source's transfer steps are refused by its state.
    error_of(pair.source.instruct("send_wallet_payload", pair.params(encrypted_payload=pair.payload())), 409, "invalid_account_state")
    # The source is an ordinary active account again.
    assert pair.source.run("generate_keys", {"count": 1})["keys"]
    assert wallet_attestation(server, pair.source).status_code == 200


def test_out_of_order_wrong_side_and_foreign_sessions(server):
    pair = Pair(server, 3)
    stranger = new_nl_wallet(server.id("wallet-provider"))
    disclose(stranger, server, 4)  # another person's account
    # Out of order: nothing is paired yet.
    error_of(pair.destination.instruct("complete_transfer", pair.params()), 409, "invalid_transfer_state")
    # The source has not confirmed, so it is not yet a side of the session: foreign to it.
    error_of(pair.source.instruct("check_transfer_status", pair.params()), 404, "not_found")
    # Wrong side, foreign session, unknown session.
    error_of(pair.destination.instruct("confirm_transfer_session", pair.params(app_version=APP)), 403, "invalid_request")
    error_of(stranger.instruct("confirm_transfer_session", pair.params(app_version=APP)), 404, "not_found")
    error_of(pair.source.instruct("confirm_transfer_session", {"transfer_session_id": str(uuid.uuid4()), "app_version": APP}),
             404, "not_found")
    # A source app newer than the destination's may not send its wallet there.
    error_of(pair.source.instruct("confirm_transfer_session", pair.params(app_version="1.10.0")), 403, "app_version_mismatch")
    error_of(pair.source.instruct("confirm_transfer_session", pair.params(app_version="not-a-version")), 400, "invalid_instruction")
    error_of(pair.source.instruct("confirm_transfer_session", {"app_version": APP}), 400, "invalid_instruction")
    assert pair.account(pair.source)["state"] == "active", "nothing changed"

    pair.source.run("confirm_transfer_session", pair.params(app_version=APP))
    error_of(pair.destination.instruct("complete_transfer", pair.params()), 409, "invalid_transfer_state")  # nothing sent
    error_of(pair.destination.instruct("send_wallet_payload", pair.params(encrypted_payload=pair.payload())), 409,
             "invalid_account_state")  # the destination is active, send is the (transferring) source's
    error_of(pair.source.instruct("receive_payload", pair.params()), 409, "invalid_account_state")
    error_of(stranger.instruct("cancel_transfer", pair.params()), 404, "not_found")
    error_of(stranger.instruct("check_transfer_status", pair.params()), 404, "not_found")

    # Payloads that are not an ECDH-ES + A256GCM compact JWE.
    good = pair.payload()
    header = good.split(".")[0]
    for bad in ["not a jwe", "a.b.c", good + ".extra", good.replace(header, header + "!", 1),
                jwe.JWE(b"x", protected=json.dumps({"alg": "ECDH-ES", "enc": "A128GCM"}),
                        recipient=jwk.JWK.from_json(pair.key.export_public())).serialize(compact=True),
                jwe.JWE(b"x", protected=json.dumps({"alg": "ECDH-ES+A256KW", "enc": "A256GCM"}),
                        recipient=jwk.JWK.from_json(pair.key.export_public())).serialize(compact=True)]:
        error_of(pair.source.instruct("send_wallet_payload", pair.params(encrypted_payload=bad)), 400, "invalid_instruction")
    # More than 1 MiB: the instruction's own JSON error (the route reads bodies up to a 1 MiB payload's).
    over = good[:-30] + "A" * ((1 << 20) - len(good) + 1) + good[-30:]
    assert len(over) == (1 << 20) + 1
    r = pair.source.send("send_wallet_payload", pair.source.instruction_body(pair.source.challenge(), pair.params(encrypted_payload=over)))
    assert r.status_code == 400 and r.headers.get("Cache-Control") == "no-store", r.text
    assert "more than the 1048576 allowed" in r.json()["error_description"], r.text
    # Far more: the route's request body limit refuses it before any instruction runs (JSON 413).
    huge = pair.source.instruction_body(pair.source.challenge(), pair.params(encrypted_payload=good[:-30] + "A" * (2 << 20) + good[-30:]))
    r = pair.source.send("send_wallet_payload", huge)
    assert r.status_code == 413 and r.json()["error"] == "invalid_request", r.text
    assert pair.destination.run("receive_payload", pair.params()) == {"state": "pending"}, "nothing was stored"
    assert pair.source.run("send_wallet_payload", pair.params(encrypted_payload=good))["state"] == "ready_for_download"
    # Another payload once one is stored: 409, the first one stays.
    error_of(pair.source.instruct("send_wallet_payload", pair.params(encrypted_payload=pair.payload(["other"]))), 409,
             "invalid_transfer_state")
    assert pair.destination.run("receive_payload", pair.params())["encrypted_payload"] == good


def test_disclosure_without_app_version_opens_no_session_and_a_retry_gets_the_same(server):
    wp = server.id("wallet-provider")
    source = new_nl_wallet(wp)
    disclose(source, server, 5)
    # A wallet that sends no app_version is not starting a transfer: its code is just stored.
    plain = new_nl_wallet(wp)
    pid, _ = pid_for_held_keys(server, plain, persona_index=5)
    assert plain.run("disclose_recovery_code", {"sd_jwt": present(pid, {"recovery_code"})})["recovery_code"] == "stored"
    destination = new_nl_wallet(wp)
    pid, _ = pid_for_held_keys(server, destination, persona_index=5)
    first = destination.run("disclose_recovery_code", {"sd_jwt": present(pid, {"recovery_code"}), "app_version": APP})
    again = destination.run("disclose_recovery_code", {"sd_jwt": present(pid, {"recovery_code"}), "app_version": APP})
    assert again == first and "transfer_session_id" in first
    error_of(destination.instruct("disclose_recovery_code", {"sd_jwt": present(pid, {"recovery_code"}), "app_version": "v1"}),
             400, "invalid_instruction")


def test_sessions_expire_into_cancelled(session_tmp):
    server = TrustbedServer(session_tmp / f"nl-transfer-expiry-{time.monotonic_ns()}", label="nl-transfer-expiry",
                            extra_args=["--purge-interval", "1"])
    path = server.entities / "wallet-provider.json"
    doc = json.loads(path.read_text())
    doc["services"]["wallet_provider"]["transfer_lifetime"] = 3
    path.write_text(json.dumps(doc))
    server.start()
    try:
        # Settled on read: the paired source is active again.
        pair = Pair(server, 0)
        pair.source.run("confirm_transfer_session", pair.params(app_version=APP))
        assert pair.account(pair.source)["state"] == "transferring"
        time.sleep(3.5)
        assert pair.source.run("check_transfer_status", pair.params()) == {"state": "cancelled"}
        assert pair.account(pair.source)["state"] == "active"
        error_of(pair.source.instruct("send_wallet_payload", pair.params(encrypted_payload=pair.payload())), 409,
                 "invalid_account_state")
        session = pair.account(pair.destination)["transfer_sessions"][0]
        assert session["state"] == "cancelled" and session["ended_by"] == "expiry"
        # Settled at the purge tick, with nobody asking.
        other = Pair(server, 1)
        other.source.run("confirm_transfer_session", other.params(app_version=APP))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            time.sleep(0.5)
            import sqlite3
            db = sqlite3.connect(server.database)
            try:
                row = db.execute("SELECT state, ended_by FROM wallet_provider_transfer_sessions WHERE id = ?", (other.session,)).fetchone()
            finally:
                db.close()
            if row == ("cancelled", "expiry"):
                break
        assert row == ("cancelled", "expiry"), row
    finally:
        server.stop()


def test_kill_nine_between_every_step_loses_nothing(session_tmp):
    server = start_pid_server(session_tmp / f"nl-transfer-kill-{time.monotonic_ns()}", label="nl-transfer-kill")
    try:
        pair = Pair(server, 6)

        def crash():
            server.kill9()
            server.start()

        crash()
        assert pair.destination.run("receive_payload", pair.params()) == {"state": "pending"}
        crash()
        assert pair.source.run("confirm_transfer_session", pair.params(app_version=APP))["state"] == "ready_for_transfer"
        crash()
        assert pair.account(pair.source)["state"] == "transferring"
        payload = pair.payload()
        assert pair.source.run("send_wallet_payload", pair.params(encrypted_payload=payload))["state"] == "ready_for_download"
        crash()
        received = pair.destination.run("receive_payload", pair.params())
        assert received["encrypted_payload"] == payload
        crash()
        assert pair.destination.run("complete_transfer", pair.params())["state"] == "completed"
        crash()
        assert pair.source.run("check_transfer_status", pair.params()) == {"state": "completed"}
        assert pair.account(pair.source)["state"] == "transferred"
        import sqlite3
        db = sqlite3.connect(server.database)
        try:
            assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        finally:
            db.close()
    finally:
        server.stop()


def test_a_large_wallet_gets_through(server):
    """About 770 KB of credentials: a JWE just under 1 MiB, whose instruction (about 1.4 MB with the
    payload base64url-encoded in its claims) is over the server's 1 MiB request body limit, which
    the instruction route raises for it (docs/wallet-provider.md, "Limit")."""
    pair = Pair(server, 6)
    pair.source.run("confirm_transfer_session", pair.params(app_version=APP))
    credentials = ["x" * 1000] * 770
    payload = pair.payload(credentials)
    assert 1_000_000 < len(payload) <= 1 << 20, len(payload)
    assert pair.source.run("send_wallet_payload", pair.params(encrypted_payload=payload))["state"] == "ready_for_download"
    opened = jwe.JWE()
    opened.deserialize(pair.destination.run("receive_payload", pair.params())["encrypted_payload"], key=pair.key)
    assert json.loads(opened.payload)["credentials"] == credentials


def test_instances_page_cancel_posts(server):
    """The page's Cancel form without a browser: an unknown or ended session is the page again
    with the reason (404, 409); a cross-site post is refused (403) and changes nothing."""
    pair = Pair(server, 4)
    page = server.id("wallet-provider") + "/instances"
    listed = requests.get(page, timeout=10)
    assert listed.status_code == 200 and f'id="transfer-{pair.session}"' in listed.text
    r = requests.post(page, data={"cancel_transfer": pair.session}, headers={"Origin": "http://evil.example"}, timeout=10)
    assert r.status_code == 403
    r = requests.post(page, data={"cancel_transfer": str(uuid.uuid4())}, headers={"Origin": server.base}, timeout=10)
    assert r.status_code == 404 and 'role="alert"' in r.text
    r = requests.post(page, data={"cancel_transfer": pair.session}, headers={"Origin": server.base}, timeout=10)
    assert r.status_code == 200 and f"Cancelled transfer session {pair.session}." in r.text
    assert f'id="transfer-{pair.session}"' not in r.text
    r = requests.post(page, data={"cancel_transfer": pair.session}, headers={"Origin": server.base}, timeout=10)
    assert r.status_code == 409 and "cancelled" in r.text
    assert pair.destination.run("receive_payload", pair.params()) == {"state": "cancelled"}
