"""`trustbed wallet transfer` (issue 21, items 5 and 7): a whole device transfer between two CLI
wallet files of the same person, each step a command printing the states it passed through; the
destination's QR code read back from its PNG with zxing-cpp; the payload a compact JWE that only
the destination file's ephemeral key opens; `--verbose` shows every instruction and answer."""
from __future__ import annotations

import json
import time

import pytest

from harness import run_cli
from walletlib import admin_offer, persona, start_pid_server

PIN_OLD, PIN_NEW = "1357", "2468"


@pytest.fixture(scope="module")
def server(session_tmp):
    s = start_pid_server(session_tmp / f"cli-transfer-{time.monotonic_ns()}", label="cli-transfer")
    yield s
    s.stop()


def cli(*args: str, ok: bool = True):
    p = run_cli("wallet", *args, timeout=120)
    if ok:
        assert p.returncode == 0, f"wallet {' '.join(args)} exited {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    return p


def nl_wallet_with_pid(server, path, pin: str, persona_index: int) -> None:
    cli("register", "--provider", server.id("wallet-provider"), "--pin", pin, "--wallet", str(path))
    issuer = server.id("pid-provider")
    offer = admin_offer(issuer, server.admin_token, persona(server, persona_index)["id"], ["urn:eudi:pid:1"])
    cli("receive", offer["offer_url"], "--save", str(path))


def test_transfer_between_two_wallet_files(server, tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    nl_wallet_with_pid(server, old, PIN_OLD, 2)
    nl_wallet_with_pid(server, new, PIN_NEW, 2)
    credentials_before = json.loads(old.read_text())["credentials"]

    # The old phone's own first disclosure: it stores the code, no session.
    first = json.loads(cli("transfer", "start", "--wallet", str(old), "--pin", PIN_OLD).stdout)
    assert first.get("recovery_code") == "stored" and "transfer_session_id" not in first, first

    png = tmp_path / "qr.png"
    p = cli("transfer", "start", "--wallet", str(new), "--pin", PIN_NEW, "--app-version", "2.0.0", "--png", str(png), "--verbose")
    started = json.loads(p.stdout)
    assert started["role"] == "destination" and started["state"] == "created" and started["states"] == ["created"]
    qr = started["qr"]
    assert qr.startswith(server.id("wallet-provider") + "/transfer#s=" + started["transfer_session_id"])
    assert "█" in p.stderr and "instruction disclose_recovery_code" in p.stderr
    import zxingcpp
    from PIL import Image
    [decoded] = zxingcpp.read_barcodes(Image.open(png))
    assert decoded.text == qr

    confirmed = json.loads(cli("transfer", "confirm", "--wallet", str(old), "--pin", PIN_OLD, "--app-version", "1.9.0", qr).stdout)
    assert confirmed["role"] == "source" and confirmed["state"] == "ready_for_transfer"
    p = cli("transfer", "send", "--wallet", str(old), "--pin", PIN_OLD, "--verbose")
    assert json.loads(p.stdout)["states"] == ["ready_for_transfer", "ready_for_download"]
    assert "instruction send_wallet_payload" in p.stderr and "result" in p.stderr
    status = json.loads(cli("transfer", "status", "--wallet", str(old), "--pin", PIN_OLD).stdout)
    assert status["status"] == "pending"

    received = json.loads(cli("transfer", "receive", "--wallet", str(new), "--pin", PIN_NEW).stdout)
    assert received["credentials"] == len(credentials_before)
    assert json.loads(new.read_text())["credentials"][-len(credentials_before):] == credentials_before
    done = json.loads(cli("transfer", "complete", "--wallet", str(new), "--pin", PIN_NEW).stdout)
    assert done["states"] == ["created", "ready_for_download", "completed"]
    assert "ephemeral_key" not in json.loads(new.read_text())["nl"]["transfer"]
    final = json.loads(cli("transfer", "status", "--wallet", str(old), "--pin", PIN_OLD).stdout)
    assert final["status"] == "completed" and final["states"][-1] == "completed"

    # The old file's account is transferred: its next transfer step is refused with the server's JSON error.
    p = cli("transfer", "cancel", "--wallet", str(old), "--pin", PIN_OLD, ok=False)
    assert p.returncode == 1 and "invalid_account_state" in p.stderr


def test_cancel_from_the_cli(server, tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    nl_wallet_with_pid(server, old, PIN_OLD, 3)
    nl_wallet_with_pid(server, new, PIN_NEW, 3)
    cli("transfer", "start", "--wallet", str(old), "--pin", PIN_OLD)
    qr = json.loads(cli("transfer", "start", "--wallet", str(new), "--pin", PIN_NEW).stdout)["qr"]
    cli("transfer", "confirm", "--wallet", str(old), "--pin", PIN_OLD, qr)
    cancelled = json.loads(cli("transfer", "cancel", "--wallet", str(new), "--pin", PIN_NEW).stdout)
    assert cancelled["state"] == "cancelled"
    assert "ephemeral_key" not in json.loads(new.read_text())["nl"]["transfer"]
    assert json.loads(cli("transfer", "status", "--wallet", str(old), "--pin", PIN_OLD).stdout)["status"] == "cancelled"
    p = cli("transfer", "receive", "--wallet", str(new), "--pin", PIN_NEW, ok=False)
    assert p.returncode == 1 and json.loads(p.stdout)["state"] == "cancelled"
    # A wrong PIN is the server's invalid_pin, and the command exits 1.
    p = cli("transfer", "status", "--wallet", str(old), "--pin", "0000", ok=False)
    assert p.returncode == 1 and "invalid_pin" in p.stderr
