"""Security fixes at the PID Provider (issue 18, item 4), driven over HTTP against the real server.

- Redirect URIs (RFC 6749 §3.1.2, §4.1.2.1; RFC 8252 §7.3; RFC 9700 §2.1, §4.11): the bypasses of
  a string-prefix loopback test are refused at PAR with 400 `invalid_request` and no Location, and
  nothing at /authorize redirects to them; a public client may use only a loopback URI or one
  registered for its client_id; attested clients keep https and private-use schemes; login_hint
  skips the login only for those.
- The open offer pages on a loopback base URL refuse a DNS-rebinding `Host` and a cross-site post
  (the answer holds neither an offer nor a tx_code)."""
from __future__ import annotations

import json
import re
import secrets
import time
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from fedlib import assert_json_error
from walletlib import ClientInstance, Wallet, WalletProvider, admin_offer, new_key, persona, pkce_pair, start_pid_server

SD = "urn:eudi:pid:1"
REGISTERED = {"registered-wallet": {"redirect_uris": ["https://wallet.example/cb", "eu.trustbed.registered:/cb"]}}

EVIL = [
    "http://127.evil.example/cb",
    "http://evil.example\\@127.0.0.1/cb",
    "http://evil.example@127.0.0.1/cb",
    "http://127.0.0.1@evil.example/cb",
    "http://localhost.evil.example/",
    "http://127.0.0.1.evil/",
    "http://127.0.0.1:99999/",
    "http://%31%32%37.0.0.1/",
    "http://127.0.0.1#x",
    "http://127.0.0.1/c b",
    "http://127.0.0.1/\tcb",
    "http://127.0.0.1/cb\n",
    "http://evil.example/cb",
    "https://evil.example/cb#frag",
    "javascript:alert(1)",
    "data:text/html,x",
]


@pytest.fixture(scope="module")
def env(session_tmp):
    provider = WalletProvider(entity_id="")
    server = start_pid_server(session_tmp / f"pid-security-{time.monotonic_ns()}", label="pid-security",
                              wallet_provider=provider, pid_overrides={"clients": REGISTERED})
    yield server, provider
    server.stop()


def public_par(issuer: str, client_id: str, redirect_uri: str, **extra: str) -> tuple[requests.Response, str]:
    """PAR of a public client (no client attestation); returns the answer and the PKCE verifier."""
    verifier, challenge = pkce_pair()
    form = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "code_challenge": challenge,
            "code_challenge_method": "S256", "state": "st", "scope": SD, **extra}
    return requests.post(issuer + "/par", data=form, allow_redirects=False, timeout=10), verifier


def attested_wallet(issuer: str, provider: WalletProvider) -> Wallet:
    key = new_key()
    client_id = "attested-" + secrets.token_hex(4)
    return Wallet(issuer, client=ClientInstance(client_id, key, provider.attestation(client_id, key)))


def assert_refused_without_redirect(r: requests.Response, uri: str) -> None:
    assert_json_error(r, 400, "invalid_request")
    assert "location" not in {k.lower() for k in r.headers}, f"{uri!r}: no redirect may follow a bad redirect_uri"


def authorize(issuer: str, client_id: str, request_uri: str, **extra: str) -> requests.Response:
    return requests.get(issuer + "/authorize", params={"client_id": client_id, "request_uri": request_uri, **extra},
                        allow_redirects=False, timeout=10)


@pytest.mark.parametrize("uri", EVIL)
def test_bypass_uris_refused_at_par_for_public_and_attested_clients(env, uri):
    server, provider = env
    issuer = server.id("pid-provider")
    r, _ = public_par(issuer, "registered-wallet", uri, login_hint=persona(server)["id"])
    assert_refused_without_redirect(r, uri)
    wallet = attested_wallet(issuer, provider)
    _, challenge = pkce_pair()
    assert_refused_without_redirect(wallet.par(redirect_uri=uri, code_challenge=challenge, state="s", scope=SD), uri)


@pytest.mark.parametrize("uri", EVIL[:4])
def test_authorize_never_redirects_to_an_evil_uri(env, uri):
    server, _ = env
    issuer = server.id("pid-provider")
    who = persona(server)["id"]
    # Without a pushed request: 400, whatever redirect_uri the query names.
    r = requests.get(issuer + "/authorize", params={"client_id": "x", "redirect_uri": uri, "response_type": "code",
                                                      "login_hint": who}, allow_redirects=False, timeout=10)
    assert_refused_without_redirect(r, uri)
    # With a pushed loopback request, a redirect_uri in the query changes nothing.
    r, _ = public_par(issuer, "cli", "http://127.0.0.1:4711/cb")
    assert r.status_code == 201, r.text
    r = authorize(issuer, "cli", r.json()["request_uri"], redirect_uri=uri, login_hint=who)
    assert r.status_code == 302, r.text
    assert r.headers["Location"].startswith("http://127.0.0.1:4711/cb?"), r.headers["Location"]


