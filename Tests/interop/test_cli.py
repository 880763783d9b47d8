"""The trustbed command line: help, resolve, check, and refusing malformed entity files."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from harness import DEMO_ENTITIES, free_port, run_cli, trustbed_binary
from fedlib import diff, fetch_entity_configuration, resolve_metadata_independently, validate_trust_chain


@pytest.mark.parametrize("command", [["serve"], ["resolve"], ["check"], ["keys", "rotate"], ["trust-mark", "revoke"]])
def test_help(trustbed_bin, command):
    p = run_cli(*command, "--help", timeout=20)
    assert p.returncode == 0, f"`trustbed {' '.join(command)} --help` exited {p.returncode}: {p.stderr[-500:]}"
    out = p.stdout + p.stderr
    assert "usage" in out.lower(), f"help for {command} has no usage line: {out[:500]}"
    assert len(out.strip().splitlines()) >= 3, f"help for {command} is too short: {out!r}"


def _resolve_cli(fed, subject: str, *extra: str) -> dict:
    p = run_cli("resolve", fed.id(subject), "--trust-anchor", fed.id("ta"), *extra, timeout=60)
    assert p.returncode == 0, f"`trustbed resolve {subject}` exited {p.returncode}\nstderr: {p.stderr[-1500:]}\nstdout: {p.stdout[-500:]}"
    try:
        out = json.loads(p.stdout)
    except ValueError:
        raise AssertionError(f"`trustbed resolve` stdout is not JSON: {p.stdout[:500]!r}")
    for key in ("metadata", "trust_chain"):
        assert key in out, f"`trustbed resolve` output lacks {key}: {sorted(out)}"
    return out


@pytest.mark.parametrize("subject,length", [("pid-provider", 4), ("relying-party", 3)])
def test_resolve_cli(fed, subject, length):
    out = _resolve_cli(fed, subject)
    statements = validate_trust_chain(out["trust_chain"], fed.id(subject), fed.id("ta"))
    assert len(statements) == length, f"CLI chain for {subject}: {len(statements)} statements, expected {length}"
    problems = diff(resolve_metadata_independently(statements), out["metadata"])
    assert not problems, "CLI metadata differs from independent policy application:\n  " + "\n  ".join(problems)


def test_resolve_cli_entity_type(fed):
    out = _resolve_cli(fed, "pid-provider", "--entity-type", "openid_credential_issuer")
    assert set(out["metadata"]) == {"openid_credential_issuer"}, sorted(out["metadata"])
    assert out["metadata"]["openid_credential_issuer"]["batch_credential_issuance"] == {"batch_size": 10}


def test_resolve_cli_with_pinned_trust_anchor_keys(fed, tmp_path):
    _, _, ta = fetch_entity_configuration(fed.id("ta"))
    jwks_file = tmp_path / "ta.jwks.json"
    jwks_file.write_text(json.dumps(ta["jwks"]))
    p = run_cli("resolve", fed.id("pid-provider"), "--trust-anchor", fed.id("ta"), "--trust-anchor-jwks", str(jwks_file), timeout=60)
    assert p.returncode == 0, f"resolve with pinned TA keys failed: {p.stderr[-800:]}"
    validate_trust_chain(json.loads(p.stdout)["trust_chain"], fed.id("pid-provider"), fed.id("ta"), ta_jwks=ta["jwks"])


def test_resolve_cli_unknown_trust_anchor(fed):
    p = run_cli("resolve", fed.id("pid-provider"), "--trust-anchor", fed.id("not-a-ta"), timeout=60)
    assert p.returncode != 0, f"resolve against an unknown TA must fail; stdout: {p.stdout[:300]}"
    assert p.stderr.strip(), "resolve against an unknown TA must explain itself on stderr"


@pytest.mark.parametrize("name", ["ta", "intermediate", "pid-provider", "wallet-provider", "relying-party"])
def test_check_healthy_entity(fed, name):
    p = run_cli("check", fed.id(name), timeout=60)
    assert p.returncode == 0, f"`trustbed check {name}` exited {p.returncode}\nstdout: {p.stdout[-1500:]}\nstderr: {p.stderr[-800:]}"
    assert p.stdout.strip(), "check printed nothing"


def test_check_missing_entity(fed):
    p = run_cli("check", fed.id("nobody"), timeout=60)
    assert p.returncode != 0, f"check of a non-existent entity must fail; stdout: {p.stdout[-500:]}"


def test_check_unreachable_host(trustbed_bin):
    p = run_cli("check", f"http://127.0.0.1:{free_port()}/ghost", timeout=60)
    assert p.returncode != 0, f"check of an unreachable entity must fail; stdout: {p.stdout[-500:]}"


@pytest.mark.parametrize("mutation,field", [
    (lambda d: d.__setitem__("authority_hints", "ta"), "authority_hints"),
    (lambda d: d.__setitem__("metadata", ["not", "an", "object"]), "metadata"),
])
def test_serve_rejects_malformed_entity_file(trustbed_bin, tmp_path, mutation, field):
    entities = tmp_path / "Entities"
    shutil.copytree(DEMO_ENTITIES, entities)
    rp = json.loads((entities / "relying-party.json").read_text())
    mutation(rp)
    (entities / "relying-party.json").write_text(json.dumps(rp))
    port = free_port()
    cmd = [str(trustbed_binary()), "serve", "--entities", str(entities), "--keys", str(tmp_path / "Keys"),
           "--database", str(tmp_path / "db.sqlite"), "--host", "127.0.0.1", "--port", str(port), "--base-url", f"http://127.0.0.1:{port}"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"serve kept running with a malformed relying-party.json ({field}); stderr: {err[-800:]}")
    assert proc.returncode != 0, f"serve exited 0 with a malformed entity file; stderr: {err[-800:]}"
    assert "relying-party" in err, f"stderr should name the file relying-party.json: {err[-800:]!r}"
    assert field in err, f"stderr should name the field {field}: {err[-800:]!r}"


def test_serve_rejects_invalid_json(trustbed_bin, tmp_path):
    entities = tmp_path / "Entities"
    shutil.copytree(DEMO_ENTITIES, entities)
    (entities / "wallet-provider.json").write_text('{"authority_hints": ["intermediate"], "metadata": {')
    port = free_port()
    cmd = [str(trustbed_binary()), "serve", "--entities", str(entities), "--keys", str(tmp_path / "Keys"),
           "--database", str(tmp_path / "db.sqlite"), "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("serve kept running with an unparseable wallet-provider.json")
    assert proc.returncode != 0 and "wallet-provider" in err, f"exit {proc.returncode}, stderr: {err[-800:]!r}"


def test_sigterm_stops_cleanly_and_state_is_reused(make_server):
    import signal

    from fedlib import fetch_entity_configuration as ec

    server = make_server("sigterm").start()
    kid = ec(server.id("ta"))[1]["kid"]
    server.proc.send_signal(signal.SIGTERM)
    try:
        code = server.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail("serve did not exit within 10 s of SIGTERM")
    assert code == 0, f"serve exited {code} on SIGTERM; log: {server.log_tail(800)}"
    server.start()
    assert ec(server.id("ta"))[1]["kid"] == kid, "keys changed across a clean restart"
