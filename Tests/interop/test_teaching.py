"""docs/teaching.md's lab exercises (issue 19 item 7), run the way the page tells a student to.

The JSON snippets, commands and URLs come from docs/teaching.md itself, so the page cannot drift
from what is tested: fenced blocks tagged ```json exercise-N create|merge <file>``` are written
into a copy of the demo Entities of a real server, ```sh exercise-N...``` blocks are run (the
`trustbed` CLI with the server's folders, `rm`, `git checkout`, `git clean`, `make run`: the few
commands the page uses, interpreted here; anything else fails the test), and the URLs the page
says to open are fetched with the doc's http://127.0.0.1:8080 replaced by the server's address.
After each edit the test waits for the server's reload and checks what the page says you will
see; then it runs the undo the page gives and checks the page is back to where it started."""
from __future__ import annotations

import html
import json
import re
import shlex
import shutil
import time
from pathlib import Path

import pytest
import requests

from fedlib import PID_MARK, decode_jws, fetch_entity_configuration, verify_jws, wait_for
from harness import DEMO_ENTITIES, REPO, trustbed_binary
from test_explorer_chain import Tree, chains, chosen, param
from test_explorer_entity import mark_statuses, text_of

DOC = REPO / "docs" / "teaching.md"
DOC_BASE = "http://127.0.0.1:8080"
DOC_CLI = ".build/release/trustbed"
RELOAD = 30.0  # seconds: the reload takes about one, but debug-built pages on a busy machine take several


# -- reading docs/teaching.md ---------------------------------------------------------------------

