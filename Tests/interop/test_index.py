"""The server index (`GET /`) and the response policy of non-federation paths.

The index stays small however many entities are hosted: counts, one page of entities and an
absolute `next` link; `offset` and `limit` (1..1000) page through it.  Federation endpoints and
`/health` carry `Access-Control-Allow-Origin: *`; unknown paths are JSON 404s."""
from __future__ import annotations

import pytest
import requests

from fedlib import assert_json_error, content_type, describe, get

DEMO = {"ta": True, "intermediate": False, "pid-provider": False, "pid-provider-haip": False, "wallet-provider": False,
        "relying-party": False}


def index(fed, **params) -> dict:
    r = get(fed.base + "/", params=params or None)
    assert r.status_code == 200, describe(r)
    assert content_type(r) == "application/json", describe(r)
    body = r.json()
    assert isinstance(body, dict), f"index must be a JSON object: {r.text[:300]}"
    return body


def test_index_shape_and_counts(fed):
    body = index(fed)
    assert body.get("service") == "trustbed", body
    assert body.get("counts") == {"entities": 6, "trust_anchors": 1, "intermediates": 1, "leaves": 4}, body.get("counts")
    assert body.get("offset") == 0 and body.get("limit") == 100, body
    assert "next" not in body or body["next"] is None, f"6 entities fit on one page: next={body.get('next')}"
    entries = body.get("entities")
    assert isinstance(entries, list) and len(entries) == 6, entries
    by_name = {e.get("name"): e for e in entries}
    assert set(by_name) == set(DEMO), sorted(by_name)
    for name, is_ta in DEMO.items():
        e = by_name[name]
        assert e.get("entity_id") == fed.id(name), e
        assert e.get("entity_configuration") == fed.id(name) + "/.well-known/openid-federation", e
        assert e.get("trust_anchor") is is_ta, e
        assert get(e["entity_configuration"]).status_code == 200, e


def test_index_pages_with_next_links(fed):
    seen: list[str] = []
    body = index(fed, limit=2)
    pages = 0
    while True:
        pages += 1
        assert body.get("limit") == 2, body
        entries = body["entities"]
        assert len(entries) <= 2, entries
        seen += [e["name"] for e in entries]
        nxt = body.get("next")
        if not nxt:
            break
        assert nxt.startswith(fed.base + "/?") or nxt.startswith(fed.base + "?"), f"next must be an absolute URL on this server: {nxt}"
        assert pages < 10, "next links do not end"
        r = get(nxt)
        assert r.status_code == 200, describe(r)
        body = r.json()
    assert pages == 3, f"6 entities at limit 2 are 3 pages, got {pages}"
    assert sorted(seen) == sorted(DEMO), f"paging lost or repeated entities: {seen}"


def test_index_offset(fed):
    full = [e["name"] for e in index(fed)["entities"]]
    body = index(fed, offset=3, limit=1000)
    assert body.get("offset") == 3 and body.get("limit") == 1000, body
    assert [e["name"] for e in body["entities"]] == full[3:], body["entities"]
    assert body.get("counts", {}).get("entities") == 6, "counts cover all entities on every page"


@pytest.mark.parametrize("params", [{"limit": "0"}, {"limit": "1001"}, {"limit": "abc"}, {"limit": "-1"}, {"offset": "-1"},
                                    {"offset": "x"}, {"limit": ""}, {"offset": "1e3"}])
def test_index_bad_paging_is_invalid_request(fed, params):
    assert_json_error(get(fed.base + "/", params=params), 400, "invalid_request")


@pytest.mark.parametrize("path", ["/health", "/ta/.well-known/openid-federation", "/ta/list", "/ta/historical-keys",
                                  "/ta/trust-mark-list?trust_mark_type=https://trustbed.example/trust-marks/pid-provider"])
def test_cors_on_health_and_federation_endpoints(fed, path):
    r = get(fed.base + path)
    assert r.status_code == 200, describe(r)
    assert r.headers.get("Access-Control-Allow-Origin") == "*", f"{path}: CORS header missing: {dict(r.headers)}"


@pytest.mark.parametrize("path", ["/nope", "/ta/nope", "/ta/.well-known/nope", "/nobody/.well-known/openid-federation", "/ta/fetch/extra"])
def test_unknown_paths_are_json_404(fed, path):
    r = get(fed.base + path)
    assert_json_error(r, 404, "not_found")
    r = requests.head(fed.base + path, timeout=10)
    assert r.status_code == 404, f"HEAD {path}: {r.status_code}"
