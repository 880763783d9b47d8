"""The resolver's fetch allow-list.  Without --fetch-allow, `resolve` may contact only origins the
entity files name (the base URL, absolute entity IDs and authority hints, remote subordinates,
trust mark issuers and owners given as URLs); --fetch-allow PREFIX adds prefixes.  A subject
elsewhere is refused at once (400 invalid_request) without a single outgoing request, which a
recording Python server proves."""
from __future__ import annotations

import time

import pytest

from fedlib import RESOLVE_TYPE, assert_json_error, assert_ok, describe, get
from remotefed import RemoteFederation, trust_anchor_entities


@pytest.fixture
def recorder():
    with RemoteFederation() as r:
        r.add("leaf", ["http://127.0.0.1:1/nobody"])
        yield r


def _resolve(server, sub: str):
    t0 = time.monotonic()
    r = get(server.id("ta") + "/resolve", params={"sub": sub, "trust_anchor": server.id("ta")})
    return r, time.monotonic() - t0


def test_subject_on_an_unnamed_origin_is_refused_without_a_request(make_server, recorder):
    server = make_server("allow-default", entities=trust_anchor_entities({})).start()
    r, took = _resolve(server, recorder.id("leaf"))
    assert_json_error(r, 400, "invalid_request")
    assert took < 1.0, f"a refused subject must be answered promptly, took {took:.2f}s"
    time.sleep(0.3)
    assert not recorder.hits_for(), f"trustbed contacted an origin no entity file names: {recorder.hits}"


def test_demo_federation_refuses_a_foreign_subject(fed, recorder):
    """The demo server runs without --fetch-allow: its resolve endpoint must not be an open proxy."""
    r, took = _resolve(fed, recorder.id("leaf"))
    assert_json_error(r, 400, "invalid_request")
    assert took < 1.0, f"took {took:.2f}s"
    assert not recorder.hits_for(), f"the demo server fetched from {recorder.base}: {recorder.hits}"


def test_same_host_other_port_is_not_the_same_origin(make_server, recorder):
    """The origin includes the port: naming 127.0.0.1:<A> does not open 127.0.0.1:<B>."""
    other = RemoteFederation().start()
    try:
        sub = other.add("leaf", [])
        server = make_server("allow-port", entities=trust_anchor_entities({sub.entity_id: {"jwks": sub.jwks}})).start()
        r, _ = _resolve(server, recorder.id("leaf"))
        assert_json_error(r, 400, "invalid_request")
        assert not recorder.hits_for(), f"fetched from an origin that differs only by port: {recorder.hits}"
    finally:
        other.stop()


def test_fetch_allow_prefix_opens_the_origin(make_server, recorder):
    server = make_server("allow-prefix", entities=trust_anchor_entities({}), extra_args=["--fetch-allow", recorder.base + "/"]).start()
    r, _ = _resolve(server, recorder.id("leaf"))
    # The leaf has no chain to this anchor: any 4xx, but the allow-list is not the reason.
    assert 400 <= r.status_code < 500, describe(r)
    assert recorder.hits_for("/leaf/.well-known/openid-federation"), "an allowed prefix must be fetched"


def test_fetch_allow_is_a_prefix_not_an_origin(make_server, recorder):
    server = make_server("allow-narrow", entities=trust_anchor_entities({}),
                         extra_args=["--fetch-allow", recorder.base + "/elsewhere/"]).start()
    r, _ = _resolve(server, recorder.id("leaf"))
    assert_json_error(r, 400, "invalid_request")
    assert not recorder.hits_for(), f"fetched outside the allowed prefix: {recorder.hits}"


def test_remote_subordinate_origin_is_allowed_by_default(make_server):
    with RemoteFederation() as remote:
        leaf = remote.add("leaf", [])
        server = make_server("allow-sub", entities=trust_anchor_entities({leaf.entity_id: {"jwks": leaf.jwks}})).start()
        leaf.authority_hints = [server.id("ta")]
        r, _ = _resolve(server, leaf.entity_id)
        assert_ok(r, RESOLVE_TYPE)


def test_redirect_to_an_unnamed_origin_is_not_followed(make_server, recorder):
    """Redirects are checked against the list too (docs/federation.md, "Fetch limits": "redirects included")."""
    with RemoteFederation() as remote:
        leaf = remote.add("leaf", [])
        remote.behaviour["/leaf/.well-known/openid-federation"] = ("redirect", recorder.id("leaf") + "/.well-known/openid-federation")
        server = make_server("allow-redirect", entities=trust_anchor_entities({leaf.entity_id: {"jwks": leaf.jwks}})).start()
        r, _ = _resolve(server, leaf.entity_id)
        assert 400 <= r.status_code < 600 and r.status_code != 200, describe(r)
        assert remote.hits_for("/leaf/"), "the allowed origin should have been asked"
        time.sleep(0.3)
        assert not recorder.hits_for(), f"a redirect led trustbed to an origin outside the list: {recorder.hits}"
