"""`trustbed wallet present` (issue 22 item 4) against the real verifier: the CLI wallet receives
PIDs from the demo PID Provider with a plain `wallet receive --save` (no Wallet Provider), the
verifier's admin API makes presentation requests (each template, both response modes, each client
identifier prefix; mdoc queries too), the CLI answers and the admin GET says verified with exactly
the requested claims.  A request for a credential the wallet does not hold exits 1 with a reason."""
from __future__ import annotations

import json
import time

import pytest
import requests

from fedlib import describe
from harness import run_cli
from walletlib import admin_offer, persona, start_pid_server

TIMEOUT = 120
SD = "urn:eudi:pid:1"
NL = "urn:eudi:pid:nl:1"
MDOC = "eu.europa.ec.eudi.pid.1"
PREFIXES = ["x509_hash", "x509_san_dns", "openid_federation"]
MODES = ["direct_post", "direct_post.jwt"]
# Claims every presentation shows: not selectively disclosable in the PID Provider's SD-JWT VC.
ALWAYS = {"iss", "vct", "iat", "exp", "nbf", "vct#integrity", "sub"}


@pytest.fixture(scope="module")
def server(session_tmp):
    s = start_pid_server(session_tmp / f"present-{time.monotonic_ns()}", label="present")
    yield s
    s.stop()


def cli(*args: str, expect_ok: bool = True):
    p = run_cli(*args, timeout=TIMEOUT)
    if expect_ok:
        assert p.returncode == 0, f"`trustbed {' '.join(args)}` exited {p.returncode}\nstderr: {p.stderr[-4000:]}\nstdout: {p.stdout[-3000:]}"
    return p


@pytest.fixture(scope="module")
def wallet(server, tmp_path_factory):
    """A wallet file made by plain `wallet receive --save` only: SD-JWT PID, NL PID and mdoc PID."""
    path = tmp_path_factory.mktemp("present-wallet") / "wallet.json"
    issuer = server.id("pid-provider")
    # The NL PID of a persona with a BSN (sanne): the wallet picks, per query, a credential that holds the claims.
    for configuration, index in ((SD, 0), (NL, 1), (MDOC, 0)):
        offer = admin_offer(issuer, server.admin_token, persona(server, index)["id"], [configuration])
        cli("wallet", "receive", offer["offer_url"], "--save", str(path))
    stored = json.loads(path.read_text())
    assert stored["type"] == "trustbed-test-wallet"
    assert sorted(c["format"] for c in stored["credentials"]) == ["dc+sd-jwt", "dc+sd-jwt", "mso_mdoc"]
    assert all("holder_key" in c for c in stored["credentials"])
    return path


def create(server, body: dict) -> dict:
    r = requests.post(server.id("relying-party") + "/admin/presentation-requests", json=body,
                      headers={"Authorization": f"Bearer {server.admin_token}"}, timeout=30)
    assert r.status_code == 201, describe(r)
    return r.json()


def result(server, request_id: str) -> dict:
    r = requests.get(server.id("relying-party") + "/admin/presentation-requests/" + request_id,
                     headers={"Authorization": f"Bearer {server.admin_token}"}, timeout=30)
    assert r.status_code == 200, describe(r)
    return r.json()


def present(server, wallet, created: dict, *extra: str, expect_ok: bool = True):
    return cli("wallet", "present", "--wallet", str(wallet), "--trust-anchor", server.id("ta"),
               "--verifier-ca", server.id("relying-party") + "/verifier-ca.pem", *extra, created["request_link"], expect_ok=expect_ok)


TEMPLATES = {
    "age_over_18": {"age_equal_or_over"},
    "name_and_birth_date": {"given_name", "family_name", "birthdate"},
    "nl_bsn": {"bsn"},
    "recovery_code": {"recovery_code"},
    "full_pid": None,
}


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_each_template_mode_and_prefix_is_verified_with_exactly_the_requested_claims(server, wallet, template, mode, prefix):
    created = create(server, {"template": template, "response_mode": mode, "client_id_prefix": prefix})
    p = present(server, wallet, created)
    answer = json.loads(p.stdout)
    assert answer["status"] == 200, answer
    res = result(server, created["id"])
    assert res["state"] == "verified", res
    shown = set(res["claims"]["pid"]) - ALWAYS
    wanted = TEMPLATES[template]
    if wanted is None:
        assert {"given_name", "family_name", "birthdate", "nationalities"} <= shown, shown
    else:
        assert shown == wanted, (template, shown)
    if template == "age_over_18":
        assert res["claims"]["pid"]["age_equal_or_over"] == {"18": True}, res["claims"]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("mode", MODES)
