"""A fetch for the server's own origin is answered in-process (issue 18 item 4): a subject under
the base URL that is not hosted fails at once as not_found, without one HTTP
request from the server to itself (which, from every worker at once, would deadlock it until the
fetch timed out). The access log proves it: no request for the missing entity reaches the server."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from fedlib import get


def entities() -> dict:
    return {
        "ta": {"trust_anchor": True, "metadata": {"federation_entity": {"organization_name": "TA"}}},
        "leaf": {"authority_hints": ["ta"], "metadata": {"openid_relying_party": {"client_name": "leaf"}}},
    }


def test_unhosted_entities_under_the_own_origin_are_never_fetched(make_server):
    server = make_server("own-origin", entities=entities()).start()
    ta = server.id("ta")
    missing = server.id("ta").rsplit("/", 1)[0] + "/not-hosted"

    def resolve(sub: str):
        t0 = time.monotonic()
        r = get(ta + "/resolve", params={"sub": sub, "trust_anchor": ta})
        return r.status_code, time.monotonic() - t0

    with ThreadPoolExecutor(max_workers=32) as pool:
        answers = list(pool.map(resolve, [missing] * 64))
    assert all(400 <= status < 500 for status, _ in answers), answers
    assert max(took for _, took in answers) < 3.0, answers
    status, _ = resolve(server.id("leaf"))
    assert status == 200
    time.sleep(0.3)
    log = server.log_path.read_text(errors="replace")
    assert "/not-hosted/.well-known" not in log, "the server fetched its own origin over HTTP"
    assert "/ta/resolve" in log, "the access log is on (the check above would be void otherwise)"
