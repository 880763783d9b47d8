"""The PID Provider's HTML pages used as a person uses them (issue 7 item 15): headless Chromium
(Debian's chromium and chromium-driver, driven by selenium) with JavaScript switched off, on a
phone-sized viewport (390x844) and on a desktop one.  The offer form: pick a persona and
credentials, submit, land on the offer page, read the QR code off the screenshot with zxing-cpp
and compare it with the link the page prints.  The login page of the authorization code flow:
open /authorize with a PAR request_uri, pick a persona, submit, follow the redirect to a
callback server the test runs, and finish the flow to see that persona's PID.

Screenshots are kept in an artifacts folder (TRUSTBED_ARTIFACTS, default
Tests/interop/artifacts/chromium-<time>), whose path is printed at the end of the module."""
from __future__ import annotations

import io
import os
import re
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from walletlib import (ClientInstance, Wallet, WalletProvider, iaca_certificate, new_key, persona, personas, pkce_pair,
                       start_pid_server, verify_sd_jwt_vc)

CHROMIUM = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER_BIN", "/usr/bin/chromedriver")
SD = "urn:eudi:pid:1"
MDOC = "eu.europa.ec.eudi.pid.1"
VIEWPORTS = {"phone": (390, 844), "desktop": (1280, 900)}

if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
    pytest.skip(f"chromium ({CHROMIUM}) or chromedriver ({CHROMEDRIVER}) is not installed: "
                "apt-get install chromium chromium-driver", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed in the interop venv")
from selenium.webdriver.common.by import By  # noqa: E402


@pytest.fixture(scope="module")
def artifacts(request):
    base = os.environ.get("TRUSTBED_ARTIFACTS")
    path = Path(base) if base else Path(__file__).resolve().parent / "artifacts" / f"chromium-{time.strftime('%Y%m%d-%H%M%S')}"
    path.mkdir(parents=True, exist_ok=True)
    yield path
    # Printed past pytest's output capture, so it shows on a passing run too.
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\nchromium screenshots: {path}")


@pytest.fixture(scope="module")
def env(session_tmp):
    provider = WalletProvider(entity_id="")
    server = start_pid_server(session_tmp / f"pid-pages-{time.monotonic_ns()}", label="pid-pages", wallet_provider=provider)
    yield server, provider
    server.stop()


def browser(viewport: str, *, javascript: bool = False):
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                "--force-device-scale-factor=1"):
        options.add_argument(arg)
    width, height = VIEWPORTS[viewport]
    if viewport == "phone":
        # Headless windows are at least 500 px wide, so the phone is emulated. Touch emulation
        # stays off: with JavaScript disabled, chromedriver's clicks hang under touch emulation.
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2,
                                                                              "touch": False}})
    else:
        options.add_argument(f"--window-size={width},{height}")
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(10)
    return driver


def screenshot(driver, artifacts: Path, name: str) -> bytes:
    """A PNG of the visible viewport saved as an artifact; returns its bytes.  (A DevTools
    full-page capture resizes the page under selenium's feet, so the viewport it is.)"""
    png = driver.get_screenshot_as_png()
    (artifacts / f"{name}.png").write_bytes(png)
    return png


def no_horizontal_overflow(driver, width: int, what: str) -> None:
    """Readable on a phone: nothing wider than the viewport (a sideways-scrolling page fails)."""
    scroll_width = driver.execute_script("return document.documentElement.scrollWidth")
    assert scroll_width <= width, f"{what}: content is {scroll_width}px wide on a {width}px viewport"


