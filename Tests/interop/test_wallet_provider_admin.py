"""The Wallet Provider's operator tools (issue 20, item 8) against the real server:
`trustbed instances list | revoke | purge` change the SQLite file the running server reads, and
the server sees the change at its next request (a revoked instance's next wallet attestation is
403 invalid_request) without a restart; the CLI prints the admin API's JSON.
"""
from __future__ import annotations

import json
import time

import pytest
import requests

from harness import TrustbedServer
from test_wallet_provider import (Instance, assert_error, device_maker, nonce, python_dev_attestation, register, token,
                                  wp)
from walletlib import new_key


@pytest.fixture(scope="module")
def wp_server(trustbed_bin, session_tmp):
    server = TrustbedServer(session_tmp / f"wallet-provider-admin-{time.monotonic_ns()}", label="wallet-provider-admin").start()
    yield server
    server.stop()


def instances_cli(server, *args: str):
    return server.cli("instances", *args, *server.state_args, "--base-url", server.public_base)


def admin_list(server) -> dict:
    r = requests.get(wp(server) + "/admin/instances", headers={"Authorization": "Bearer " + server.admin_token}, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()


def test_list_is_the_admin_apis_json(wp_server):
    Instance(wp_server, "tag-cli-list")
    listed = instances_cli(wp_server, "list", "--provider", "wallet-provider")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == admin_list(wp_server)
    by_id = instances_cli(wp_server, "list", "--provider", wp_server.id("wallet-provider"))
    assert json.loads(by_id.stdout) == admin_list(wp_server)
    everything = instances_cli(wp_server, "list")
    assert "tag-cli-list" in [i["id"] for i in json.loads(everything.stdout)["instances"]]
    # A provider that has no instances lists none; an unknown name exits 1.
    assert json.loads(instances_cli(wp_server, "list", "--provider", "http://127.0.0.1:1/nobody").stdout) == {"instances": []}
    assert instances_cli(wp_server, "list", "--provider", "no-such-entity").returncode == 1


def test_cli_revoke_is_seen_by_the_running_server(wp_server):
    instance = Instance(wp_server, "tag-cli-revoke")
    assert token(wp_server, instance.request()[0]).status_code == 200
    assert {i["id"]: i for i in admin_list(wp_server)["instances"]}["tag-cli-revoke"]["state"] == "operational"

    revoked = instances_cli(wp_server, "revoke", "tag-cli-revoke", "--reason", "lost phone")
    assert revoked.returncode == 0, revoked.stderr
    record = json.loads(revoked.stdout)
    assert set(record) == {"id", "account", "state", "reason", "format", "created_at", "updated_at"}
    assert record["state"] == "installed" and record["reason"] == "lost phone"
    # The server, still running, refuses the revoked hardware key at once.
    r = token(wp_server, instance.request()[0])
    assert_error(r, 403, "invalid_request")
    assert "revoked" in r.json()["error_description"]
    assert {i["id"]: i for i in admin_list(wp_server)["instances"]}["tag-cli-revoke"] == record


def test_cli_unknown_ids_exit_1(wp_server):
    for args in (["revoke", "never-registered"], ["purge", "never-an-account"],
                 ["revoke", "never-registered", "--provider", "wallet-provider"]):
        proc = instances_cli(wp_server, *args)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        assert proc.stdout == ""


def test_cli_revoke_of_an_uninstalled_instance_exits_1(wp_server):
    Instance(wp_server, "tag-cli-uninstalled")
    admin = {"Authorization": "Bearer " + wp_server.admin_token}
    r = requests.post(wp(wp_server) + "/admin/instances/tag-cli-uninstalled/status", json={"status": "uninstalled"},
                      headers=admin, timeout=10)
    assert r.status_code == 200, r.text
    proc = instances_cli(wp_server, "revoke", "tag-cli-uninstalled")
    assert proc.returncode == 1 and "final" in proc.stderr
    assert {i["id"]: i for i in admin_list(wp_server)["instances"]}["tag-cli-uninstalled"]["state"] == "uninstalled"


def test_cli_purge(wp_server):
    instance = Instance(wp_server, "tag-cli-purge")
    account = {i["id"]: i for i in admin_list(wp_server)["instances"]}["tag-cli-purge"]["account"]
    purged = instances_cli(wp_server, "purge", account)
    assert purged.returncode == 0, purged.stderr
    assert json.loads(purged.stdout) == {"instances": []}
    assert "tag-cli-purge" not in [i["id"] for i in admin_list(wp_server)["instances"]]
    # Later lookups: the instance is unknown (404), the account too (CLI exit 1, API 404).
    assert_error(token(wp_server, instance.request(with_key_attestation=False)[0]), 404, "not_found")
    assert instances_cli(wp_server, "purge", account).returncode == 1
    r = requests.delete(wp(wp_server) + "/admin/accounts/" + account,
                        headers={"Authorization": "Bearer " + wp_server.admin_token}, timeout=10)
    assert_error(r, 404, "not_found")


# -- the HTML page <wp>/instances: open on a loopback base URL behind the offer pages' guard,
#    the admin token otherwise

def test_instances_page_lists_and_revokes(wp_server):
    instance = Instance(wp_server, "tag-page-<b>")
    page = wp(wp_server) + "/instances"
    r = requests.get(page, timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/html")
    assert "script-src" not in r.headers.get("Content-Security-Policy", "") or "'none'" in r.headers["Content-Security-Policy"]
    assert "tag-page-&lt;b&gt;" in r.text and "tag-page-<b>" not in r.text, "the id is escaped"
    assert 'name="admin_token"' not in r.text, "no token on loopback"
    # Our own form post (same origin) revokes; the page comes back with the new state.
    r = requests.post(page, data={"id": "tag-page-<b>", "reason": "lost phone"},
                      headers={"Origin": wp_server.base, "Sec-Fetch-Site": "same-origin"}, timeout=10)
    assert r.status_code == 200, r.text
    assert "lost phone" in r.text and "Revoked tag-page-&lt;b&gt;" in r.text
    listed = {i["id"]: i for i in admin_list(wp_server)["instances"]}["tag-page-<b>"]
    assert listed["state"] == "installed" and listed["reason"] == "lost phone"
    assert_error(token(wp_server, instance.request()[0]), 403, "invalid_request")
    # Unknown instance: the page again, 404, with the reason.
    r = requests.post(page, data={"id": "never"}, headers={"Origin": wp_server.base}, timeout=10)
    assert r.status_code == 404 and 'role="alert"' in r.text


def test_instances_page_refuses_rebinding_and_cross_site_posts(wp_server):
    Instance(wp_server, "tag-page-guard")
    page = wp(wp_server) + "/instances"
    port = wp_server.port
    r = requests.get(page, headers={"Host": f"evil.example:{port}"}, timeout=10)
    assert r.status_code == 403 and r.headers["Content-Type"].startswith("text/html")
    assert "tag-page-guard" not in r.text
    for headers in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Origin": "null", "Sec-Fetch-Site": "same-site"}, {"Referer": "http://evil.example/x"}):
        r = requests.post(page, data={"id": "tag-page-guard"}, headers=headers, timeout=10)
        assert r.status_code == 403, (headers, r.status_code)
    assert {i["id"]: i for i in admin_list(wp_server)["instances"]}["tag-page-guard"]["reason"] is None
    # The admin token vouches for a request from anywhere.
    r = requests.get(page, headers={"Host": f"evil.example:{port}", "Authorization": "Bearer " + wp_server.admin_token}, timeout=10)
    assert r.status_code == 200 and "tag-page-guard" in r.text


def test_instances_page_needs_the_admin_token_off_loopback(make_server):
    server = make_server("wp-public", public_base="http://wp.example.test").start()
    # Off loopback the server's development attestations need the token too: sign one here.
    signer, root = device_maker(server)
    n = nonce(server)
    r = register(server, {"challenge": n, "key_attestation": python_dev_attestation(signer, root, new_key(), "tag-public", n),
                          "hardware_key_tag": "tag-public"})
    assert r.status_code == 204, r.text
    page = wp(server) + "/instances"
    r = requests.get(page, timeout=10)
    assert r.status_code == 403 and "tag-public" not in r.text and "admin token" in r.text
    r = requests.get(page, headers={"Authorization": "Bearer " + server.admin_token}, timeout=10)
    assert r.status_code == 200 and 'name="admin_token"' in r.text and "tag-public" in r.text
    assert requests.post(page, data={"id": "tag-public"}, timeout=10).status_code == 403
    assert requests.post(page, data={"id": "tag-public", "admin_token": "wrong"}, timeout=10).status_code == 403
    r = requests.post(page, data={"id": "tag-public", "admin_token": server.admin_token}, timeout=10)
    assert r.status_code == 200 and "Revoked tag-public" in r.text
    assert "revoked" in r.text


# -- the `valid` state: a PID Provider hosted here tells the Wallet Provider in process

def pid_with_key_attestation(server, instance) -> tuple[dict, "Wallet", str]:
    """A PID from the demo pid-provider to a key this provider attested for `instance`."""
    from test_wallet_provider import key_attestation_request, key_attestations
    from walletlib import Wallet, admin_offer, attested_proof, persona
    issuer = server.id("pid-provider")
    wallet = Wallet(issuer)
    offer = wallet.fetch_offer(admin_offer(issuer, server.admin_token, persona(server)["id"], ["urn:eudi:pid:1"]))
    access = wallet.pre_authorized_token(offer, extra={"client_id": "eudi-wallet"})["access_token"]
    key = new_key()
    c_nonce = wallet.nonce()
    r = key_attestations(server, key_attestation_request(server, instance, [key], c_nonce=c_nonce))
    assert r.status_code == 200, r.text
    proof = attested_proof(key, issuer, c_nonce, r.json()["key_attestation"])
    r = wallet.credential_request(access, {"credential_configuration_id": "urn:eudi:pid:1", "proofs": {"jwt": [proof]}})
    assert r.status_code == 200, r.text
    return r.json(), wallet, access


def state(server, tag: str) -> str:
    return {i["id"]: i for i in admin_list(server)["instances"]}[tag]["state"]


def newest_attested_credential(server) -> dict:
    r = requests.get(server.url("pid-provider", "/admin/credentials"),
                     headers={"Authorization": "Bearer " + server.admin_token}, timeout=10)
    assert r.status_code == 200, r.text
    attested = [c for c in r.json()["credentials"]
                if c.get("key_attestation", {}).get("issuer") == server.id("wallet-provider")]
    return attested[-1]


def test_pid_makes_the_instance_valid_and_revocation_or_deletion_undoes_it(wp_server):
    tag = "tag-valid-" + str(time.monotonic_ns())
    instance = Instance(wp_server, tag)
    # installed: a PID to an instance with no wallet attestation leaves it installed ...
    pid_with_key_attestation(wp_server, instance)
    assert state(wp_server, tag) == "installed"
    # ... and counts once the instance is operational: it holds a live PID, so it is valid.
    assert token(wp_server, instance.request()[0]).status_code == 200
    assert state(wp_server, tag) == "valid"
    # Revoking the PID at the issuer: operational again.
    credential = newest_attested_credential(wp_server)
    r = requests.post(wp_server.url("pid-provider", f"/admin/credentials/{credential['id']}/status"), json={"status": "invalid"},
                      headers={"Authorization": "Bearer " + wp_server.admin_token}, timeout=10)
    assert r.status_code == 200, r.text
    assert state(wp_server, tag) == "operational"

    pid_with_key_attestation(wp_server, instance)
    assert state(wp_server, tag) == "valid"
    # Suspending it does the same, and reinstating it makes the instance valid again.
    credential = newest_attested_credential(wp_server)
    for status, expected in (("suspended", "operational"), ("valid", "valid"), ("invalid", "operational")):
        r = requests.post(wp_server.url("pid-provider", f"/admin/credentials/{credential['id']}/status"), json={"status": status},
                          headers={"Authorization": "Bearer " + wp_server.admin_token}, timeout=10)
        assert r.status_code == 200, r.text
        assert state(wp_server, tag) == expected, status

    pid_with_key_attestation(wp_server, instance)
    assert state(wp_server, tag) == "valid"
    credential = newest_attested_credential(wp_server)
    r = requests.post(wp_server.url("pid-provider", f"/admin/credentials/{credential['id']}/status"), json={"status": "invalid"},
                      headers={"Authorization": "Bearer " + wp_server.admin_token}, timeout=10)
    assert r.status_code == 200, r.text
    assert state(wp_server, tag) == "operational"

    # Another PID, then the wallet's credential_deleted notification: operational again.
    body, wallet, access = pid_with_key_attestation(wp_server, instance)
    assert state(wp_server, tag) == "valid"
    r = wallet.credential_request(access, {"notification_id": body["notification_id"], "event": "credential_deleted"},
                                  endpoint="notification_endpoint")
    assert r.status_code == 204, r.text
    assert state(wp_server, tag) == "operational"

    # `trustbed credentials status <id> invalid` on the database does the same as the admin API.
    pid_with_key_attestation(wp_server, instance)
    assert state(wp_server, tag) == "valid"
    proc = wp_server.cli("credentials", "status", newest_attested_credential(wp_server)["id"], "invalid",
                         "--database", str(wp_server.database))
    assert proc.returncode == 0, proc.stderr
    assert state(wp_server, tag) == "operational"

    # A valid instance revoked at the Wallet Provider goes to installed, as from operational.
    pid_with_key_attestation(wp_server, instance)
    assert state(wp_server, tag) == "valid"
    assert instances_cli(wp_server, "revoke", tag).returncode == 0
    assert state(wp_server, tag) == "installed"
