"""`trustbed wallet bench --flow register | attest | attest-legacy | pid` (issue 20, Benchmark)
against the real server: each flow runs for about a second and must report non-zero rates, a
p99 for each of its steps and no errors, and the server's state must show what the load did:
every acknowledged registration is an `installed` instance in the admin API, the warm-up
instances of the attestation flows became `operational`, and the attested HAIP flow's instances
became `valid` (a PID issued to a key they had attested) with every acknowledged PID on record."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import time

import pytest
import requests

from harness import run_cli, trustbed_binary
from walletlib import persona, start_pid_server

SD = "urn:eudi:pid:1"
TIMEOUT = 120


@pytest.fixture(scope="module")
def server(session_tmp):
    s = start_pid_server(session_tmp / f"wallet-bench-{time.monotonic_ns()}", label="wallet-bench")
    yield s
    s.stop()


def instances(server) -> dict[str, dict]:
    r = requests.get(server.url("wallet-provider", "/admin/instances"),
                     headers={"Authorization": "Bearer " + server.admin_token}, timeout=10)
    assert r.status_code == 200, r.text
    return {i["id"]: i for i in r.json()["instances"]}


def bench(*args: str) -> dict:
    p = run_cli("wallet", "bench", "--concurrency", "2", "--duration", "1", "--json", *args, timeout=TIMEOUT)
    assert p.returncode == 0, f"bench exited {p.returncode}: {p.stderr[-2000:]}\n{p.stdout[-2000:]}"
    report = json.loads(p.stdout)
    assert report["errors"] == {}, report["errors"]
    assert report["flows"] > 0 and report["flows_per_second"] > 0, report
    return report


def check_steps(report: dict, steps: list[str]) -> None:
    assert sorted(report["steps"]) == sorted(steps), report["steps"]
    for step in steps:
        entry = report["steps"][step]
        # A flow that failed half-way is an error, not a flow: every step of every flow is timed.
        assert entry["count"] == report["flows"] and 0 < entry["p50_ms"] <= entry["p99_ms"], (step, entry)


def test_register_flow_registers_every_acknowledged_instance(server, tmp_path):
    acknowledged = tmp_path / "tags.txt"
    before = instances(server)
    report = bench("--flow", "register", "--provider", server.id("wallet-provider"), "--acknowledged", str(acknowledged))
    assert report["flow"] == "register" and report["provider"] == server.id("wallet-provider")
    check_steps(report, ["nonce", "device_attestation", "registration"])
    tags = acknowledged.read_text().split()
    assert len(tags) == report["flows"] == len(set(tags)), (len(tags), report["flows"])
    after = instances(server)
    new = {k: v for k, v in after.items() if k not in before}
    assert set(new) == set(tags), "the admin API lists exactly the instances the bench acknowledged"
    assert all(i["state"] == "installed" and i["format"] == "dev" for i in new.values()), list(new.values())[:3]
    assert len({i["account"] for i in new.values()}) == len(new), "each registration makes its own account"


@pytest.mark.parametrize("flow", ["attest", "attest-legacy"])
def test_attest_flows_use_instances_registered_before_the_clock(server, flow):
    before = instances(server)
    report = bench("--flow", flow, "--provider", server.id("wallet-provider"), "--instances", "3")
    assert report["flow"] == flow and report["instances_per_thread"] == 3
    check_steps(report, ["nonce", "device_attestation", "wallet_attestation"])
    new = {k: v for k, v in instances(server).items() if k not in before}
    # 2 threads × 3 warm-up instances, attested round-robin: all of them became operational.
    assert len(new) == 6, sorted(new)
    assert report["flows"] >= 6 and {i["state"] for i in new.values()} == {"operational"}, new


def test_pid_flow_is_the_attested_haip_flow(server, tmp_path):
    acknowledged = tmp_path / "pids.txt"
    before = instances(server)
    report = bench("--flow", "pid", "--issuer", server.id("pid-provider-haip"), "--provider", server.id("wallet-provider"),
                   "--admin-token", server.admin_token, "--persona", persona(server)["id"], "--configuration", SD,
                   "--verify-every", "3", "--acknowledged", str(acknowledged))
    assert report["flow"] == "pid" and report["dpop"] is True and report["credential_configuration_id"] == SD
    check_steps(report, ["offer", "token", "nonce", "key_attestation", "credential"])
    assert report["credentials"] == report["flows"] and report["credentials_per_second"] > 0
    assert report["verified_samples"] >= 1, report
    # One instance per thread, registered and attested before the clock: PIDs went to keys they
    # had attested, so they became valid (with one valid instance per person, an instance of the
    # same persona that got a PID later sends the earlier one back to operational).
    new = {k: v for k, v in instances(server).items() if k not in before}
    states = {i["state"] for i in new.values()}
    assert len(new) == 2 and "valid" in states and states <= {"valid", "operational"}, new
    # Every PID the bench received has its issued-credential record.
    acked = {tuple(line.split()) for line in acknowledged.read_text().splitlines() if line.strip()}
    assert len(acked) == report["credentials"], (len(acked), report["credentials"])
    db = sqlite3.connect(f"file:{server.database}?mode=ro", uri=True)
    try:
        rows = {(u, str(i)) for u, i in db.execute("SELECT status_uri, status_index FROM issued_credentials")}
    finally:
        db.close()
    assert acked <= rows, sorted(acked - rows)[:3]


def test_the_haip_issuer_refuses_the_plain_flow(server):
    """The comparison the benchmark's floor rests on: pid-provider-haip demands what the pid
    flow brings (without it every flow fails at the token endpoint), pid-provider does not."""
    p = run_cli("wallet", "bench", "--issuer", server.id("pid-provider-haip"), "--admin-token", server.admin_token,
                "--persona", persona(server)["id"], "--count", "2", "--concurrency", "1", "--json", timeout=TIMEOUT)
    assert p.returncode == 1, p.stdout
    errors = json.loads(p.stdout)["errors"]
    assert sum(errors.values()) == 2 and all(k.startswith("token:") for k in errors), errors


@pytest.mark.parametrize("args,message", [
    (["--flow", "register"], "--provider"),
    (["--flow", "pid", "--provider", "http://127.0.0.1:1/wp"], "--issuer"),
    (["--flow", "attest"], "--provider"),
    (["--flow", "bogus", "--provider", "http://127.0.0.1:1/wp"], "flow"),
    (["--flow", "attest", "--provider", "http://127.0.0.1:1/wp", "--instances", "0"], "--instances"),
    (["--flow", "register", "--provider", "http://127.0.0.1:1/wp", "--batch", "2"], "--batch"),
])
def test_usage_errors(args, message):
    p = run_cli("wallet", "bench", *args, timeout=TIMEOUT)
    assert p.returncode != 0 and message in p.stderr, p.stderr


def test_an_unreachable_provider_is_a_setup_error_not_a_hang(tmp_path):
    """Every thread's warm-up fails at once; the run ends with no flows and exit status 1."""
    started = time.monotonic()
    p = subprocess.run([str(trustbed_binary()), "wallet", "bench", "--flow", "attest", "--provider", "http://127.0.0.1:9/wp",
                        "--duration", "1", "--json"], capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 1 and time.monotonic() - started < 30
    errors = json.loads(p.stdout)["errors"]
    assert errors and all(k.startswith("setup:") for k in errors), errors