def test_mdoc_elements_are_presented_and_verified(server, wallet, mode, prefix):
    query = {"credentials": [{"id": "mdl", "format": "mso_mdoc", "meta": {"doctype_value": MDOC},
                              "claims": [{"path": [MDOC, "family_name"]}, {"path": [MDOC, "birth_date"]}]}]}
    created = create(server, {"dcql_query": query, "response_mode": mode, "client_id_prefix": prefix})
    present(server, wallet, created)
    res = result(server, created["id"])
    assert res["state"] == "verified", res
    assert set(res["claims"]["mdl"][MDOC]) == {"family_name", "birth_date"}, res["claims"]
    assert any(c["name"] == "mdl.device_signature" and c["ok"] for c in res["checks"]), res["checks"]


def test_values_are_honoured(server, wallet):
    """DCQL values (§6.3): a matching value is presented, a non-matching one means no credential."""
    given = json.loads(wallet.read_text())["credentials"][0]["claims"]["given_name"]
    query = lambda v: {"credentials": [{"id": "pid", "format": "dc+sd-jwt", "meta": {"vct_values": [SD]},
                                        "claims": [{"path": ["given_name"], "values": v}]}]}
    ok = create(server, {"dcql_query": query([given, "Somebody Else"])})
    present(server, wallet, ok)
    res = result(server, ok["id"])
    assert res["state"] == "verified" and res["claims"]["pid"]["given_name"] == given, res
    miss = create(server, {"dcql_query": query(["Somebody Else"])})
    p = present(server, wallet, miss, expect_ok=False)
    assert p.returncode == 1 and "not one of the requested values" in p.stderr, p.stderr
    assert result(server, miss["id"])["state"] == "pending"


def test_verbose_shows_every_step_and_no_private_key(server, wallet):
    created = create(server, {"template": "name_and_birth_date", "response_mode": "direct_post.jwt"})
    p = present(server, wallet, created, "--verbose")
    for step in ("request_uri", "check: x509_hash", "signature verifies", "disclosing", "KB-JWT: aud", "direct_post.jwt: ECDH-ES",
                 "/response"):
        assert step in p.stderr, (step, p.stderr[-3000:])
    for key in (c["holder_key"]["d"] for c in json.loads(wallet.read_text())["credentials"]):
        assert key not in p.stderr and key not in p.stdout


def test_a_credential_the_wallet_does_not_hold_is_a_clear_exit_1(server, wallet):
    query = {"credentials": [{"id": "mdl", "format": "mso_mdoc", "meta": {"doctype_value": "org.iso.18013.5.1.mDL"}}]}
    created = create(server, {"dcql_query": query})
    p = present(server, wallet, created, expect_ok=False)
    assert p.returncode == 1
    assert "no credential" in p.stderr and "mdl" in p.stderr, p.stderr
    assert result(server, created["id"])["state"] == "pending"


def test_the_servers_refusal_exits_1_with_its_json(server, wallet):
    """A request answered twice: the second post is the verifier's 400 invalid_request, printed."""
    created = create(server, {"template": "age_over_18"})
    present(server, wallet, created)
    # The request object of an answered request is gone: 404 with the verifier's JSON.
    p = present(server, wallet, created, expect_ok=False)
    assert p.returncode == 1
    body = json.loads(p.stdout)
    assert body["error"], body


def test_openid_federation_needs_a_trust_anchor_and_refuses_a_foreign_one(server, wallet):
    created = create(server, {"template": "age_over_18", "client_id_prefix": "openid_federation"})
    p = cli("wallet", "present", "--wallet", str(wallet), created["request_link"], expect_ok=False)
    assert p.returncode == 1 and "--trust-anchor" in p.stderr, p.stderr
    p = cli("wallet", "present", "--wallet", str(wallet), "--trust-anchor", server.id("pid-provider"), created["request_link"],
            expect_ok=False)
    assert p.returncode == 1 and "trust_chain" in p.stderr, p.stderr
    assert result(server, created["id"])["state"] == "pending"