def submit_and_wait(driver, timeout: float = 5, button=None, what: str = "the form submission") -> None:
    """Clicks the form's submit button (or `button`) and waits until the next document has
    replaced this one (a click returns before the navigation it starts has finished)."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait
    old_html = driver.find_element(By.TAG_NAME, "html")
    (button or driver.find_element(By.CSS_SELECTOR, 'form button[type="submit"], form input[type="submit"]')).click()

    def replaced(d):
        try:
            old_html.tag_name
            return False
        except StaleElementReferenceException:
            return d.execute_script("return document.readyState") == "complete"
        except WebDriverException:  # mid-navigation: the old node is neither alive nor stale yet
            return False

    WebDriverWait(driver, timeout, poll_frequency=0.05).until(replaced, f"{what} never loaded a new page")


def decode_qr(png: bytes) -> list[str]:
    import zxingcpp
    from PIL import Image
    return [r.text for r in zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))]


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_new_offer_form_to_offer_page(env, artifacts, viewport):
    server, _ = env
    issuer = server.id("pid-provider")
    who = [p for p in personas(server) if not p.get("deferred")][-1]
    driver = browser(viewport)
    try:
        driver.get(issuer + "/offers/new")
        assert "offer" in driver.title.lower(), driver.title
        screenshot(driver, artifacts, f"offers-new-{viewport}")
        if viewport == "phone":
            no_horizontal_overflow(driver, VIEWPORTS["phone"][0], "/offers/new")
        # Pick the persona, exactly two credentials, the pre-authorized grant with a tx_code.
        driver.find_element(By.CSS_SELECTOR, f'input[name="persona"][value="{who["id"]}"]').click()
        for box in driver.find_elements(By.CSS_SELECTOR, 'input[name="credential_configuration_id"]'):
            if box.is_selected() != (box.get_attribute("value") in (SD, MDOC)):
                box.click()
        driver.find_element(By.CSS_SELECTOR, 'input[name="grant"][value="pre-authorized_code"]').click()
        tx = driver.find_element(By.CSS_SELECTOR, 'input[name="tx_code"]')
        if not tx.is_selected():
            tx.click()
        submit_and_wait(driver)

        # Landed on /offers/{id} (303 after the POST, so a reload creates nothing).
        assert re.fullmatch(re.escape(issuer) + r"/offers/(?!new$)[A-Za-z0-9_-]+", driver.current_url), driver.current_url
        offer_id = driver.current_url.rsplit("/", 1)[1]
        link = driver.find_element(By.ID, "offer_url").text.strip()
        assert link.startswith("openid-credential-offer://?credential_offer_uri="), link
        tx_code = driver.find_element(By.ID, "tx_code").text.strip()
        assert re.fullmatch(r"[0-9]{4,8}", tx_code), f"tx_code shown: {tx_code!r}"
        body = driver.find_element(By.TAG_NAME, "body").text
        assert who["given_name"] in body and who["family_name"] in body, "the page names the persona"
        qr = driver.find_element(By.CSS_SELECTOR, "img.qr")
        assert qr.is_displayed() and qr.size["width"] >= 150, f"QR image too small: {qr.size}"
        if viewport == "phone":
            no_horizontal_overflow(driver, VIEWPORTS["phone"][0], "/offers/{id}")
            assert qr.size["width"] <= VIEWPORTS["phone"][0], qr.size
        png = qr.screenshot_as_png
        (artifacts / f"offer-qr-{viewport}.png").write_bytes(png)
        screenshot(driver, artifacts, f"offer-page-{viewport}")
        assert decode_qr(png) == [link], "the QR code on screen must encode the link the page prints"

        # The link is a working offer for exactly what was picked, redeemable with the shown tx_code.
        wallet = Wallet(issuer, use_dpop=True)
        offer = wallet.fetch_offer(link)
        assert offer["credential_configuration_ids"] == [c for c in offer["credential_configuration_ids"] if c in (SD, MDOC)]
        assert sorted(offer["credential_configuration_ids"]) == sorted([SD, MDOC])
        assert offer_id in link
        token = wallet.pre_authorized_token(offer, tx_code=tx_code)
        body, keys = wallet.credential(token["access_token"], configuration_id=SD, anonymous=True)
        checked = verify_sd_jwt_vc(body["credentials"][0]["credential"], issuer=issuer, iaca=iaca_certificate(issuer),
                                   holder_key=keys[0], vct=SD)
        assert checked["claims"]["given_name"] == who["given_name"]
    finally:
        driver.quit()


def test_new_offer_form_refusal_comes_back_as_a_page(env, artifacts):
    """No credential ticked: the form comes back (400) with the reason, as HTML, not JSON."""
    server, _ = env
    issuer = server.id("pid-provider")
    driver = browser("phone")
    try:
        driver.get(issuer + "/offers/new")
        for box in driver.find_elements(By.CSS_SELECTOR, 'input[name="credential_configuration_id"]'):
            if box.is_selected():
                box.click()
        submit_and_wait(driver)
        assert driver.current_url == issuer + "/offers/new", driver.current_url
        alert = driver.find_element(By.CSS_SELECTOR, '[role="alert"]')
        assert alert.is_displayed() and alert.text.strip(), "the reason is shown"
        screenshot(driver, artifacts, "offers-new-refused-phone")
    finally:
        driver.quit()


class Callback:
    """A wallet's redirect target on a local port: records each request's query, answers a page."""

    def __init__(self):
        self.hits: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                if urlsplit(self.path).path == "/cb":  # not /favicon.ico
                    outer.hits.append({k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()})
                page = b"<!doctype html><meta charset=utf-8><title>wallet callback</title><h1>Back in the wallet</h1>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/cb"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_login_page_pick_persona_and_follow_redirect(env, artifacts, viewport):
    server, provider = env
    issuer = server.id("pid-provider")
    who = persona(server, 2)  # not the preselected first one: the click must count
    key = new_key()
    client_id = "chromium-wallet-" + viewport
    wallet = Wallet(issuer, use_dpop=True, client=ClientInstance(client_id, key, provider.attestation(client_id, key)))
    callback = Callback()
    driver = browser(viewport)
    try:
        verifier, challenge = pkce_pair()
        r = wallet.par(redirect_uri=callback.url, code_challenge=challenge, state="browser-state",
                       authorization_details=[{"type": "openid_credential", "credential_configuration_id": SD}])
        assert r.status_code == 201, r.text
        driver.get(wallet.authorize_url(r.json()["request_uri"]))
        screenshot(driver, artifacts, f"login-{viewport}")
        if viewport == "phone":
            no_horizontal_overflow(driver, VIEWPORTS["phone"][0], "login page")
        choices = driver.find_elements(By.CSS_SELECTOR, 'form input[type="radio"]')
        assert {c.get_attribute("value") for c in choices} >= {p["id"] for p in personas(server)}, \
            "the login page lists every persona"
        next(c for c in choices if c.get_attribute("value") == who["id"]).click()
        submit_and_wait(driver)
        # The browser followed the redirect (a CSP form-action must not block it) to the wallet.
        assert callback.hits, f"the browser never reached the redirect_uri; it is at {driver.current_url}"
        assert driver.current_url.startswith(callback.url + "?"), driver.current_url
        screenshot(driver, artifacts, f"login-redirected-{viewport}")
        params = callback.hits[-1]
        assert params.get("state") == "browser-state" and params.get("iss") == issuer and params.get("code"), params
        token = wallet.token({"grant_type": "authorization_code", "code": params["code"], "redirect_uri": callback.url,
                              "code_verifier": verifier, "client_id": client_id})
        ident = token["authorization_details"][0]["credential_identifiers"][0]
        body, keys = wallet.credential(token["access_token"], identifier=ident)
        checked = verify_sd_jwt_vc(body["credentials"][0]["credential"], issuer=issuer, iaca=iaca_certificate(issuer),
                                   holder_key=keys[0], vct=SD)
        assert checked["claims"]["given_name"] == who["given_name"], "the credential is for the persona picked on the page"
    finally:
        driver.quit()
        callback.close()


def test_pages_send_security_headers_and_no_script(env):
    """What lets the pages work without JavaScript and keeps them out of frames."""
    server, _ = env
    issuer = server.id("pid-provider")
    r = requests.get(issuer + "/offers/new", timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/html"), r.status_code
    csp = r.headers.get("Content-Security-Policy", "")
    assert "frame-ancestors 'none'" in csp, csp
    assert r.headers.get("X-Content-Type-Options") == "nosniff"
    assert "<script" not in r.text.lower(), "the pages need no JavaScript"
    assert 'name="viewport"' in r.text
