"""The explorer's entity, subordinate statement and check pages (issue 19 items 2 and 4).

The demo federation's Trust Anchor, intermediate and leaves; a trust mark revoked with
`trustbed trust-mark revoke` shows `revoked`; a rotated and revoked key shows in the historical
keys with its reason; a remote federation (remotefed.py) viewed through the page, an entity
outside the fetch allow-list refused with a page; hostile remote statements (HTML in every
string, control characters, deep JSON, oversized bodies, a host that never answers) escaped or
answered with an error page, never a 5xx from our side or a hang; `/explorer/check` for a good
and a broken entity.  Raw JWTs on the pages are checked with joserfc against the keys the
federation endpoints publish, not against the page's own claims.  In headless Chromium: a leaf
opened from its intermediate's subordinate list (screenshot kept), and a page full of
`<script>`/`<img onerror>` names with JavaScript ENABLED runs no script."""
from __future__ import annotations

import html
import os
import re
import shutil
import time
from pathlib import Path
from urllib.parse import quote

import pytest
import requests

from fedlib import PID_MARK, fetch_entity_configuration, get, verify_jws, wait_for
from remotefed import RemoteFederation, trust_anchor_entities

HOSTILE = "<script>document.title='pwned';alert(1)</script><img src=x onerror=alert(2)>"


def page(server_or_base, path: str, **params) -> requests.Response:
    base = server_or_base if isinstance(server_or_base, str) else server_or_base.base
    query = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())
    return requests.get(f"{base}{path}" + (f"?{query}" if query else ""), timeout=30)


def q(entity_id: str) -> str:
    """An entity ID in an explorer link, as the pages write it (`:` and `/` stay as they are)."""
    return quote(entity_id, safe=":/")


def entity_page(server, entity_id: str, **extra) -> requests.Response:
    return page(server, "/explorer/entity", id=entity_id, **extra)


def assert_html(r: requests.Response, status: int = 200) -> str:
    assert r.status_code == status, f"{r.url}: HTTP {r.status_code}, expected {status}: {text_of(r.text)[:800]}"
    assert r.headers.get("Content-Type", "").startswith("text/html"), r.headers.get("Content-Type")
    csp = r.headers.get("Content-Security-Policy", "")
    assert "frame-ancestors 'none'" in csp and "script-src" not in csp.replace("script-src 'none'", ""), csp
    assert r.headers.get("X-Content-Type-Options") == "nosniff"
    return r.text


def text_of(markup: str) -> str:
    """What a person reads: tags dropped, entities decoded."""
    markup = re.sub(r"<style>.*?</style>", "", markup, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def raw_jwts(markup: str) -> list[str]:
    return [html.unescape(t).strip() for t in re.findall(r"<textarea[^>]*>(.*?)</textarea>", markup, flags=re.S)]


def served_by(markup: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'served by <a href="([^"]+)"', markup)]


def mark_statuses(markup: str) -> list[str]:
    return re.findall(r'<span class="badge (\w+) trust-mark-status">', markup)


# -- the demo federation


def test_trust_anchor_page(fed):
    ta = fed.id("ta")
    markup = assert_html(entity_page(fed, ta))
    text = text_of(markup)
    assert "verifies" in text and "self-signed" in text, text[:600]
    # The raw configuration on the page is the one the endpoint serves, and verifies with its jwks.
    jwt, header, claims = fetch_entity_configuration(ta)
    raws = raw_jwts(markup)
    assert raws and raws[0].split(".")[1] == jwt.split(".")[1], "first raw JWT is not the configuration"
    verify_jws(raws[0], claims["jwks"], "raw JWT on the page", typ="entity-statement+jwt")
    assert header["kid"] in text
    assert ta + "/.well-known/openid-federation" in served_by(markup)
    # Superior: its subordinates, each linking to its page and to the statement page.
    assert 'id="subordinates"' in markup
    inter = fed.id("intermediate")
    assert f'href="/explorer/entity?id={q(inter)}"' in markup, "intermediate not linked from the TA"
    assert f'/explorer/statement?iss={q(ta)}&amp;sub={q(inter)}' in markup
    # iat/exp in human form.
    iat = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(claims["iat"]))
    assert iat in text


