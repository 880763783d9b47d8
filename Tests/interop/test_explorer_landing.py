"""The federation explorer's landing (issue 19 items 1, 5): `/` negotiates (a browser's
`text/html` gets a page, programs keep the JSON index), the tree opens one level and 100
subordinates at a time (`/explorer/tree`), the search finds entities by name, entity ID or
organization name (`/explorer/search`), and `/explorer/graph.svg` draws the hierarchy, grouping
leaves at scale.  Every value is escaped: an organization name of `<script>alert(1)</script>`
shows as text in the pages and in the SVG.  An entity file named `explorer` is refused at start.

A generated federation: `ta` → `big` (250 leaves `leaf-000`...) and `small` (2 leaves, one
of them `evil` with the hostile organization name), plus a remote subordinate of `ta`.
Headless Chromium (JavaScript off, as in test_pages_chromium.py) opens `/`, expands the Trust
Anchor, follows the tree links and keeps screenshots at phone and desktop widths."""
from __future__ import annotations

import http.client
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from urllib.parse import urljoin, urlsplit

import pytest
import requests

from fedlib import content_type, describe
from harness import DEMO_ENTITIES, free_port, trustbed_binary

HOSTILE = "<script>alert(1)</script>"
LEAVES = 250
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
NODE = re.compile(r'<li class="node"><a class="name" href="([^"]+)">([^<]+)</a>')
CSP = "default-src 'none'"


