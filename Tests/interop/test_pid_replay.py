"""Single-use values under concurrency (issue 7 item 11): 50 simultaneous attempts with the same
pre-authorized code, the same c_nonce, the same DPoP proof: exactly one wins, the others get
the spec's error.  Also the tx_code limit: five wrong codes kill the pre-authorized code."""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from fedlib import assert_json_error, describe
from walletlib import (PRE_AUTH_GRANT, Wallet, admin_offer, dpop_proof, key_proof, new_key, persona, start_pid_server)

SD = "urn:eudi:pid:1"
N = 50


@pytest.fixture(scope="module")
def pid(session_tmp):
    server = start_pid_server(session_tmp / f"pid-replay-{time.monotonic_ns()}", label="pid-replay")
    yield server
    server.stop()


def race(requests_to_send):
    """Sends every request at once (a barrier releases 50 threads together); returns the responses."""
    barrier = threading.Barrier(len(requests_to_send))

    def send(make):
        barrier.wait()
        return make()

    with ThreadPoolExecutor(max_workers=len(requests_to_send)) as pool:
        return list(pool.map(send, requests_to_send))


def offer_code(server, *, tx_code: bool = False) -> tuple[str, str | None]:
    answer = admin_offer(server.id("pid-provider"), server.admin_token, persona(server)["id"], [SD], tx_code=tx_code)
    return answer["credential_offer"]["grants"][PRE_AUTH_GRANT]["pre-authorized_code"], answer.get("tx_code")


def winners_and_losers(responses, ok: int = 200):
    wins = [r for r in responses if r.status_code == ok]
    return wins, [r for r in responses if r.status_code != ok]


def test_pre_authorized_code_replayed_50_times_concurrently(pid):
    issuer = pid.id("pid-provider")
    code, _ = offer_code(pid)
    form = {"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": code}
    responses = race([lambda: requests.post(issuer + "/token", data=form, timeout=30)] * N)
    wins, losers = winners_and_losers(responses)
    assert len(wins) == 1, f"exactly one token for one code, got {len(wins)}: {[describe(r) for r in responses[:3]]}"
    for r in losers:
        assert_json_error(r, 400, "invalid_grant")
    # And afterwards, sequentially.
    assert_json_error(requests.post(issuer + "/token", data=form, timeout=10), 400, "invalid_grant")


def test_c_nonce_replayed_50_times_concurrently(pid):
    issuer = pid.id("pid-provider")
    code, _ = offer_code(pid)
    wallet = Wallet(issuer, use_dpop=False)
    token = wallet.token({"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": code})["access_token"]
    c_nonce = wallet.nonce()
    # 50 different proof keys over one c_nonce; the token stays valid for all of them.
    proofs = [key_proof(new_key(), issuer, c_nonce) for _ in range(N)]
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def make(proof):
        return lambda: requests.post(issuer + "/credential", json={"credential_configuration_id": SD, "proofs": {"jwt": [proof]}},
                                     headers=headers, timeout=30)

    responses = race([make(p) for p in proofs])
    wins, losers = winners_and_losers(responses)
    assert len(wins) == 1, f"one c_nonce, one credential; got {len(wins)}: {[describe(r) for r in responses[:3]]}"
    for r in losers:
        assert_json_error(r, 400, "invalid_nonce")
    r = requests.post(issuer + "/credential", json={"credential_configuration_id": SD,
                                                    "proofs": {"jwt": [key_proof(new_key(), issuer, c_nonce)]}},
                      headers=headers, timeout=10)
    assert_json_error(r, 400, "invalid_nonce")


def test_dpop_proof_replayed_50_times_concurrently(pid):
    issuer = pid.id("pid-provider")
    # Learn the AS's DPoP nonce (if it asks for one) with a normal DPoP token request first.
    wallet = Wallet(issuer, use_dpop=True)
    code, _ = offer_code(pid)
    wallet.token({"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": code})
    codes = [offer_code(pid)[0] for _ in range(N)]
    proof = dpop_proof(wallet.dpop_key, "POST", issuer + "/token", nonce=wallet.as_nonce)

    def make(c):
        return lambda: requests.post(issuer + "/token", data={"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": c},
                                     headers={"DPoP": proof}, timeout=30)

    responses = race([make(c) for c in codes])
    wins, losers = winners_and_losers(responses)
    assert len(wins) == 1, f"one DPoP proof, one token; got {len(wins)}: {[describe(r) for r in responses[:3]]}"
    assert wins[0].json()["token_type"] == "DPoP"
    for r in losers:
        assert_json_error(r, 400, "invalid_dpop_proof")


def test_wrong_tx_code_five_times_kills_the_code(pid):
    issuer = pid.id("pid-provider")
    code, tx = offer_code(pid, tx_code=True)
    wrong = "0" * len(tx) if tx != "0" * len(tx) else "1" * len(tx)
    form = {"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": code}
    for _ in range(5):
        assert_json_error(requests.post(issuer + "/token", data=dict(form, tx_code=wrong), timeout=10), 400, "invalid_grant")
    assert_json_error(requests.post(issuer + "/token", data=dict(form, tx_code=tx), timeout=10), 400, "invalid_grant")


def test_wrong_tx_codes_raced_cannot_exceed_the_limit(pid):
    """50 wrong guesses at once still count one by one: afterwards the right code is refused."""
    issuer = pid.id("pid-provider")
    code, tx = offer_code(pid, tx_code=True)
    wrong = "0" * len(tx) if tx != "0" * len(tx) else "1" * len(tx)
    form = {"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": code, "tx_code": wrong}
    for r in race([lambda: requests.post(issuer + "/token", data=form, timeout=30)] * N):
        assert_json_error(r, 400, "invalid_grant")
    assert_json_error(requests.post(issuer + "/token", data=dict(form, tx_code=tx), timeout=10), 400, "invalid_grant")


def test_right_tx_code_after_four_wrong_ones_still_works(pid):
    issuer = pid.id("pid-provider")
    code, tx = offer_code(pid, tx_code=True)
    wrong = "0" * len(tx) if tx != "0" * len(tx) else "1" * len(tx)
    form = {"grant_type": PRE_AUTH_GRANT, "pre-authorized_code": code}
    for _ in range(4):
        assert_json_error(requests.post(issuer + "/token", data=dict(form, tx_code=wrong), timeout=10), 400, "invalid_grant")
    r = requests.post(issuer + "/token", data=dict(form, tx_code=tx), timeout=10)
    assert r.status_code == 200, describe(r)