def test_a_foreign_verifier_ca_is_refused(server, wallet, tmp_path):
    """--verifier-ca anchors the x5c: the PID Provider's IACA is not the verifier's root."""
    created = create(server, {"template": "age_over_18", "client_id_prefix": "x509_san_dns"})
    p = cli("wallet", "present", "--wallet", str(wallet), "--verifier-ca", server.id("pid-provider") + "/iaca.pem",
            created["request_link"], expect_ok=False)
    assert p.returncode == 1 and "does not chain" in p.stderr, p.stderr
    # An unreadable --verifier-ca is named as such, not as --trust.
    p = cli("wallet", "present", "--wallet", str(wallet), "--verifier-ca", str(tmp_path / "missing.pem"),
            created["request_link"], expect_ok=False)
    assert p.returncode == 1 and "cannot read --verifier-ca" in p.stderr, p.stderr


# ---------------------------------------------------------------------------- the verifier benchmark's flows

@pytest.mark.parametrize("flow,mode", [("present-sdjwt", "direct_post.jwt"), ("present-sdjwt", "direct_post"),
                                       ("present-mdoc", "direct_post.jwt"), ("apple", None)])
def test_bench_flows_run_against_the_debug_server_and_every_answer_is_verified(server, wallet, flow, mode):
    """`wallet bench --flow present-sdjwt | present-mdoc | apple` for about a second: a non-zero
    rate, no errors, every flow counted as verified, and the verifier recorded them verified."""
    args = ["wallet", "bench", "--flow", flow, "--verifier", server.id("relying-party"), "--wallet", str(wallet),
            "--admin-token", server.admin_token, "--concurrency", "2", "--duration", "1", "--json"]
    if mode:
        args += ["--response-mode", mode]
    report = json.loads(cli(*args).stdout)
    assert report["flows"] > 0 and report["verified"] == report["flows"], report
    assert report["verified_per_second"] > 0 and report["errors"] == {}, report
    steps = ["envelope", "identity"] if flow == "apple" else ["presentation_request", "request_object", "answer", "response"]
    for step in steps:
        assert report["steps"][step]["count"] >= report["flows"] and report["steps"][step]["p99_ms"] > 0, report["steps"]


def test_bench_flow_counts_nothing_when_the_verifier_refuses(server, wallet):
    """A wrong merchant: every envelope is refused, so no flow counts and the bench exits 1 naming the check."""
    p = cli("wallet", "bench", "--flow", "apple", "--verifier", server.id("relying-party"), "--wallet", str(wallet),
            "--merchant-id", "merchant.example.other", "--concurrency", "1", "--count", "3", expect_ok=False)
    assert p.returncode == 1, p.stdout
    assert "flows: 0" in p.stdout and "refused" in p.stdout, p.stdout


@pytest.mark.parametrize("flow", ["present-mdoc", "present-sdjwt"])
def test_bench_prepared_requests_time_the_verification_alone(server, wallet, flow):
    """--prepare: each thread makes and fetches its requests and makes the answer to each before
    the clock ("clock started" on stderr, where verifier.sh reads the server's CPU); the timed
    iterations are the POST to the response_uri and the verification, every prepared answer
    posted once and verified, the threads posting from one pool until all are posted."""
    p = cli("wallet", "bench", "--flow", flow, "--verifier", server.id("relying-party"), "--wallet", str(wallet),
            "--admin-token", server.admin_token, "--concurrency", "2", "--prepare", "5", "--count", "100", "--json")
    report = json.loads(p.stdout)
    assert report["flows"] == 10 and report["verified"] == 10 and report["errors"] == {}, report
    for step in ["presentation_request", "request_object", "answer"]:
        assert report["steps"][step]["count"] == 0, report["steps"]
    assert report["steps"]["response"]["count"] == 10, report
    assert "clock started" in p.stderr.splitlines(), p.stderr
