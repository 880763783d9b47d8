"""The Wallet Provider's `valid` state against the real server (issue 20, item 8): an instance is
`valid` while a PID from a PID Provider hosted here sits on a key the Wallet Provider attested
for it. It goes back to `operational` when that PID expires (seen at the next read, no timer
needed), and when the same person gets a PID on another instance: the earlier instance's PIDs
are then `invalid` in their status lists (read here with the Token Status List decoded
independently) and only the newer instance is `valid`. Revocation and `credential_deleted` are
in test_wallet_provider_admin.py.
"""
from __future__ import annotations

import json
import time

import pytest
import requests

from harness import TrustbedServer
from test_wallet_provider import Instance, key_attestation_request, key_attestations, token, wp
from walletlib import (Wallet, admin_offer, attested_proof, decode_jwt_unverified, fetch_status_list, new_key, persona,
                       status_at)

CREDENTIAL_LIFETIME = 4


@pytest.fixture(scope="module")
def short_pids(trustbed_bin, session_tmp):
    """The demo, with PIDs of the demo pid-provider living CREDENTIAL_LIFETIME seconds."""
    server = TrustbedServer(session_tmp / f"wallet-provider-lifecycle-{time.monotonic_ns()}", label="wallet-provider-lifecycle")
    path = server.entities / "pid-provider.json"
    doc = json.loads(path.read_text())
    doc["services"]["pid_provider"]["credential_lifetime"] = CREDENTIAL_LIFETIME
    path.write_text(json.dumps(doc, indent=2))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def wp_server(trustbed_bin, session_tmp):
    server = TrustbedServer(session_tmp / f"wallet-provider-supersede-{time.monotonic_ns()}", label="wallet-provider-supersede").start()
    yield server
    server.stop()


def operational_instance(server, label: str) -> Instance:
    instance = Instance(server, f"{label}-{time.monotonic_ns()}")
    r = token(server, instance.request()[0])
    assert r.status_code == 200, r.text
    assert state(server, instance.tag) == "operational"
    return instance


def pid(server, instance: Instance, persona_id: str) -> dict:
    """An SD-JWT VC PID of `persona_id` from the demo pid-provider, to a key the provider attested
    for `instance`; returns the credential response."""
    issuer = server.id("pid-provider")
    wallet = Wallet(issuer)
    offer = wallet.fetch_offer(admin_offer(issuer, server.admin_token, persona_id, ["urn:eudi:pid:1"]))
    access = wallet.pre_authorized_token(offer, extra={"client_id": "eudi-wallet"})["access_token"]
    key = new_key()
    c_nonce = wallet.nonce()
    r = key_attestations(server, key_attestation_request(server, instance, [key], c_nonce=c_nonce))
    assert r.status_code == 200, r.text
    proof = attested_proof(key, issuer, c_nonce, r.json()["key_attestation"])
    r = wallet.credential_request(access, {"credential_configuration_id": "urn:eudi:pid:1", "proofs": {"jwt": [proof]}})
    assert r.status_code == 200, r.text
    return r.json()


def state(server, tag: str) -> str:
    r = requests.get(wp(server) + "/admin/instances", headers={"Authorization": "Bearer " + server.admin_token}, timeout=10)
    assert r.status_code == 200, r.text
    return {i["id"]: i for i in r.json()["instances"]}[tag]["state"]


def status_of(response: dict) -> int:
    """The credential's entry in its status list, from the served Status List Token."""
    _, payload = decode_jwt_unverified(response["credentials"][0]["credential"].split("~")[0])
    reference = payload["status"]["status_list"]
    _, claims = fetch_status_list(reference["uri"])
    return status_at(claims, reference["idx"])


def test_an_expired_pid_takes_the_instance_back_to_operational(short_pids):
    instance = operational_instance(short_pids, "tag-expiry")
    response = pid(short_pids, instance, persona(short_pids)["id"])
    assert state(short_pids, instance.tag) == "valid"
    _, payload = decode_jwt_unverified(response["credentials"][0]["credential"].split("~")[0])
    assert payload["exp"] - payload["iat"] <= CREDENTIAL_LIFETIME + 1
    time.sleep(max(0.0, payload["exp"] - time.time()) + 1.5)
    # Nothing was sent to the server meanwhile: the admin list's read settles the state.
    assert state(short_pids, instance.tag) == "operational"
    # The CLI, on the database, sees the same.
    listed = short_pids.cli("instances", "list", *short_pids.state_args, "--base-url", short_pids.public_base)
    assert listed.returncode == 0, listed.stderr
    assert {i["id"]: i for i in json.loads(listed.stdout)["instances"]}[instance.tag]["state"] == "operational"
    # A new PID makes it valid again.
    pid(short_pids, instance, persona(short_pids)["id"])
    assert state(short_pids, instance.tag) == "valid"


def test_one_valid_instance_per_person(wp_server):
    erika, other = persona(wp_server, 0)["id"], persona(wp_server, 1)["id"]
    first = operational_instance(wp_server, "tag-first")
    first_pids = [pid(wp_server, first, erika), pid(wp_server, first, erika)]
    bystander = operational_instance(wp_server, "tag-bystander")
    bystander_pid = pid(wp_server, bystander, other)
    assert state(wp_server, first.tag) == "valid" and state(wp_server, bystander.tag) == "valid"
    assert [status_of(p) for p in first_pids] == [0, 0]

    second = operational_instance(wp_server, "tag-second")
    second_pid = pid(wp_server, second, erika)
    assert state(wp_server, second.tag) == "valid"
    assert state(wp_server, first.tag) == "operational"
    assert [status_of(p) for p in first_pids] == [1, 1], "the earlier instance's PIDs are invalid in the status list"
    assert status_of(second_pid) == 0
    # Another person's instance and PID are untouched.
    assert state(wp_server, bystander.tag) == "valid" and status_of(bystander_pid) == 0
    # The admin view of the issuer shows the same.
    r = requests.get(wp_server.url("pid-provider", "/admin/credentials"), params={"persona": erika},
                     headers={"Authorization": "Bearer " + wp_server.admin_token}, timeout=10)
    statuses = [c["status"] for c in r.json()["credentials"] if c.get("key_attestation")]
    assert statuses[-3:] == ["invalid", "invalid", "valid"], statuses

    # The first instance getting a PID again takes the person back.
    pid(wp_server, first, erika)
    assert state(wp_server, first.tag) == "valid" and state(wp_server, second.tag) == "operational"
    assert status_of(second_pid) == 1