def test_intermediate_leaf_and_statement_pages(fed):
    inter, rp = fed.id("intermediate"), fed.id("relying-party")
    markup = assert_html(entity_page(fed, inter))
    for leaf in ("relying-party", "pid-provider", "wallet-provider"):
        assert f'/explorer/entity?id={q(fed.id(leaf))}' in markup, f"{leaf} not in the subordinate list"
    # The leaf: authority hints as links, metadata per entity type, its trust mark active.
    leaf = assert_html(entity_page(fed, rp))
    assert f'href="/explorer/entity?id={q(inter)}"' in leaf
    assert 'id="metadata-openid_credential_verifier"' in leaf and 'id="metadata-federation_entity"' in leaf
    assert mark_statuses(leaf) == ["active"], mark_statuses(leaf)
    assert "delegation" in text_of(leaf)
    assert rp + "/historical-keys" in served_by(leaf)
    # The statement page: the subordinate statement, decoded, with its raw form verifying under
    # the intermediate's keys, and a link to the fetch endpoint that served it.
    st = assert_html(page(fed, "/explorer/statement", iss=inter, sub=rp))
    _, _, inter_ec = fetch_entity_configuration(inter)
    raw = raw_jwts(st)[0]
    _, claims = verify_jws(raw, inter_ec["jwks"], "subordinate statement on the page", typ="entity-statement+jwt")
    assert claims["iss"] == inter and claims["sub"] == rp
    assert "metadata_policy" in claims and "subset_of" in text_of(st) and "max_path_length" in text_of(st)
    fetch_url = served_by(st)[0]
    assert fetch_url.startswith(inter + "/fetch?sub=")
    assert get(fetch_url).text.strip().split(".")[1] == raw.split(".")[1]


def test_pagination_of_subordinates(make_server):
    leaves = {f"leaf{i:03d}": {"authority_hints": ["mid"], "metadata": {"federation_entity": {"organization_name": f"Leaf {i}"}}}
              for i in range(130)}
    files = {"ta": {"trust_anchor": True, "metadata": {"federation_entity": {"organization_name": "TA"}}},
             "mid": {"authority_hints": ["ta"], "metadata": {"federation_entity": {"organization_name": "Mid"}}}, **leaves}
    server = make_server("explorer-pages", entities=files).start()
    first = text_of(assert_html(entity_page(server, server.id("mid"))))
    assert "1–100 of 130" in first and "leaf099" in first and "leaf100" not in first
    second_markup = assert_html(entity_page(server, server.id("mid"), offset=100))
    second = text_of(second_markup)
    assert "101–130 of 130" in second and "leaf100" in second and "leaf129" in second and "leaf099" not in second
    assert 'rel="prev"' in second_markup and 'rel="next"' not in second_markup
    assert "101–130 of 130" in text_of(assert_html(entity_page(server, server.id("mid"), offset=5000))), "past the end: the last page"
    assert "offset" in text_of(assert_html(entity_page(server, server.id("mid"), offset=-5), 400))


def test_bad_input_is_a_page(fed):
    ta = fed.id("ta")
    cases = [
        ({}, 400, "required"),
        ({"id": "javascript:alert(1)"}, 400, "not an entity ID"),
        ({"id": ta + "?x=1"}, 400, "not an entity ID"),
        ({"id": fed.id("no-such-entity")}, 404, "not served here"),
        ({"id": "https://not-allowed.example/x"}, 400, "allow-list"),
        ({"id": ta, "offset": "abc"}, 400, "offset"),
    ]
    for params, status, words in cases:
        text = text_of(assert_html(page(fed, "/explorer/entity", **params), status))
        assert words in text, f"{params}: {text[:400]}"
    text = text_of(assert_html(requests.get(f"{fed.base}/explorer/entity?id={quote(ta)}&id={quote(ta)}", timeout=10), 400))
    assert "2 times" in text
    assert_html(page(fed, "/explorer/statement", iss=ta, sub=fed.id("pid-provider")), 404)  # not the TA's subordinate
    assert_html(page(fed, "/explorer/statement", iss=ta, sub=ta), 400)
    assert_html(page(fed, "/explorer/check"), 400)