@pytest.mark.parametrize("uri", ["http://127.0.0.1/cb", "http://127.0.0.1:51004/cb?x=1", "http://[::1]:8080/cb",
                                 "http://localhost/cb", "HTTP://LOCALHOST/cb"])
def test_public_client_with_loopback_gets_its_code(env, uri):
    server, _ = env
    issuer = server.id("pid-provider")
    client_id = "native-" + secrets.token_hex(3)
    r, verifier = public_par(issuer, client_id, uri)
    assert r.status_code == 201, r.text
    r = authorize(issuer, client_id, r.json()["request_uri"], login_hint=persona(server)["id"])
    assert r.status_code == 302, r.text
    location = r.headers["Location"]
    assert location.startswith(uri + ("&" if "?" in uri else "?")), location
    q = parse_qs(urlsplit(location).query)
    assert q["code"] and q["state"] == ["st"] and q["iss"] == [issuer]
    token = requests.post(issuer + "/token", data={"grant_type": "authorization_code", "code": q["code"][0],
                                                   "redirect_uri": uri, "code_verifier": verifier, "client_id": client_id},
                          timeout=10)
    assert token.status_code == 200, token.text


def test_registered_and_unregistered_public_clients(env):
    server, _ = env
    issuer = server.id("pid-provider")
    who = persona(server)["id"]
    for uri in REGISTERED["registered-wallet"]["redirect_uris"]:
        r, _ = public_par(issuer, "registered-wallet", uri)
        assert r.status_code == 201, r.text
        r = authorize(issuer, "registered-wallet", r.json()["request_uri"], login_hint=who)
        assert r.status_code == 302 and r.headers["Location"].startswith(uri + "?"), r.headers
    # Another client_id, or a URI that only resembles the registered one: refused, not redirected.
    for client_id, uri in [("stranger", "https://wallet.example/cb"), ("stranger", "eu.trustbed.registered:/cb"),
                           ("registered-wallet", "https://wallet.example/cb/"),
                           ("registered-wallet", "https://wallet.example/cb?next=https://evil.example"),
                           ("registered-wallet", "https://wallet.example/cbevil"),
                           ("registered-wallet", "eu.europa.ec.euidi://authorization")]:
        r, _ = public_par(issuer, client_id, uri, login_hint=who)
        assert_refused_without_redirect(r, uri)


def test_attested_clients_keep_https_and_private_use_schemes(env):
    server, provider = env
    issuer = server.id("pid-provider")
    who = persona(server)["id"]
    for uri in ["https://unregistered.example/cb", "eu.trustbed.test-wallet:/callback", "http://127.0.0.1:9/cb"]:
        wallet = attested_wallet(issuer, provider)
        _, challenge = pkce_pair()
        r = wallet.par(redirect_uri=uri, code_challenge=challenge, state="s", scope=SD)
        assert r.status_code == 201, r.text
        r = requests.get(wallet.authorize_url(r.json()["request_uri"], login_hint=who), allow_redirects=False, timeout=10)
        assert r.status_code == 302 and r.headers["Location"].startswith(uri + "?"), (uri, r.headers)


def test_unregistering_a_client_stops_its_pending_requests(session_tmp):
    """/authorize checks the pushed redirect URI against the configuration as it is now: a client
    removed from `clients` gets no code (and no redirect), login_hint or not."""
    server = start_pid_server(session_tmp / f"pid-unregister-{time.monotonic_ns()}", label="pid-unregister",
                              pid_overrides={"clients": REGISTERED})
    try:
        issuer = server.id("pid-provider")
        r, _ = public_par(issuer, "registered-wallet", "https://wallet.example/cb")
        assert r.status_code == 201, r.text
        request_uri = r.json()["request_uri"]
        path = server.entities / "pid-provider.json"
        doc = json.loads(path.read_text())
        doc["services"]["pid_provider"]["clients"] = {}
        path.write_text(json.dumps(doc, indent=2))
        deadline = time.monotonic() + 10
        while True:  # edits are picked up within about a second
            probe, _ = public_par(issuer, "registered-wallet", "https://wallet.example/cb")
            if probe.status_code == 400 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert probe.status_code == 400, "the edited entity file was not picked up"
        r = authorize(issuer, "registered-wallet", request_uri, login_hint=persona(server)["id"])
        assert_refused_without_redirect(r, "https://wallet.example/cb")
    finally:
        server.stop()


