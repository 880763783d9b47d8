"""SIGTERM while the server is busy: it must exit 0 every time, never crash, and leave its state usable.

A large federation makes `serve` create its missing keys in the background after start-up
("created the keys of N entities"). A SIGTERM in the middle of that used to let `exit()` run
OpenSSL's atexit cleanup while key-generation threads were still inside libcrypto: a segfault
now and then, more often on a busy machine. The rounds below stop the server at varying points
of that work, with and without request load (requests also load and create keys)."""
from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

import fedlib
from harness import REPO

LEAVES = 3000
ROUNDS = 20


def generate_federation(directory: Path, leaves: int) -> None:
    subprocess.run([sys.executable, str(REPO / "Tests" / "bench" / "gen_entities.py"), str(directory), str(leaves),
                    "--intermediates", "30"], check=True, capture_output=True)


def hammer(server, stop: threading.Event, errors: list[str]) -> None:
    """Requests that need keys (statements of leaves not signed yet) until told to stop."""
    rng = random.Random()
    with requests.Session() as s:
        while not stop.is_set():
            n = rng.randrange(LEAVES)
            url = rng.choice([f"{server.base}/leaf-{n}/.well-known/openid-federation",
                              f"{server.base}/int-{n % 30}/fetch?sub={server.id(f'leaf-{n}')}",
                              f"{server.base}/ta/.well-known/openid-federation"])
            try:
                s.get(url, timeout=2)
            except requests.RequestException:
                pass  # the server is going away: expected


def terminate(server, label: str) -> None:
    server.proc.send_signal(signal.SIGTERM)
    try:
        code = server.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        pytest.fail(f"{label}: serve did not exit within 20 s of SIGTERM; log: {server.log_tail(1500)}")
    log = server.log_tail(3000)
    assert code == 0, f"{label}: serve exited {code} on SIGTERM ({'signal ' + signal.Signals(-code).name if code < 0 else 'status'}); log: {log}"
    for marker in ("Segmentation", "Fatal error", "double free", "corrupted", "SIGSEGV", "Aborted"):
        assert marker not in log, f"{label}: {marker!r} in the log: {log}"
    server._close_log()


def test_sigterm_during_key_generation_and_load_always_exits_cleanly(make_server, tmp_path):
    entities = tmp_path / "Entities"
    generate_federation(entities, LEAVES)
    server = make_server("sigterm-rounds", entities=entities)
    rng = random.Random(20261128)
    ta_kid = None
    for round_ in range(ROUNDS):
        loaded = round_ % 2 == 1
        server.start(timeout=60)
        kid = fedlib.fetch_entity_configuration(server.id("ta"))[1]["kid"]
        assert ta_kid in (None, kid), f"round {round_}: the Trust Anchor's key changed across a clean restart"
        ta_kid = kid
        stop, errors, workers = threading.Event(), [], []
        if loaded:
            workers = [threading.Thread(target=hammer, args=(server, stop, errors), daemon=True) for _ in range(4)]
            for w in workers:
                w.start()
        time.sleep(rng.uniform(0.0, 0.6))
        try:
            terminate(server, f"round {round_} ({'under load' if loaded else 'idle'})")
        finally:
            stop.set()
            for w in workers:
                w.join(5)

    # The state left behind is reused: same Trust Anchor key, every statement signed and verifiable.
    server.start(timeout=60)
    assert fedlib.fetch_entity_configuration(server.id("ta"))[1]["kid"] == ta_kid
    for n in random.Random(7).sample(range(LEAVES), 40):
        fedlib.fetch_entity_configuration(server.id(f"leaf-{n}"))  # verifies its signature
    terminate(server, "final")
