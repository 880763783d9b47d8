"""No acknowledged wallet instance is lost, and the database stays sound, when the server is
killed with SIGKILL during a registration load (issue 20, Benchmark).

`trustbed wallet bench --flow register` is the load; it appends the `hardware_key_tag` of every
registration that got its 204 to a file, and after the kill every one of them must be an
instance with its account in the database, `PRAGMA integrity_check` must say ok, and the
restarted server must list them in its admin API (modelled on test_durability.py)."""
from __future__ import annotations

import random
import sqlite3
import subprocess
import time

import requests

from harness import trustbed_binary


def _check_database(path, acknowledged_file) -> tuple[int, int]:
    """integrity_check is ok and every acknowledged tag is an instance with its account;
    returns (acknowledged, instances)."""
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        rows = dict(db.execute("SELECT id, account FROM wallet_provider_instances"))
        accounts = {a for (a,) in db.execute("SELECT id FROM wallet_provider_accounts")}
    finally:
        db.close()
    acked = acknowledged_file.read_text().split() if acknowledged_file.exists() else []
    missing = [t for t in acked if t not in rows]
    assert not missing, f"{len(missing)} of {len(acked)} acknowledged registrations have no instance, e.g. {missing[:3]}"
    orphans = [i for i, a in rows.items() if a not in accounts]
    assert not orphans, f"instances without their account (a half-written registration): {orphans[:3]}"
    return len(acked), len(rows)


def test_kill_nine_during_registrations_loses_no_acknowledged_instance(make_server):
    server = make_server("wp-durability", extra_args=["--purge-interval", "1"])
    acknowledged = server.dir / "acknowledged.txt"
    rng = random.Random(20)
    total_acked = 0
    for round_ in range(3):
        server.start()
        bench = subprocess.Popen(
            [str(trustbed_binary()), "wallet", "bench", "--flow", "register", "--provider", server.id("wallet-provider"),
             "--concurrency", "4", "--duration", "30", "--scheduling", "normal", "--acknowledged", str(acknowledged)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(2 + rng.random() * 2)
            server.kill9()
        finally:
            bench.kill()
            bench.wait(timeout=10)
        acked, stored = _check_database(server.database, acknowledged)
        assert acked > total_acked, f"round {round_}: no registration was acknowledged ({acked} in all)"
        assert stored >= acked
        total_acked = acked
    # The restarted server serves them all.
    server.start()
    try:
        r = requests.get(server.url("wallet-provider", "/admin/instances"),
                         headers={"Authorization": "Bearer " + server.admin_token}, timeout=30)
        assert r.status_code == 200, r.text
        listed = {i["id"] for i in r.json()["instances"]}
        assert set(acknowledged.read_text().split()) <= listed
    finally:
        server.stop()
