"""The explorer's chain page (issue 19 item 3): /explorer/chain?sub=&trust_anchor=.

On the demo federation: every chain from the relying party to the Trust Anchor, the one the TA's
`resolve` endpoint returns marked, each statement decoded, and the metadata policy step by step,
with a parameter the TA's `subordinate_statement` policy changes highlighted with its operator (the
final values are checked against the resolve answer, verified with joserfc). Purpose-built
federations: a policy that conflicts with the TA's (the error at the intermediate, section 6.1.4.1),
`max_path_length` cutting a chain (verdict at the TA's level), a revoked trust mark left out (rule 5).
Bad input is a page in the layout with a 4xx status. Headless Chromium screenshots the highlighted
policy step at phone and desktop widths into the artifacts folder."""
from __future__ import annotations

import html
import json
import os
import shutil
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from fedlib import PID_MARK, RESOLVE_TYPE, decode_jws, fetch_entity_configuration, verify_jws

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict, parent: "Node | None"):
        self.tag, self.attrs, self.parent, self.children, self.parts = tag, attrs, parent, [], []

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        return "".join(p if isinstance(p, str) else p.text() for p in self.parts)

    def iter(self):
        yield self
        for c in self.children:
            yield from c.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs) -> list["Node"]:
        return [n for n in self.iter() if (tag is None or n.tag == tag) and (cls is None or cls in n.classes)
                and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]


