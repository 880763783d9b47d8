"""Nothing acknowledged is lost, and the database stays sound, when the server is killed with
SIGKILL while it issues PIDs and while it purges expired state.

The PID Provider here keeps offers, codes, tokens and nonces for 3 s and the server purges every
second, so each purge deletes the rows of the flows of a few seconds before: the bulk deletes
that once lost commits (a transaction that spills SQLite's page cache and changes a spilled page
again). `trustbed wallet bench` is the load; it appends "<status list uri> <idx>" for every
credential it received to a file, and every line must have its issued-credential record after
the kill. The database, its -wal and -shm, and the key folders are the server's alone.
"""
from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import stat
import subprocess
import time

from harness import trustbed_binary

SD_JWT = "urn:eudi:pid:1"
ADMIN_TOKEN = "durability-admin-token"
SHORT_LIFETIMES = {"offer_lifetime": 3, "code_lifetime": 3, "token_lifetime": 3, "nonce_lifetime": 3,
                   "request_uri_lifetime": 3}


def _short_lived_server(make_server):
    server = make_server("durability", extra_args=["--purge-interval", "1", "--admin-token", ADMIN_TOKEN,
                                                   "--log-level", "debug"])
    provider = server.entities / "pid-provider.json"
    config = json.loads(provider.read_text())
    config["services"]["pid_provider"].update(SHORT_LIFETIMES)
    provider.write_text(json.dumps(config, indent=2))
    return server


def _check_database(path, acknowledged_file) -> tuple[int, int]:
    """integrity_check is ok and every acknowledged credential has its record; returns
    (acknowledged, records)."""
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        rows = {(u, str(i)) for u, i in db.execute("SELECT status_uri, status_index FROM issued_credentials")}
    finally:
        db.close()
    acked = [tuple(line.split()) for line in acknowledged_file.read_text().splitlines() if line.strip()] \
        if acknowledged_file.exists() else []
    missing = set(acked) - rows
    assert not missing, f"{len(missing)} of {len(acked)} acknowledged credentials have no record, e.g. {sorted(missing)[:3]}"
    return len(acked), len(rows)


def test_kill_nine_during_issuance_and_purge_loses_nothing(make_server):
    server = _short_lived_server(make_server)
    acknowledged = server.dir / "acknowledged.txt"
    rng = random.Random(18)
    total_acked = 0
    purged = 0
    previous = os.umask(0o022)  # what a shell gives; the files must be private anyway
    try:
        for round_ in range(5):
            server.start()
            bench = subprocess.Popen(
                [str(trustbed_binary()), "wallet", "bench", "--issuer", server.url("pid-provider"), "--admin-token", ADMIN_TOKEN,
                 "--concurrency", "4", "--duration", "30", "--configuration", SD_JWT, "--scheduling", "normal",
                 "--acknowledged", str(acknowledged)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                # Long enough for the first flows' state to expire and be purged (3 s + 1 s).
                time.sleep(5 + rng.random() * 3)
                server.kill9()
            finally:
                bench.kill()
                bench.wait(timeout=10)
            _check_private_files(server)  # before sqlite3 below checkpoints and removes the -wal
            log = server.log_path.read_text(errors="replace")
            purged = sum(int(n) for n in re.findall(r"purged (\d+) expired service records", log))
            acked, records = _check_database(server.database, acknowledged)
            assert acked > total_acked, f"round {round_}: no credential was issued ({acked} acknowledged in all)"
            total_acked = acked
        assert purged >= 100, f"the purges deleted only {purged} rows: the kills did not meet a bulk purge"
    finally:
        os.umask(previous)
        server.stop()


def _check_private_files(server):
    """After a kill -9 the -wal and -shm are still there: they, the database, the key folders and
    the key files are 0600 / 0700 although the server ran under umask 022."""
    for suffix in ("", "-wal", "-shm"):
        path = str(server.database) + suffix
        assert os.path.exists(path), path
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, f"{path}: {oct(os.stat(path).st_mode)}"
    for root, dirs, files in os.walk(server.keys):
        assert stat.S_IMODE(os.stat(root).st_mode) == 0o700, f"{root}: {oct(os.stat(root).st_mode)}"
        for name in files:
            path = os.path.join(root, name)
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, f"{path}: {oct(os.stat(path).st_mode)}"