FENCE = re.compile(r"^```(\w+)[ \t]+([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)


def doc() -> str:
    return DOC.read_text()


def blocks(tag: str) -> list[tuple[str, list[str], str]]:
    """The fenced blocks whose info string's first word after the language is `tag`: (language,
    the remaining words, body), in page order."""
    found = []
    for lang, info, body in FENCE.findall(doc()):
        words = info.split()
        if words and words[0] == tag:
            found.append((lang, words[1:], body))
    assert found, f"docs/teaching.md has no block tagged {tag!r}"
    return found


def section(number: int) -> str:
    text = doc()
    start = text.index(f"## Exercise {number}:")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def deep_merge(into: dict, snippet: dict) -> dict:
    """The page's rule for a **merge** snippet: objects member by member, other values replaced."""
    for key, value in snippet.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            deep_merge(into[key], value)
        else:
            into[key] = value
    return into


class Lab:
    """A server and the exercises' actions on it, as docs/teaching.md states them."""

    def __init__(self, server):
        self.server = server

    def id(self, name: str) -> str:
        return self.server.id(name)

    def url(self, number: int, *parts: str) -> str:
        """The one URL in exercise `number`'s section containing every part, on this server."""
        urls = sorted(set(re.findall(r"<(" + re.escape(DOC_BASE) + r"/[^>\s]*)>", section(number))))
        matches = [u for u in urls if all(p in u for p in parts)]
        assert len(matches) == 1, f"exercise {number}: expected one URL with {parts} in docs/teaching.md, found {matches}"
        return matches[0].replace(DOC_BASE, self.server.base)

    def says(self, number: int, phrase: str, page_text: str) -> None:
        """A phrase the page promises the student, found both in the doc and on the page."""
        flat = lambda t: " ".join(t.split())  # noqa: E731 (the doc's lines wrap anywhere)
        assert flat(phrase) in flat(section(number)), f"docs/teaching.md exercise {number} no longer says {phrase!r}"
        assert flat(phrase) in flat(page_text), f"exercise {number}: the page does not show {phrase!r}: {page_text[:1500]}"

    def apply(self, tag: str) -> None:
        for lang, words, body in blocks(tag):
            assert lang == "json" and len(words) == 2 and words[0] in ("create", "merge"), (tag, lang, words)
            action, path = words
            target = self.server.dir / path
            snippet = json.loads(body)
            if action == "create":
                assert not target.exists(), f"{path} exists already"
                target.write_text(json.dumps(snippet, indent=2))
            else:
                target.write_text(json.dumps(deep_merge(json.loads(target.read_text()), snippet), indent=2))

    def run(self, tag: str, **substitutions: str) -> list[str]:
        """Runs the lines of the sh block tagged `tag`; returns the CLI's outputs."""
        [(lang, _, body)] = blocks(tag)
        assert lang == "sh", (tag, lang)
        outputs = []
        for line in body.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            for name, value in substitutions.items():
                line = line.replace(name, value)
            argv = shlex.split(line)
            outputs.append(self.command(argv, line))
        return outputs

    def command(self, argv: list[str], line: str) -> str:
        s = self.server
        if argv[0] == DOC_CLI:
            # `make run`'s folders are the CLI's defaults, relative to where it runs; the base URL
            # is the test server's instead of :8080.
            p = s.cli(*argv[1:], "--base-url", s.base, timeout=60)
            assert p.returncode == 0, f"`{line}` exited {p.returncode}: {p.stderr[-1500:]}"
            return p.stdout
        if argv[:3] == ["git", "checkout", "--"]:
            for path in argv[3:]:
                assert path.startswith("Entities"), line
                source = DEMO_ENTITIES / Path(path).relative_to("Entities")
                if source.is_dir():
                    for f in source.glob("*.json"):
                        shutil.copy(f, s.entities / f.name)
                else:
                    shutil.copy(source, s.dir / path)
            return ""
        if argv[0] == "rm":
            force = "-f" in argv[1:]
            for path in [a for a in argv[1:] if not a.startswith("-")]:
                if path.startswith("trustbed.sqlite"):
                    s.stop()  # the page says to stop `make run` first
                target = s.dir / path
                assert force or target.exists(), f"`{line}`: {path} does not exist"
                target.unlink(missing_ok=True)
            return ""
        if argv == ["git", "clean", "-fdXq", "Keys"]:
            assert not s.alive(), "the page stops the server before removing its keys"
            for child in s.keys.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
            return ""
        if argv == ["make", "run"]:
            s.start()
            return ""
        raise AssertionError(f"docs/teaching.md uses a command this test does not know: {line!r}")


@pytest.fixture
def lab(make_server):
    return Lab(make_server("teaching").start())


# -- the pages ------------------------------------------------------------------------------------

def get(url: str) -> requests.Response:
    r = requests.get(url, timeout=60)
    assert r.status_code < 500, f"{url}: {r.status_code} {r.text[:500]}"
    return r


def chain_page(url: str):
    r = get(url)
    assert r.headers.get("Content-Type", "").startswith("text/html"), r.headers
    return r, Tree(r.text).root


def jwks_kids(markup: str) -> list[str]:
    part = markup[markup.index("<h2>Keys (jwks)</h2>"):]
    part = part[:part.index("</table>")]
    return re.findall(r"<tr><td><code>([^<]+)</code>", part)


def historical_rows(markup: str) -> list[list[str]]:
    rows = re.findall(r'<tr class="historical-key">(.*?)</tr>', markup, flags=re.S)
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td>(.*?)</td>", r, flags=re.S)] for r in rows]


def marks_on(root) -> dict:
    return {m.find_all("code")[0].text(): m for m in root.find_all("li", "mark")}


# -- the exercises --------------------------------------------------------------------------------

def test_exercise_1_add_an_intermediate_and_watch_the_tree(lab):
    ta_page = lab.url(1, "/explorer/entity?id=", "/ta")
    inter_href = f'href="/explorer/entity?id={lab.id("lab-intermediate")}"'
    assert inter_href not in get(ta_page).text
    lab.apply("exercise-1")

    def listed():
        markup = get(ta_page).text
        return inter_href in markup, text_of(markup)[-800:]
    wait_for(listed, "lab-intermediate in the TA's subordinates", timeout=RELOAD)
    markup = get(ta_page).text
    assert f'/explorer/statement?iss={lab.id("ta")}&amp;sub={lab.id("lab-intermediate")}' in markup, \
        "the subordinate statement the TA issues about it is linked"

    # The tree (the landing helper's page): the TA opens to lab-intermediate, "1 subordinate ›".
    r = get(lab.url(1, "/explorer/tree?id="))
    if r.status_code == 404 and not r.headers.get("Content-Type", "").startswith("text/html"):
        print("\n/explorer/tree is not on this build: the tree part of exercise 1 is not checked")
    else:
        assert r.status_code == 200, r.text[:800]
        root = Tree(r.text).root
        opens = [a for a in root.find_all("a", "open") if "lab-intermediate" in a.attrs.get("href", "")]
        assert len(opens) == 1, "the TA's tree opens to lab-intermediate"
        lab.says(1, "1 subordinate ›", opens[0].text())
        assert any("/intermediate" in a.attrs.get("href", "") for a in root.find_all("a", "open")), "next to intermediate"
        deeper = get(lab.server.base + html.unescape(opens[0].attrs["href"]))
        assert deeper.status_code == 200 and lab.id("lab-leaf") in deeper.text, "lab-intermediate opens to lab-leaf"

    # lab-intermediate lists lab-leaf and, being a superior now, advertises fetch and list.
    inter = get(lab.url(1, "/explorer/entity?id=", "lab-intermediate")).text
    assert f'href="/explorer/entity?id={lab.id("lab-leaf")}"' in inter
    _, _, claims = fetch_entity_configuration(lab.server.local(lab.id("lab-intermediate")))
    fe = claims["metadata"]["federation_entity"]
    assert "federation_fetch_endpoint" in fe and "federation_list_endpoint" in fe, fe
    for endpoint in ("federation_fetch_endpoint", "federation_list_endpoint"):
        assert endpoint in section(1)

    # The chain lab-leaf → lab-intermediate → ta, with the TA's policy on federation_entity.
    r, root = chain_page(lab.url(1, "/explorer/chain?", "lab-leaf"))
    assert r.status_code == 200, text_of(r.text)[:1500]
    [only] = chains(root)
    # Four statements: lab-leaf's configuration, the two subordinate statements, the TA's configuration.
    assert "chosen" in only.classes and len(only.find_all("details", "statement")) == 4
    assert param(only, "federation_entity", "contacts").attrs["data-changed-by"] == "add"
    assert param(only, "federation_entity", "policy_uri").attrs["data-changed-by"] == "default"

    lab.run("exercise-1-undo")
    wait_for(lambda: (inter_href not in get(ta_page).text, "still listed"), "lab-intermediate gone after the undo", timeout=RELOAD)


def test_exercise_2_a_conflicting_policy_fails_the_chain_through_the_intermediate(lab):
    url = lab.url(2, "/explorer/chain?", "relying-party")
    _, root = chain_page(url)
    assert not root.find_all("p", "policy-error")
    lab.apply("exercise-2")

    def failed():
        _, root = chain_page(url)
        return bool(root.find_all("p", "policy-error")), len(chains(root))
    wait_for(failed, "the policy error on the chain page", timeout=RELOAD)
    r, root = chain_page(url)
    assert r.status_code == 200, "the direct chain is still valid"
    found = chains(root)
    assert len(found) == 2
    picked = chosen(root)
    assert len(picked.find_all("details", "statement")) == 3, "resolve picks relying-party → ta"
    [bad] = [c for c in found if c is not picked]
    words = bad.find_all("p", "policy-error")[0].text()
    assert lab.id("intermediate") in words and "openid_credential_verifier" in words, words
    for phrase in ("Merging policies failed", "authorization_signed_response_alg", "invalid_policy", "§6.1.4.1, 6.1.3.1.4"):
        lab.says(2, phrase, words)
    step = param(bad, "openid_credential_verifier", "authorization_signed_response_alg")
    assert "failed" in step.classes
    assert [a.text() for a in step.find_all("a")] == [lab.id("ta"), lab.id("intermediate")], "each superior's operators, the TA's first"
    # The resolve endpoint agrees: it answers with the direct chain.
    resolved = get(f"{lab.server.base}/ta/resolve?sub={lab.id('relying-party')}&trust_anchor={lab.id('ta')}")
    assert resolved.status_code == 200
    _, claims = decode_jws(resolved.text, "resolve response")
    assert len(claims["trust_chain"]) == 3

    lab.run("exercise-2-undo")
    wait_for(lambda: (not chain_page(url)[1].find_all("p", "policy-error"), "error still shown"), "the undo", timeout=RELOAD)


def test_exercise_3_narrowing_subset_of_changes_a_value(lab):
    url = lab.url(3, "/explorer/chain?", "pid-provider")
    _, root = chain_page(url)
    assert "changed" not in param(chosen(root), "oauth_authorization_server", "grant_types_supported").classes, \
        "before the edit the parameter is not highlighted"
    lab.apply("exercise-3")

    def changed():
        _, root = chain_page(url)
        step = param(chosen(root), "oauth_authorization_server", "grant_types_supported")
        return "changed" in step.classes, step.text()[:300]
    wait_for(changed, "grant_types_supported highlighted", timeout=RELOAD)
    _, root = chain_page(url)
    step = param(chosen(root), "oauth_authorization_server", "grant_types_supported")
    assert step.attrs["data-changed-by"] == "subset_of"
    text = html.unescape(step.text())
    lab.says(3, "changed by subset_of", text)
    assert "urn:ietf:params:oauth:grant-type:pre-authorized_code" in text, "the subject's value shows both grants"
    lab.says(3, '["authorization_code"]', step.find_all("span", "step", data_operator="subset_of")[0].text())
    final = [v for v in step.find_all("pre")][-1].text()
    assert json.loads(html.unescape(final)) == ["authorization_code"], final
    assert [a.text() for a in step.find_all("a")] == [lab.id("ta"), lab.id("intermediate")]
    # The TA's resolve answers the same value; the PID Provider's own configuration is unchanged.
    r = get(f"{lab.server.base}/ta/resolve?sub={lab.id('pid-provider')}&trust_anchor={lab.id('ta')}")
    _, _, ta_claims = fetch_entity_configuration(lab.id("ta"))
    _, claims = verify_jws(r.text, ta_claims["jwks"], "resolve response")
    assert claims["metadata"]["oauth_authorization_server"]["grant_types_supported"] == ["authorization_code"]
    _, _, own = fetch_entity_configuration(lab.id("pid-provider"))
    assert len(own["metadata"]["oauth_authorization_server"]["grant_types_supported"]) == 2

    lab.run("exercise-3-undo")

    def back():
        _, root = chain_page(url)
        return "changed" not in param(chosen(root), "oauth_authorization_server", "grant_types_supported").classes, None
    wait_for(back, "the undo", timeout=RELOAD)


def test_exercise_4_max_path_length_cuts_a_chain(lab):
    rp_url = lab.url(4, "/explorer/chain?", "relying-party")
    pid_url = lab.url(4, "/explorer/chain?", "pid-provider")
    assert chain_page(pid_url)[0].status_code == 200
    lab.apply("exercise-4")
    wait_for(lambda: (chain_page(pid_url)[0].status_code == 422, "pid-provider still has a chain"),
             "the PID Provider's chain cut", timeout=RELOAD)
    r, root = chain_page(pid_url)
    assert root.find_all("p", id="problem"), "a page that says there is no valid chain"

    r, root = chain_page(rp_url)
    assert r.status_code == 200
    direct, via = chains(root)
    assert "chosen" in direct.classes and "chosen" not in via.classes
    violated = [c for c in via.find_all("li", "check") if "failed" in c.classes]
    assert [c.attrs["data-check"] for c in violated] == ["max_path_length"], [c.text() for c in violated]
    for phrase in ("§6.2.1", "1 intermediate(s) below"):
        lab.says(4, phrase, violated[0].text())
    assert lab.id("ta") in violated[0].parent.parent.text(), "the verdict is at the TA's level"
    lab.says(4, "max_path_length exceeded", via.find_all("p", "chain-error")[0].text())

    lab.run("exercise-4-undo")
    wait_for(lambda: (chain_page(pid_url)[0].status_code == 200, "still cut"), "the undo", timeout=RELOAD)


def test_exercise_5_a_revoked_trust_mark_leaves_the_chain_page(lab):
    chain_url = lab.url(5, "/explorer/chain?", "pid-provider")
    entity_url = lab.url(5, "/explorer/entity?id=", "pid-provider")
    _, root = chain_page(chain_url)
    mark = marks_on(root)[PID_MARK]
    assert mark.attrs["data-included"] == "true"
    lab.says(5, "passes all five rules", mark.text())
    assert mark_statuses(get(entity_url).text) == ["active"]
    _, _, pid = fetch_entity_configuration(lab.id("pid-provider"))
    token = next(m["trust_mark"] for m in pid["trust_marks"] if m["trust_mark_type"] == PID_MARK)

    lab.run("exercise-5")

    def gone():
        _, root = chain_page(chain_url)
        return PID_MARK not in marks_on(root), {k: v.text() for k, v in marks_on(root).items()}
    wait_for(gone, "the revoked mark gone from the chain page", timeout=RELOAD)
    r, root = chain_page(chain_url)
    assert r.status_code == 200 and "chosen" in chosen(root).classes, "the chain itself stays valid"
    markup = get(entity_url).text
    assert mark_statuses(markup) == ["revoked"]
    text = text_of(markup)
    for phrase in ("lab exercise 5", "no longer in the entity configuration"):
        lab.says(5, phrase, text)
    # Rule 5's source: the TA's status endpoint (section 8.4) says `revoked` for the mark handed out before.
    status = requests.post(lab.server.url("ta", "/trust-mark-status"), data={"trust_mark": token}, timeout=30)
    _, _, ta_claims = fetch_entity_configuration(lab.id("ta"))
    _, claims = verify_jws(status.text.strip(), ta_claims["jwks"], "trust mark status", typ="trust-mark-status-response+jwt")
    assert claims["status"] == "revoked"

    # Starting over: fresh state, the mark is back.
    lab.run("reset")
    _, root = chain_page(chain_url)
    assert marks_on(root)[PID_MARK].attrs["data-included"] == "true"


def test_exercise_6_rotate_and_revoke_a_key(lab):
    url = lab.url(6, "/explorer/entity?id=", "wallet-provider")
    _, header, _ = fetch_entity_configuration(lab.id("wallet-provider"))
    old = header["kid"]
    assert jwks_kids(get(url).text) == [old]

    [out] = lab.run("exercise-6-rotate")
    printed = re.search(r"new key (\S+), previous key (\S+)", out)
    assert printed and printed.group(2) == old, f"the command prints the new and the previous key: {out!r}"
    new = printed.group(1)

    def rotated():
        markup = get(url).text
        return sorted(jwks_kids(markup)) == sorted([old, new]), jwks_kids(markup)
    wait_for(rotated, "both keys in jwks", timeout=RELOAD)
    markup = get(url).text
    assert f"key {new}" in text_of(markup), "the configuration's signature verifies with the new key"
    rows = historical_rows(markup)
    assert [r[0] for r in rows] == [old] and rows[0][2] and not rows[0][3], rows  # kid, kty, exp, revoked, reason

    lab.run("exercise-6-revoke", OLD_KID=old)

    def revoked():
        markup = get(url).text
        return old not in jwks_kids(markup), jwks_kids(markup)
    wait_for(revoked, "the revoked key out of jwks", timeout=RELOAD)
    [row] = historical_rows(get(url).text)
    assert row[0] == old and row[3], row
    lab.says(6, row[4], row[4])
    assert row[4] == "compromised"
    # The chain still verifies: the intermediate's statement carries the new jwks.
    r, root = chain_page(lab.url(6, "/explorer/chain?", "wallet-provider"))
    assert r.status_code == 200 and chosen(root)
    statement = get(f"{lab.server.base}/intermediate/fetch?sub={lab.id('wallet-provider')}").text
    _, claims = decode_jws(statement, "subordinate statement")
    assert [k["kid"] for k in claims["jwks"]["keys"]] == [new]

    lab.run("reset")
    assert historical_rows(get(url).text) == [], "fresh keys after starting over"
