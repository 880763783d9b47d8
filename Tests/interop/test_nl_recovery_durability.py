"""A PIN recovery (issue 21, item 3) survives `kill -9` of the server between each of its steps:
every acknowledged step is in the database (the account's state, the pending PIN key, the
recovery keys, the PID Provider's token and c_nonce), `PRAGMA integrity_check` stays ok, and the
flow goes on against the restarted server where it stopped (as test_durability.py kills it).
A retried step whose answer was lost is also shown to be safe: start_pin_recovery again from
`recovering_pin`, and a disclosure repeated after it succeeded."""
from __future__ import annotations

import sqlite3

from nlwallet import derive_pin_key, error_of, new_nl_wallet, pid_for_held_keys, present
from walletlib import start_pid_server
from test_nl_recovery import IssuerSide, account_of, account_view, disclose, start_pin_recovery


def restart(server):
    server.kill9()
    db = sqlite3.connect(server.database)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        db.close()
    server.start()


def test_kill_nine_between_each_step_of_a_pin_recovery(session_tmp):
    import time
    server = start_pid_server(session_tmp / f"nl-recovery-kill-{time.monotonic_ns()}", label="nl-recovery-kill")
    try:
        wp = server.id("wallet-provider")
        wallet = new_nl_wallet(wp, pin="123456")
        pid, _ = pid_for_held_keys(server, wallet, persona_index=0)
        assert wallet.result(disclose(wallet, pid))["recovery_code"] == "stored"
        wrong = derive_pin_key("000000", wallet.salt)
        for _ in range(4):
            wallet.instruct("generate_keys", signer=wrong)
        account = account_of(server, wp, wallet.tag)
        restart(server)
        assert account_view(server, wp, account)["state"] == "blocked"

        # Step 1: the PID Provider's token and c_nonce.
        side = IssuerSide(server, persona_index=0)
        restart(server)

        # Step 2: start_pin_recovery (then a retry, as after a lost answer).
        new_pin = derive_pin_key("654321", wallet.salt)
        wallet.result(start_pin_recovery(wallet, side, new_pin))
        restart(server)
        view = account_view(server, wp, account)
        assert view["state"] == "recovering_pin", view
        result = wallet.result(start_pin_recovery(wallet, side, new_pin))
        assert result["previous_state"] == "blocked"
        restart(server)
        assert account_view(server, wp, account)["state"] == "recovering_pin"

        # Step 3: the PID on the recovery keys (token and c_nonce from before both restarts).
        recovery_pid = side.credential(result["proofs"])
        restart(server)

        # Step 4: the disclosure; after the restart the new PIN is in force.
        done = wallet.result(disclose(wallet, recovery_pid, signer=new_pin))
        assert done["account_state"] == "active"
        restart(server)
        assert account_view(server, wp, account)["state"] == "active"
        wallet.pin = "654321"
        wallet.run("generate_keys", {"count": 1})
        error_of(wallet.instruct("generate_keys", signer=derive_pin_key("123456", wallet.salt)), 403, "invalid_pin")
        # The same disclosure again (its answer lost): matched, nothing else changes.
        again = wallet.result(disclose(wallet, pid))
        assert again["recovery_code"] == "matched" and again["account_state"] == "active", again
    finally:
        server.stop()
