"""Item 13: behind TLS on a host a phone can reach, every URL the issuer emits is the public
`--base-url`, never the request's Host. The server listens on 127.0.0.1 and is told its public
URL is https://wallet-test.example; the test talks to it locally."""
from __future__ import annotations

import json

import requests

PUBLIC = "https://wallet-test.example"


def all_strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from all_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from all_strings(v)


def urls_in(value):
    return [s for s in all_strings(value) if s.startswith("http://") or s.startswith("https://")
            or s.startswith("openid-credential-offer://")]


def test_every_emitted_url_is_public(make_server):
    server = make_server("public-url", public_base=PUBLIC).start()
    issuer = server.id("pid-provider")
    assert issuer == PUBLIC + "/pid-provider"
    local = server.local(issuer)
    md = requests.get(local + "/.well-known/openid-credential-issuer", headers={"Host": "127.0.0.1"}, timeout=10).json()
    asmd = requests.get(local + "/.well-known/oauth-authorization-server", timeout=10).json()
    for doc in (md, asmd):
        for url in urls_in(doc):
            assert url.startswith(PUBLIC + "/"), f"metadata names a non-public URL: {url}"
    assert md["credential_issuer"] == issuer and asmd["issuer"] == issuer

    r = requests.post(local + "/admin/offers", headers={"Authorization": f"Bearer {server.admin_token}"},
                      json={"persona": first_persona(server), "tx_code": True}, timeout=10)
    assert r.status_code == 201, r.text
    created = r.json()
    for url in urls_in(created):
        assert url.startswith(PUBLIC + "/") or url.startswith("openid-credential-offer://"), f"offer names a non-public URL: {url}"
    assert created["credential_offer"]["credential_issuer"] == issuer
    assert PUBLIC.replace(":", "%3A").replace("/", "%2F") in created["offer_url"], created["offer_url"]
    # The offer is served at its public URI's path.
    offer = requests.get(server.local(created["credential_offer_uri"]), timeout=10)
    assert offer.status_code == 200 and offer.json() == created["credential_offer"]


def first_persona(server) -> str:
    personas = json.loads((server.entities / "personas" / "pid.json").read_text())
    return personas[0]["id"]
