"""Unknown request parameters are ignored at every federation endpoint (OpenID Federation 1.0
section 8 and OAuth 2.0 practice): a client adding a parameter of a later version must still be
served.  Each request here is an otherwise valid one plus `foo=bar`."""
from __future__ import annotations

import pytest
import requests

from fedlib import (EC_TYPE, JWKSET_JWT_TYPE, PID_MARK, RESOLVE_TYPE, TM_STATUS_TYPE, TRUST_MARK_TYPE, assert_ok, content_type, describe,
                    get)

EXTRA = {"foo": "bar"}


def _get_cases(fed):
    pid = fed.id("pid-provider")
    return {
        "entity configuration": (fed.id("ta") + "/.well-known/openid-federation", {}, EC_TYPE),
        "fetch": (fed.id("ta") + "/fetch", {"sub": fed.id("intermediate")}, EC_TYPE),
        "list": (fed.id("ta") + "/list", {}, "application/json"),
        "resolve": (fed.id("ta") + "/resolve", {"sub": pid, "trust_anchor": fed.id("ta")}, RESOLVE_TYPE),
        "trust-mark": (fed.id("ta") + "/trust-mark", {"trust_mark_type": PID_MARK, "sub": pid}, TRUST_MARK_TYPE),
        "trust-mark-list": (fed.id("ta") + "/trust-mark-list", {"trust_mark_type": PID_MARK}, "application/json"),
        "historical-keys": (fed.id("ta") + "/historical-keys", {}, JWKSET_JWT_TYPE),
    }


@pytest.mark.parametrize("endpoint", ["entity configuration", "fetch", "list", "resolve", "trust-mark", "trust-mark-list", "historical-keys"])
def test_unknown_query_parameter_is_ignored(fed, endpoint):
    url, params, ctype = _get_cases(fed)[endpoint]
    plain = get(url, params=params)
    assert_ok(plain, ctype)
    r = get(url, params={**params, **EXTRA})
    assert r.status_code == 200, f"{endpoint}: an unknown parameter must be ignored: {describe(r)}"
    assert content_type(r) == ctype, describe(r)
    if ctype == "application/json":
        assert r.json() == plain.json(), f"{endpoint}: the answer changed with foo=bar: {r.text[:300]} vs {plain.text[:300]}"


def test_unknown_parameters_several_and_repeated(fed):
    r = get(fed.id("ta") + "/list", params=[("foo", "bar"), ("foo", "baz"), ("x-later-version", "1")])
    assert r.status_code == 200, describe(r)


def test_trust_mark_status_ignores_an_extra_form_field(fed):
    token = get(fed.id("ta") + "/trust-mark", params={"trust_mark_type": PID_MARK, "sub": fed.id("pid-provider")}).text.strip()
    r = requests.post(fed.id("ta") + "/trust-mark-status", data={"trust_mark": token, **EXTRA}, timeout=15)
    assert_ok(r, TM_STATUS_TYPE)
    r = requests.post(fed.id("ta") + "/trust-mark-status?foo=bar", data={"trust_mark": token}, timeout=15)
    assert_ok(r, TM_STATUS_TYPE)