# ------------------------------------------------------------------ the open offer pages

def raw_offer_page(server, method: str, path: str, headers: dict, data: dict | None = None) -> requests.Response:
    """`requests` sets Host from the URL; these tests need to choose it, as a rebinding browser does."""
    return requests.request(method, server.id("pid-provider") + path, headers=headers, data=data,
                            allow_redirects=False, timeout=10)


def offer_form(server) -> dict:
    return {"persona": persona(server)["id"], "credential_configuration_id": SD, "grant": "pre-authorized_code",
            "tx_code": "yes"}


def assert_forbidden_page(r: requests.Response, tx_code: str | None = None) -> None:
    assert r.status_code == 403, (r.status_code, r.text[:300])
    assert r.headers["Content-Type"].startswith("text/html"), r.headers
    assert "<h1>Forbidden</h1>" in r.text
    assert "location" not in {k.lower() for k in r.headers}, "no offer may be created"
    assert 'id="tx_code"' not in r.text and "openid-credential-offer://" not in r.text
    if tx_code:
        assert tx_code not in r.text


def test_rebinding_host_gets_no_form_no_offer_and_no_tx_code(env):
    server, _ = env
    issuer = server.id("pid-provider")
    evil = {"Host": f"evil.example:{server.port}"}
    assert_forbidden_page(raw_offer_page(server, "GET", "/offers/new", evil))
    assert_forbidden_page(raw_offer_page(server, "POST", "/offers/new", evil, offer_form(server)))
    assert_forbidden_page(raw_offer_page(server, "POST", "/offers/new",
                                         {**evil, "Origin": f"http://evil.example:{server.port}",
                                          "Sec-Fetch-Site": "same-origin"}, offer_form(server)))
    # A forged X-Forwarded-Host does not help a rebound script.
    assert_forbidden_page(raw_offer_page(server, "GET", "/offers/new",
                                         {**evil, "X-Forwarded-Host": f"127.0.0.1:{server.port}"}))
    assert_forbidden_page(raw_offer_page(server, "GET", "/offers/new",
                                         {"X-Forwarded-Host": f"evil.example:{server.port}"}))
    # An existing offer's page (with its tx_code) is not shown to a rebound page either.
    made = admin_offer(issuer, server.admin_token, persona(server)["id"], [SD], tx_code=True)
    tx_code = made["tx_code"]
    page = made["offer_page"]
    path = page[len(issuer):] if page.startswith(issuer) else urlsplit(page).path.split("/pid-provider", 1)[1]
    assert_forbidden_page(raw_offer_page(server, "GET", path, evil), tx_code)
    ok = raw_offer_page(server, "GET", path, {"Host": f"localhost:{server.port}"})
    assert ok.status_code == 200 and tx_code in ok.text, "a loopback name on the right port still works"


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example"},
    {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Referer": "http://evil.example/attack.html"},
    {"Origin": "http://localhost:1"},
], ids=["origin", "origin-cross-site", "null-origin", "cross-site", "referer", "other-port"])
def test_cross_site_post_is_refused(env, headers):
    server, _ = env
    r = raw_offer_page(server, "POST", "/offers/new", {"Host": f"127.0.0.1:{server.port}", **headers}, offer_form(server))
    assert_forbidden_page(r)


def test_same_origin_posts_and_the_admin_token_still_work(env):
    server, _ = env
    for headers in [{"Origin": f"http://127.0.0.1:{server.port}", "Sec-Fetch-Site": "same-origin"},
                    {"Origin": f"http://localhost:{server.port}"},
                    {"Origin": "null", "Sec-Fetch-Site": "same-origin"},  # our form under Referrer-Policy: no-referrer
                    {}]:
        r = raw_offer_page(server, "POST", "/offers/new", headers, offer_form(server))
        assert r.status_code == 303, (headers, r.status_code, r.text[:300])
    # The admin token vouches for a request from anywhere (the form and the admin API).
    token = server.admin_token
    r = raw_offer_page(server, "POST", "/offers/new", {"Host": f"evil.example:{server.port}",
                                                       "Authorization": f"Bearer {token}"}, offer_form(server))
    assert r.status_code == 303, r.text[:300]
    r = requests.post(server.id("pid-provider") + "/admin/offers", headers={"Host": f"evil.example:{server.port}",
                                                                           "Authorization": f"Bearer {token}"},
                      json={"persona": persona(server)["id"], "tx_code": True}, timeout=10)
    assert r.status_code == 201 and re.fullmatch(r"\d+", r.json()["tx_code"]), r.text