def generated_entities() -> dict[str, dict]:
    files: dict[str, dict] = {
        "ta": {"trust_anchor": True, "metadata": {"federation_entity": {"organization_name": "Landing Anchor"}},
               "subordinates": {"https://remote.example/rp": {
                   "jwks": {"keys": [{"kty": "EC", "crv": "P-256", "kid": "k",
                                      "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
                                      "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]},
                   "entity_types": ["openid_relying_party"]}},
               "trust_mark_issuers": {"https://marks.example/tm/certified": ["ta"]},
               "trust_marks_issued": [{"trust_mark_type": "https://marks.example/tm/certified", "subjects": ["leaf-007", "evil"]}]},
        "big": {"authority_hints": ["ta"], "metadata": {"federation_entity": {"organization_name": "Big Intermediate"}}},
        "small": {"authority_hints": ["ta"], "metadata": {"federation_entity": {"organization_name": "Small Intermediate"}}},
        "evil": {"authority_hints": ["small"], "metadata": {"federation_entity": {"organization_name": HOSTILE},
                                                           "openid_relying_party": {"client_name": "Evil RP"}}},
        "calm": {"authority_hints": ["small"], "metadata": {"openid_relying_party": {"client_name": "Calm RP"}}},
    }
    for n in range(LEAVES):
        files[f"leaf-{n:03d}"] = {"authority_hints": ["big"], "metadata": {
            "federation_entity": {"organization_name": f"Leaf Org {n}"},
            "openid_relying_party": {"client_name": f"RP {n}"}}}
    return files


@pytest.fixture(scope="module")
def gen(session_tmp):
    from harness import TrustbedServer
    server = TrustbedServer(session_tmp / "explorer-landing", entities=generated_entities(), label="explorer-landing").start(timeout=60)
    yield server
    server.stop()


def html(url: str, **kw) -> requests.Response:
    r = requests.get(url, headers={"Accept": BROWSER_ACCEPT}, timeout=30, **kw)
    return r


def assert_html_page(r: requests.Response, status: int = 200) -> str:
    assert r.status_code == status, describe(r)
    assert content_type(r) == "text/html", describe(r)
    assert CSP in r.headers.get("Content-Security-Policy", ""), r.headers
    assert "frame-ancestors 'none'" in r.headers.get("Content-Security-Policy", ""), r.headers
    assert r.headers.get("X-Content-Type-Options") == "nosniff", r.headers
    return r.text


def nodes(page: str) -> list[tuple[str, str]]:
    return NODE.findall(page)


def raw_get(base: str, path: str, accept: str | None) -> tuple[int, dict, bytes]:
    """GET with exactly this Accept header, or none at all (requests always sends one)."""
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.putrequest("GET", path, skip_accept_encoding=True)
    if accept is not None:
        conn.putheader("Accept", accept)
    conn.endheaders()
    resp = conn.getresponse()
    body = resp.read()
    headers = {k.lower(): v for k, v in resp.getheaders()}
    conn.close()
    return resp.status, headers, body


# -- / negotiates --------------------------------------------------------------------------------

@pytest.mark.parametrize("accept", ["application/json", "*/*", None, "application/json, text/html", "text/html;q=0, */*"])
def test_root_stays_json_for_programs(fed, accept):
    status, headers, body = raw_get(fed.base, "/", accept)
    assert status == 200, (accept, status, body[:300])
    assert headers.get("content-type", "").split(";")[0] == "application/json", (accept, headers)
    assert "accept" in headers.get("vary", "").lower(), f"Vary: Accept missing on the JSON answer: {headers}"
    doc = json.loads(body)
    # Today's shape (test_index.py): service, counts, paging, one entry per entity.
    assert set(doc) == {"service", "counts", "offset", "limit", "entities"}, sorted(doc)
    assert doc["service"] == "trustbed"
    assert doc["counts"] == {"entities": 6, "trust_anchors": 1, "intermediates": 1, "leaves": 4}, doc["counts"]
    assert (doc["offset"], doc["limit"]) == (0, 100)
    for e in doc["entities"]:
        assert set(e) == {"name", "entity_id", "entity_configuration", "trust_anchor"}, e
    status2, _, body2 = raw_get(fed.base, "/", "application/json")
    assert json.loads(body2) == doc, "every program's Accept gets the same JSON"


@pytest.mark.parametrize("accept", [BROWSER_ACCEPT, "text/html", "application/json;q=0.5, text/html"])
def test_root_is_a_page_for_browsers(fed, accept):
    r = requests.get(fed.base + "/", headers={"Accept": accept}, timeout=30)
    page = assert_html_page(r)
    assert "accept" in r.headers.get("Vary", "").lower(), r.headers
    assert "<dt>Entities</dt><dd>6</dd>" in page and "<dt>Trust Anchors</dt><dd>1</dd>" in page, page[:2000]
    assert "<dt>Intermediates</dt><dd>1</dd>" in page and "<dt>Leaves</dt><dd>4</dd>" in page
    assert 'action="/explorer/search"' in page and 'method="get"' in page
    assert '<img class="picture" src="/explorer/graph.svg"' in page
    assert "Trustbed Demo Trust Anchor" in page
    assert f'href="/explorer/tree?id={fed.id("intermediate")}"' in page, "the intermediate opens its own level"
    # Badges: entity types and the pid-provider trust mark (on the pid-provider, under the intermediate).
    assert '<span class="badge type">federation_entity</span>' in page
    assert '<span class="badge mark" title="https://trustbed.example/trust-marks/certified-relying-party">' in page
    # Each node links to its entity page.
    assert f'href="/explorer/entity?id={fed.id("relying-party")}"' in page


# -- the tree ------------------------------------------------------------------------------------

def test_tree_pages_beyond_a_hundred_children(gen):
    landing = assert_html_page(html(gen.base + "/"))
    assert "<dt>Entities</dt><dd>255</dd>" in landing and "<dt>Intermediates</dt><dd>2</dd>" in landing, landing[:3000]
    # The Trust Anchor's level: intermediates first, then the remote subordinate, marked.
    ta_nodes = [name for _, name in nodes(landing)]
    assert ta_nodes == ["big", "small", "https://remote.example/rp"], ta_nodes
    assert '<span class="badge ext">other server</span>' in landing
    url = gen.base + f"/explorer/tree?id={gen.id('big')}"
    assert f'href="/explorer/tree?id={gen.id("big")}"' in landing
    seen: list[str] = []
    pages = 0
    while url:
        page = assert_html_page(html(url))
        pages += 1
        names = [name for _, name in nodes(page)]
        assert 0 < len(names) <= 100, (url, len(names))
        seen += names
        assert "› <strong>big</strong>" in page and f'href="/explorer/tree?id={gen.id("ta")}">ta</a>' in page, "breadcrumb"
        m = re.search(r'<a rel="next" href="([^"]+)"', page)
        url = urljoin(gen.base, m.group(1).replace("&amp;", "&")) if m else None
        assert pages <= 5, "next links do not end"
    assert pages == 3, pages
    assert seen == [f"leaf-{n:03d}" for n in range(LEAVES)], "every leaf once, in order"
    last = html(gen.base + f"/explorer/tree?id={gen.id('big')}&offset=200").text
    assert '<a rel="prev" href="/explorer/tree?id=' in last and "201–250 of 250" in last
    # A leaf's badges: its trust mark in short form.
    first = html(gen.base + f"/explorer/tree?id={gen.id('big')}").text
    assert re.search(r'leaf-007</a>.*?✓ certified</span>', first, re.S), "leaf-007's trust mark badge"


@pytest.mark.parametrize("query, status", [
    ("id=https://nowhere.example/x", 404), ("", 400), ("id=", 400), ("id=a&id=b", 400), ("id=ta&offset=-1", 400),
    ("id=ta&offset=abc", 400),
])
def test_tree_bad_input_is_a_page(gen, query, status):
    query = query.replace("id=ta", "id=" + gen.id("ta"))
    page = assert_html_page(html(gen.base + "/explorer/tree?" + query), status)
    assert 'class="error"' in page and "Back to the federation" in page, page[-800:]


def test_leaf_tree_says_it_is_a_leaf(gen):
    page = assert_html_page(html(gen.base + f"/explorer/tree?id={gen.id('calm')}"))
    assert "has no subordinates" in page and "› <strong>calm</strong>" in page


# -- search --------------------------------------------------------------------------------------

def search(gen, q: str, offset: int | None = None) -> str:
    params = {"q": q} if offset is None else {"q": q, "offset": str(offset)}
    return assert_html_page(html(gen.base + "/explorer/search", params=params))


def test_search_by_name_id_and_organization(gen):
    assert [n for _, n in nodes(search(gen, "LEAF-24"))] == [f"leaf-{n}" for n in range(240, 250)]
    assert [n for _, n in nodes(search(gen, gen.id("leaf-007")))] == ["leaf-007"]
    assert [n for _, n in nodes(search(gen, "small interm"))] == ["small"]
    assert [n for _, n in nodes(search(gen, "alert(1)"))] == ["evil"]
    assert [n for _, n in nodes(search(gen, "remote.example"))] == ["https://remote.example/rp"]
    page = search(gen, "no-such-entity")
    assert nodes(page) == [] and "Nothing matches" in page


def test_search_is_paginated(gen):
    first = search(gen, "leaf org")
    assert len(nodes(first)) == 100 and "1–100 of 250" in first, first[-1500:]
    assert '<a rel="next" href="/explorer/search?q=leaf%20org&amp;offset=100"' in first, first[-1500:]
    third = search(gen, "leaf org", 200)
    assert [n for _, n in nodes(third)] == [f"leaf-{n}" for n in range(200, 250)]


def test_search_refuses_bad_input_as_a_page(gen):
    assert_html_page(html(gen.base + "/explorer/search", params={"q": "x" * 300}), 400)
    assert_html_page(html(gen.base + "/explorer/search", params={"q": "x", "offset": "-5"}), 400)
    # The query is echoed escaped.
    page = search(gen, '"><b>x')
    assert '"><b>x' not in page and "&quot;&gt;&lt;b&gt;x" in page


# -- hostile values ------------------------------------------------------------------------------

def test_hostile_organization_name_is_text(gen):
    for url in (gen.base + f"/explorer/tree?id={gen.id('small')}", gen.base + "/explorer/search?q=evil"):
        page = assert_html_page(html(url))
        assert HOSTILE not in page, url
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page, url
        assert "<script" not in page.lower(), f"{url}: no script element at all"


# -- the picture -----------------------------------------------------------------------------------

SVG_NS = "{http://www.w3.org/2000/svg}"


def svg_texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(SVG_NS + "text")]


def test_graph_svg_parses_groups_leaves_and_escapes(gen):
    r = requests.get(gen.base + "/explorer/graph.svg", timeout=60)
    assert r.status_code == 200, describe(r)
    assert content_type(r) == "image/svg+xml", describe(r)
    assert CSP in r.headers.get("Content-Security-Policy", "") and r.headers.get("X-Content-Type-Options") == "nosniff", r.headers
    root = ET.fromstring(r.content)
    assert root.tag == SVG_NS + "svg"
    assert not list(root.iter(SVG_NS + "script")) and b"<script" not in r.content
    texts = svg_texts(root)
    assert "250 leaves" in texts, texts
    assert not any(t.startswith("leaf-") for t in texts), "the 250 leaves of big are one box"
    # small's two leaves are drawn; evil's organization name is text, not markup.
    assert any(t.startswith("evil") and HOSTILE in t for t in texts), texts
    assert any(t.startswith("calm") for t in texts), texts
    assert any("✓ certified" in t for t in texts), "trust marks in short form"
    assert any("openid_relying_party" in t for t in texts), "entity types"
    assert any(t.startswith("ta") for t in texts)


def test_graph_svg_of_the_demo_parses(fed):
    r = requests.get(fed.base + "/explorer/graph.svg", timeout=30)
    root = ET.fromstring(r.content)
    texts = svg_texts(root)
    assert any(t.startswith("pid-provider ") for t in texts) and any("✓ pid-provider" in t for t in texts), texts


# -- an entity file named explorer ---------------------------------------------------------------

def test_serve_refuses_an_entity_named_explorer(trustbed_bin, tmp_path):
    entities = tmp_path / "Entities"
    shutil.copytree(DEMO_ENTITIES, entities)
    (entities / "explorer.json").write_text(json.dumps({"authority_hints": ["ta"]}))
    port = free_port()
    cmd = [str(trustbed_binary()), "serve", "--entities", str(entities), "--keys", str(tmp_path / "Keys"),
           "--database", str(tmp_path / "db.sqlite"), "--host", "127.0.0.1", "--port", str(port), "--base-url", f"http://127.0.0.1:{port}"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"serve kept running with Entities/explorer.json; stderr: {err[-800:]}")
    assert proc.returncode != 0, f"serve exited 0 with explorer.json; stderr: {err[-800:]}"
    assert "explorer.json" in err and "reserved" in err, f"stderr should name the file and say why: {err[-800:]!r}"


# -- in a browser ----------------------------------------------------------------------------------

@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_browser_opens_the_tree_level_by_level(gen, artifacts, viewport):
    from test_pages_chromium import CHROMEDRIVER, CHROMIUM, VIEWPORTS, browser, no_horizontal_overflow
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        pytest.skip("chromium or chromedriver is not installed")
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    driver = browser(viewport)
    try:
        driver.get(gen.base + "/")
        assert driver.title.startswith("Federation"), driver.title
        if viewport == "phone":
            no_horizontal_overflow(driver, VIEWPORTS["phone"][0], "/")
        details = driver.find_element(By.CSS_SELECTOR, "details.anchor")
        big_link = details.find_element(By.CSS_SELECTOR, f'a.open[href="/explorer/tree?id={gen.id("big")}"]')
        assert not big_link.is_displayed(), "the Trust Anchor starts closed"
        driver.find_element(By.CSS_SELECTOR, "details.anchor > summary").click()
        assert details.get_attribute("open") is not None
        assert big_link.is_displayed(), "expanding the Trust Anchor shows its intermediates"
        driver.save_screenshot(str(artifacts / f"explorer-landing-{viewport}.png"))
        big_link.click()
        wait_for(driver, lambda d: "/explorer/tree?id=" in d.current_url and d.title.startswith("big"))
        items = driver.find_elements(By.CSS_SELECTOR, "li.node a.name")
        assert len(items) == 100 and items[0].text == "leaf-000", [i.text for i in items[:3]]
        if viewport == "phone":
            no_horizontal_overflow(driver, VIEWPORTS["phone"][0], "tree of big")
        driver.save_screenshot(str(artifacts / f"explorer-tree-{viewport}.png"))
        driver.find_element(By.CSS_SELECTOR, 'a[rel="next"]').click()
        wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "li.node a.name")[0].text == "leaf-100")
        # Back up through the breadcrumb to the Trust Anchor, then into small: the hostile name is text.
        driver.find_element(By.CSS_SELECTOR, ".crumbs a[href^='/explorer/tree']").click()
        wait_for(driver, lambda d: d.title.startswith("ta"))
        driver.find_element(By.CSS_SELECTOR, f'a.open[href="/explorer/tree?id={gen.id("small")}"]').click()
        wait_for(driver, lambda d: d.title.startswith("small"))
        orgs = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "li.node .org")]
        assert HOSTILE in orgs, orgs
        driver.save_screenshot(str(artifacts / f"explorer-tree-small-{viewport}.png"))
        # The search form is a GET form.
        box = driver.find_element(By.CSS_SELECTOR, 'form.search input[name="q"]')
        box.send_keys("leaf-24")
        driver.find_element(By.CSS_SELECTOR, 'form.search button[type="submit"]').click()
        wait_for(driver, lambda d: "/explorer/search?q=leaf-24" in d.current_url)
        assert len(driver.find_elements(By.CSS_SELECTOR, "li.node")) == 10
        driver.save_screenshot(str(artifacts / f"explorer-search-{viewport}.png"))
        # The picture loads as an image under the page's CSP.
        driver.get(gen.base + "/")
        img = driver.find_element(By.CSS_SELECTOR, "img.picture")
        assert int(img.get_attribute("naturalWidth") or 0) > 0, "graph.svg did not load as an image"
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def artifacts(request):
    import os
    import time
    from pathlib import Path
    base = os.environ.get("TRUSTBED_ARTIFACTS")
    path = Path(base) if base else Path(__file__).resolve().parent / "artifacts" / f"explorer-{time.strftime('%Y%m%d-%H%M%S')}"
    path.mkdir(parents=True, exist_ok=True)
    yield path
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\nexplorer screenshots: {path}")


def wait_for(driver, condition, seconds: float = 30) -> None:
    """A click does not wait for the navigation it starts (and a busy machine answers slowly):
    wait until the page it leads to is there."""
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(driver, seconds).until(condition)