def test_check_page_good_and_broken(fed):
    markup = assert_html(page(fed, "/explorer/check", id=fed.id("relying-party")))
    good = text_of(markup)
    assert "no problems found" in good and "self-signature verifies" in good
    assert "badge problem" not in markup, good
    broken = text_of(assert_html(page(fed, "/explorer/check", id=fed.id("no-such-entity"))))
    assert "1 problem(s)" in broken and "not served here" in broken, broken[:800]


# -- revocations: trust marks and keys


def test_revoked_mark_and_revoked_key(make_server):
    server = make_server("explorer-revoke").start()
    pid = server.id("pid-provider")
    assert mark_statuses(assert_html(entity_page(server, pid))) == ["active"]
    p = server.cli("trust-mark", "revoke", "--issuer", "ta", "--type", PID_MARK, "--subject", "pid-provider",
                   "--database", str(server.database), "--entities", str(server.entities), "--base-url", server.base,
                   "--reason", "explorer test", timeout=30)
    assert p.returncode == 0, p.stderr[-800:]

    def revoked():
        markup = assert_html(entity_page(server, pid))
        return mark_statuses(markup) == ["revoked"] and "explorer test" in text_of(markup), mark_statuses(markup)

    wait_for(revoked, "the revoked mark shown as revoked", timeout=5)

    name = "wallet-provider"
    _, h0, _ = fetch_entity_configuration(server.id(name))
    old = h0["kid"]
    p = server.cli("keys", "rotate", name, *server.state_args, "--base-url", server.base, timeout=30)
    assert p.returncode == 0, p.stderr[-800:]
    wait_for(lambda: (fetch_entity_configuration(server.id(name))[1]["kid"] != old, old), "rotation picked up")
    p = server.cli("keys", "revoke", name, old, "--reason", "compromised", *server.state_args, "--base-url", server.base,
                   timeout=30)
    assert p.returncode == 0, p.stderr[-800:]

    def listed():
        markup = assert_html(entity_page(server, server.id(name)))
        rows = [text_of(r) for r in re.findall(r'<tr class="historical-key">(.*?)</tr>', markup, flags=re.S)]
        return any(old in r and "compromised" in r for r in rows), rows

    wait_for(listed, "the revoked key with its reason in the historical keys", timeout=5)


# -- other servers


def test_remote_federation_and_hostile_statements(make_server):
    with RemoteFederation() as remote, RemoteFederation() as elsewhere:
        leaf = remote.add("leaf", [], metadata={"federation_entity": {"organization_name": HOSTILE, "contacts": [HOSTILE + "\u0001\u001b[31m"]},
                                                 "openid_relying_party": {"client_name": HOSTILE, "redirect_uris": ["javascript:alert(3)"]}})
        deep = remote.add("deep", [])
        nested: object = "bottom"
        for _ in range(200):
            nested = [nested]
        deep.metadata = {"federation_entity": {"organization_name": "Deep", "x": nested}}
        big = remote.add("big", [])
        big.metadata = {"federation_entity": {"organization_name": "B" * (900 * 1024)}}
        huge = remote.add("huge", [])
        remote.behaviour["/huge/.well-known/openid-federation"] = "huge"
        dead = remote.add("dead", [])
        remote.behaviour["/dead/.well-known/openid-federation"] = "hang"
        failing = remote.add("failing", [])
        remote.behaviour["/failing/.well-known/openid-federation"] = "error"
        stranger = elsewhere.add("stranger", [])
        subs = {e.entity_id: {"jwks": e.jwks} for e in (leaf, deep, big, huge, dead, failing)}
        server = make_server("explorer-remote", entities=trust_anchor_entities(subs)).start()
        leaf.authority_hints = [server.id("ta")]

        # A remote entity through the page: fetched, decoded, its signature checked, marked remote.
        markup = assert_html(entity_page(server, leaf.entity_id))
        text = text_of(markup)
        assert "another server" in text and "verifies" in text
        assert HOSTILE in text, "HTML in names must show as text"
        assert "<script>" not in markup and "<img src=x" not in markup
        assert "\x01" not in markup and "\x1b" not in markup, "control characters reach the page"
        assert 'href="javascript:' not in markup
        assert f'href="/explorer/entity?id={q(server.id("ta"))}"' in markup
        assert remote.hits_for("/leaf/.well-known/openid-federation")
        # The TA's subordinate statement about it; the check page for it.
        assert_html(page(server, "/explorer/statement", iss=server.id("ta"), sub=leaf.entity_id))
        assert "no problems found" in text_of(assert_html(page(server, "/explorer/check", id=leaf.entity_id)))

        # Outside the allow-list: refused without a connection.
        refused = text_of(assert_html(entity_page(server, stranger.entity_id), 400))
        assert "allow-list" in refused
        assert not elsewhere.hits_for("/"), "an entity outside the allow-list was contacted"

        # Hostile statements: a page saying what is wrong, never a 5xx of ours, never a hang.
        for e, words in ((deep, "deep"), (big, ""), (huge, "larger than")):
            r = entity_page(server, e.entity_id)
            assert r.status_code == 422, f"{e.name}: HTTP {r.status_code} {text_of(r.text)[:400]}"
            assert words in text_of(assert_html(r, 422)).lower(), text_of(r.text)[:400]
        r = entity_page(server, failing.entity_id)
        assert "HTTP 500" in text_of(assert_html(r, 502))
        started = time.monotonic()
        r = entity_page(server, dead.entity_id)
        elapsed = time.monotonic() - started
        assert "timed out" in text_of(assert_html(r, 502)), text_of(r.text)[:400]
        assert elapsed < 12, f"an unanswering host held the page {elapsed:.1f}s"
        assert requests.get(server.base + "/health", timeout=5).status_code == 200