class Tree(HTMLParser):
    """A small DOM from the standard library's parser (enough for markup the server writes)."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#root", {}, None)
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        n = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(n)
        self.cur.parts.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.parts.append(data)


def page(server, sub: str | None, ta: str | None = None, *, raw_query: str | None = None) -> tuple[requests.Response, Node]:
    if raw_query is None:
        q = []
        if sub is not None:
            q.append("sub=" + quote(sub, safe=""))
        if ta is not None:
            q.append("trust_anchor=" + quote(ta, safe=""))
        raw_query = "&".join(q)
    r = requests.get(f"{server.base}/explorer/chain?{raw_query}", timeout=30)
    assert r.headers.get("Content-Type", "").startswith("text/html"), r.headers
    assert r.status_code < 500, f"{r.status_code}: {r.text[:500]}"
    assert "</html>" in r.text and "federation explorer" in r.text, "every answer is a page in the layout"
    return r, Tree(r.text).root


def resolve_answer(server, sub: str) -> dict:
    ta = server.id("ta")
    r = requests.get(server.url("ta", "/resolve"), params={"sub": sub, "trust_anchor": ta}, timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith(RESOLVE_TYPE)
    _, _, ta_claims = fetch_entity_configuration(ta)
    _, claims = verify_jws(r.text, ta_claims["jwks"], "resolve response")
    return claims


def chains(root: Node) -> list[Node]:
    return root.find_all("section", "chain")


def chosen(root: Node) -> Node:
    picked = [c for c in chains(root) if "chosen" in c.classes]
    assert len(picked) == 1, f"exactly one chain is marked as resolve's choice, got {len(picked)}"
    return picked[0]


def param(section: Node, entity_type: str, name: str) -> Node:
    found = section.find_all("div", "param", data_entity_type=entity_type, data_parameter=name)
    assert found, f"no policy step for {entity_type}.{name}"
    return found[0]


# -- the demo federation ---------------------------------------------------------------------------

def test_demo_relying_party_every_chain_and_the_policy_step_that_changes_a_value(fed):
    sub, ta = fed.id("relying-party"), fed.id("ta")
    r, root = page(fed, sub, ta)
    assert r.status_code == 200, r.text[:2000]
    for header in ("Content-Security-Policy", "X-Content-Type-Options"):
        assert header in r.headers, f"HTML policy header {header} missing"
    # The form offers the hosted anchor and keeps what was asked.
    assert any(o.attrs.get("value") == ta for o in root.find_all("option")), "the hosted Trust Anchor is offered"
    assert root.find_all("input", name="sub")[0].attrs["value"] == sub

    # relying-party lists intermediate and ta in authority_hints: two chains, the shortest first.
    found = chains(root)
    assert len(found) == 2, f"two chains expected, got {len(found)}"
    picked = chosen(root)
    answer = resolve_answer(fed, sub)
    page_chain = [html.unescape(p.text()).strip() for p in picked.find_all("pre", "wrap")]
    assert page_chain == answer["trust_chain"], "the chain marked chosen is the one resolve returns"

    # Each statement decoded, with the endpoint that served it.
    statements = picked.find_all("details", "statement")
    assert len(statements) == 3
    first = statements[0].text()
    assert '"typ": "entity-statement+jwt"' in first and '"iss": "' + sub + '"' in first
    links = [a.attrs["href"] for a in picked.find_all("a") if "/.well-known/openid-federation" in a.attrs.get("href", "")]
    assert fed.id("relying-party") + "/.well-known/openid-federation" in links
    assert any("/fetch?sub=" in a.attrs.get("href", "") for a in picked.find_all("a"))

    # The TA's policy adds its ops address to `contacts` of a credential verifier: the leaf has no
    # contacts, so the final value differs and the page highlights it with the operator `add`.
    contacts = param(picked, "openid_credential_verifier", "contacts")
    assert "changed" in contacts.classes
    assert contacts.attrs["data-changed-by"] == "add"
    steps = contacts.find_all("span", "step")
    assert [s.attrs["data-operator"] for s in steps if "changed-step" in s.classes] == ["add"]
    final = answer["metadata"]["openid_credential_verifier"]["contacts"]
    assert json.dumps(final, indent=2) in html.unescape(contacts.text()) or all(c in contacts.text() for c in final)
    assert "(absent)" in contacts.text(), "the leaf's value is shown as absent"
    assert ta in contacts.text(), "the superior whose operator it is is named"
    # `default` fills authorization_signed_response_alg; response_types (subset_of, already vp_token) is unchanged.
    alg = param(picked, "openid_credential_verifier", "authorization_signed_response_alg")
    assert alg.attrs["data-changed-by"] == "default"
    assert answer["metadata"]["openid_credential_verifier"]["authorization_signed_response_alg"] == "ES256"
    unchanged = param(picked, "openid_credential_verifier", "response_types")
    assert "changed" not in unchanged.classes

    # Constraints: the TA's allowed_entity_types and max_path_length, checked with verdicts.
    checks = picked.find_all("li", "check")
    assert {c.attrs["data-check"] for c in checks} >= {"max_path_length", "allowed_entity_types"}
    assert not [c for c in checks if "failed" in c.classes]
    # Trust marks: the relying party's delegated mark from the intermediate is included.
    marks = root.find_all("li", "mark")
    assert marks and all(m.attrs["data-included"] == "true" for m in marks), [m.text() for m in marks]


def test_bad_input_is_a_page_with_a_client_error(fed):
    ta = fed.id("ta")
    cases = [
        (page(fed, "javascript:alert(1)", ta), 400, "not an entity identifier"),
        (page(fed, fed.id("relying-party") + "?x=1", ta), 400, "no query"),
        (page(fed, fed.id("nobody"), ta), 404, "nobody"),
        (page(fed, fed.id("relying-party"), fed.id("intermediate")), 400, "not a Trust Anchor"),
        (page(fed, fed.id("relying-party"), fed.id("nowhere")), 404, "No trust chain"),
        (page(fed, "https://unreachable.example/leaf", ta), 400, "allow-list"),
        (page(fed, "https://x.example/" + "a" * 5000, ta), 400, "longer than"),
        (page(fed, None, None, raw_query="sub=%3Cscript%3Ealert(1)%3C%2Fscript%3E"), 400, "not an entity identifier"),
    ]
    for (r, root), status, words in cases:
        assert r.status_code == status, f"{r.url}: {r.status_code}, expected {status}"
        problem = root.find_all("p", id="problem")
        assert problem and words in problem[0].text(), f"{r.url}: {problem[0].text() if problem else r.text[:800]}"
        assert "<script>alert" not in r.text
    r, root = page(fed, None)
    assert r.status_code == 200 and root.find_all("form"), "no subject: just the form"


def test_revoked_trust_mark_is_left_out_with_its_reason(make_server):
    server = make_server("chain-revoke").start()
    sub, ta = server.id("pid-provider"), server.id("ta")
    _, root = page(server, sub, ta)
    marks = {m.find_all("code")[0].text(): m for m in root.find_all("li", "mark")}
    assert marks[PID_MARK].attrs["data-included"] == "true"
    p = server.cli("trust-mark", "revoke", "--issuer", "ta", "--type", PID_MARK, "--subject", "pid-provider",
                   "--database", str(server.database), "--entities", str(server.entities), "--base-url", server.base,
                   "--reason", "interop test", timeout=30)
    assert p.returncode == 0, p.stderr[-800:]
    # Until the server reloads (about a second), the mark is still in the subject's entity
    # configuration and the page must leave it out under rule 5 (its status is revoked); after
    # the reload it is gone from the configuration, and so from the page. A busy machine may
    # reload before the first look: then the mark must be gone and its status revoked.
    deadline = time.monotonic() + 10
    while True:
        r, root = page(server, sub, ta)
        marks = {m.find_all("code")[0].text(): m for m in root.find_all("li", "mark")}
        mark = marks.get(PID_MARK)
        if mark is None or mark.attrs["data-included"] == "false":
            break
        assert time.monotonic() < deadline, "the revoked mark is still shown as included"
        time.sleep(0.1)
    assert r.status_code == 200, "the chain itself stays valid"
    if mark is not None:
        text = mark.text()
        assert "left out" in text and "rule 5" in text and "revoked" in text, text
    else:
        ec = requests.get(server.url("pid-provider", "/.well-known/openid-federation"), timeout=10).text
        assert PID_MARK not in json.dumps(decode_jws(ec)[1]), "a revoked mark left the page but not the configuration"


# -- purpose-built federations ----------------------------------------------------------------------

def federation(make_server, label: str, edit) -> object:
    server = make_server(label)
    files = {p.stem: json.loads(p.read_text()) for p in server.entities.glob("*.json")}
    edit(files)
    for name, content in files.items():
        (server.entities / f"{name}.json").write_text(json.dumps(content, indent=2))
    return server.start()


def test_conflicting_policy_is_shown_at_the_intermediate_with_its_section(make_server):
    def edit(files):
        # The TA allows ES256 or ES384 for verifiers; the intermediate insists on RS256: one_of
        # values that do not intersect cannot be merged (sections 6.1.4.1 and 6.1.3.1.4).
        files["intermediate"]["subordinate_statement"]["metadata_policy"]["openid_credential_verifier"] = {
            "authorization_signed_response_alg": {"one_of": ["RS256"]}}
        files["relying-party"]["authority_hints"] = ["intermediate"]
    server = federation(make_server, "chain-conflict", edit)
    r, root = page(server, server.id("relying-party"), server.id("ta"))
    assert r.status_code == 422, f"chains exist but none is valid: {r.status_code}"
    [chain] = chains(root)
    assert "chosen" not in chain.classes
    error = chain.find_all("p", "policy-error")
    assert error, "the policy error is shown"
    words = error[0].text()
    assert server.id("intermediate") in words and "authorization_signed_response_alg" in words, words
    assert "§6.1.4.1" in words and "6.1.3.1.4" in words and "invalid_policy" in words, words
    failed = param(chain, "openid_credential_verifier", "authorization_signed_response_alg")
    assert "failed" in failed.classes
    levels = [a.text() for a in failed.find_all("a")]
    assert levels == [server.id("ta"), server.id("intermediate")], "each superior's operators, the TA's first"
    assert "invalid_metadata" in chain.find_all("p", "chain-error")[0].text()


def test_max_path_length_cuts_a_chain_and_the_verdict_is_shown(make_server):
    def edit(files):
        files["ta"]["subordinate_statement"]["constraints"]["max_path_length"] = 0
    server = federation(make_server, "chain-pathlen", edit)
    r, root = page(server, server.id("relying-party"), server.id("ta"))
    assert r.status_code == 200, "the direct chain stays valid"
    found = chains(root)
    assert len(found) == 2
    direct, via = found
    assert "chosen" in direct.classes and "chosen" not in via.classes
    violated = [c for c in via.find_all("li", "check") if "failed" in c.classes]
    assert len(violated) == 1 and violated[0].attrs["data-check"] == "max_path_length", [c.text() for c in violated]
    assert "§6.2.1" in violated[0].text() and "1 intermediate(s) below" in violated[0].text()
    assert server.id("ta") in violated[0].parent.parent.text(), "the verdict is at the TA's level"
    assert "max_path_length exceeded" in via.find_all("p", "chain-error")[0].text()

    # pid-provider reaches the TA only through the intermediate: no valid chain, a 422 page.
    r, root = page(server, server.id("pid-provider"), server.id("ta"))
    assert r.status_code == 422 and root.find_all("p", id="problem")


# -- headless Chromium -----------------------------------------------------------------------------

CHROMIUM = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER_BIN", "/usr/bin/chromedriver")
VIEWPORTS = {"phone": (390, 844), "desktop": (1280, 900)}


def browser(viewport: str):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                "--force-device-scale-factor=1"):
        options.add_argument(arg)
    width, height = VIEWPORTS[viewport]
    if viewport == "phone":
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2,
                                                                              "touch": False}})
    else:
        options.add_argument(f"--window-size={width},{height}")
    options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(15)
    return driver


@pytest.mark.skipif(not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)), reason="chromium or chromedriver missing")
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_chromium_finds_the_highlighted_policy_step(fed, viewport, request):
    from selenium.webdriver.common.by import By
    base = os.environ.get("TRUSTBED_ARTIFACTS")
    artifacts = Path(base) if base else Path(__file__).resolve().parent / "artifacts" / "explorer-chain"
    artifacts.mkdir(parents=True, exist_ok=True)
    driver = browser(viewport)
    try:
        # The way a person gets there: the empty form, fill in the leaf, submit.
        driver.get(f"{fed.base}/explorer/chain")
        driver.find_element(By.NAME, "sub").send_keys(fed.id("relying-party"))
        anchor = driver.find_element(By.NAME, "trust_anchor")
        assert anchor.get_attribute("value") == fed.id("ta"), "the hosted anchor is filled in"
        driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
        # A click does not wait for the navigation it starts: wait for the answer's title.
        from selenium.webdriver.support.ui import WebDriverWait
        WebDriverWait(driver, 30).until(lambda d: "Trust chains of" in d.title)
        chosen_chain = driver.find_element(By.CSS_SELECTOR, "section.chain.chosen")
        step = chosen_chain.find_element(By.CSS_SELECTOR,
                                         'div.param.changed[data-entity-type="openid_credential_verifier"][data-parameter="contacts"]')
        assert "changed by add" in step.text
        assert step.value_of_css_property("background-color") != "rgba(0, 0, 0, 0)", "the changed step is highlighted"
        rect = step.rect
        assert rect["x"] >= 0 and rect["x"] + rect["width"] <= VIEWPORTS[viewport][0] + 1, f"the step fits the {viewport} width: {rect}"
        for part in step.find_elements(By.CSS_SELECTOR, "dt, .scroll, .step"):
            r = part.rect
            assert r["x"] + r["width"] <= rect["x"] + rect["width"] + 1, f"{part.text[:40]!r} sticks out of the step at {viewport} width"
        step.location_once_scrolled_into_view  # noqa: B018 (scrolls the step into the screenshot)
        shot = artifacts / f"explorer-chain-policy-step-{viewport}.png"
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 1000
        capture = request.config.pluginmanager.get_plugin("capturemanager")
        with capture.global_and_fixture_disabled():
            print(f"\nchain page screenshot: {shot}")
    finally:
        driver.quit()