# -- in the browser

CHROMIUM = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER_BIN", "/usr/bin/chromedriver")


def browser(javascript: bool):
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        pytest.skip("chromium or chromedriver is not installed: apt-get install chromium chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(arg)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(15)
    return driver


def artifacts() -> Path:
    base = os.environ.get("TRUSTBED_ARTIFACTS")
    path = Path(base) if base else Path(__file__).resolve().parent / "artifacts" / "explorer-entity"
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_chromium_leaf_from_the_intermediates_list(fed):
    from selenium.webdriver.common.by import By
    driver = browser(javascript=False)
    try:
        driver.get(f"{fed.base}/explorer/entity?id={quote(fed.id('intermediate'), safe='')}")
        assert driver.title.startswith("Entity ")
        links = driver.find_elements(By.CSS_SELECTOR, "#subordinates ~ div table a")
        link = next(a for a in links if a.text == fed.id("relying-party"))
        link.click()
        from selenium.webdriver.support.ui import WebDriverWait
        WebDriverWait(driver, 30).until(lambda d: d.current_url.endswith(q(fed.id("relying-party"))))
        assert fed.id("relying-party") in driver.find_element(By.TAG_NAME, "h1").text
        driver.save_screenshot(str(artifacts() / "entity-leaf-from-intermediate.png"))
        driver.find_element(By.XPATH, "//summary[text()='raw JWT']").click()
        raw = driver.find_element(By.TAG_NAME, "textarea").get_attribute("value")
        assert raw.count(".") == 2
        driver.save_screenshot(str(artifacts() / "entity-leaf-raw-jwt.png"))
    finally:
        driver.quit()


def test_chromium_hostile_names_run_no_script(make_server):
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By
    with RemoteFederation() as remote:
        leaf = remote.add("leaf", [], metadata={"federation_entity": {"organization_name": HOSTILE},
                                                 "openid_relying_party": {"client_name": HOSTILE}})
        server = make_server("explorer-hostile", entities=trust_anchor_entities({leaf.entity_id: {"jwks": leaf.jwks}})).start()
        driver = browser(javascript=True)
        try:
            driver.get(f"{server.base}/explorer/entity?id={quote(leaf.entity_id, safe='')}")
            time.sleep(0.5)
            with pytest.raises(NoAlertPresentException):
                driver.switch_to.alert.text
            assert driver.title == f"Entity {leaf.entity_id} · Trustbed", driver.title
            assert HOSTILE in driver.find_element(By.TAG_NAME, "main").text
            assert not driver.find_elements(By.CSS_SELECTOR, "main script, main img")
            driver.save_screenshot(str(artifacts() / "entity-hostile-names.png"))
        finally:
            driver.quit()
