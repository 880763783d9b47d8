"""The verifier's pages (issue 22, item 3) used as a person uses them: headless Chromium (selenium,
JavaScript off) fills in `/verify/new`, lands on the request's page, the QR code is read back off
the screen with zxing-cpp and must be the `openid4vp://` link the page prints; the independent
Python wallet of test_verifier.py answers that link, and the page, refreshing by itself (no
JavaScript), shows the verdict and the disclosed claims."""
from __future__ import annotations

import re
import time

import pytest
import requests

from fedlib import describe
from test_pages_chromium import artifacts, browser, decode_qr, no_horizontal_overflow, screenshot, submit_and_wait  # noqa: F401
from test_verifier import fetch_request_object, obtain_pid, post_response, present, rp
from walletlib import start_pid_server

from selenium.webdriver.common.by import By  # noqa: E402  (test_pages_chromium skipped the module without selenium)
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def vp(session_tmp):
    server = start_pid_server(session_tmp / f"verifier-pages-{time.monotonic_ns()}", label="verifier-pages")
    yield server
    server.stop()


def fill_and_submit(driver, server, *, template: str, prefix: str, mode: str, same_device: bool = False, dcql: str | None = None):
    driver.get(rp(server) + "/verify/new")
    assert "presentation request" in driver.title.lower(), driver.title
    driver.find_element(By.CSS_SELECTOR, f'input[name="template"][value="{template}"]').click()
    if dcql is not None:
        driver.find_element(By.ID, "dcql").send_keys(dcql)
    driver.find_element(By.CSS_SELECTOR, f'input[name="client_id_prefix"][value="{prefix}"]').click()
    driver.find_element(By.CSS_SELECTOR, f'input[name="response_mode"][value="{mode}"]').click()
    if same_device:
        driver.find_element(By.CSS_SELECTOR, 'input[name="same_device"]').click()
    submit_and_wait(driver)


def between_refreshes(driver, read, attempts: int = 10):
    """Runs `read` against the page as it is. A pending request's page reloads itself every three
    seconds, so a read that straddles a reload finds its element gone (stale, or not there yet in
    the next document): it is read again from the new page, which shows the same request."""
    from selenium.common.exceptions import WebDriverException
    for attempt in range(attempts):
        try:
            return read(driver)
        except WebDriverException:
            if attempt == attempts - 1:
                raise
            time.sleep(0.2)


def state(driver) -> str:
    return between_refreshes(driver, lambda d: d.find_element(By.ID, "state").get_attribute("data-state"))


@pytest.mark.parametrize("viewport,prefix,mode", [("phone", "x509_hash", "direct_post.jwt"), ("desktop", "openid_federation", "direct_post")])
def test_verify_new_qr_to_verified_result(vp, artifacts, viewport, prefix, mode):  # noqa: F811
    credential, holder, _ = obtain_pid(vp)
    driver = browser(viewport)
    try:
        fill_and_submit(driver, vp, template="name_and_birth_date", prefix=prefix, mode=mode)
        assert re.fullmatch(re.escape(rp(vp)) + r"/verify/(?!new$)[A-Za-z0-9_-]+", driver.current_url), driver.current_url
        assert state(driver) == "pending"

        def pending_page(d):
            link = d.find_element(By.ID, "request_link").text.strip()
            qr = d.find_element(By.CSS_SELECTOR, "img.qr")
            return link, qr.is_displayed(), qr.size, qr.screenshot_as_png

        link, shown, size, png = between_refreshes(driver, pending_page)
        assert link.startswith("openid4vp://?client_id=" + prefix + "%3A"), link
        assert shown and size["width"] >= 150, size
        (artifacts / f"verify-qr-{viewport}.png").write_bytes(png)
        between_refreshes(driver, lambda d: screenshot(d, artifacts, f"verify-pending-{viewport}"))
        assert decode_qr(png) == [link], "the QR code on screen must encode the link the page prints"
        if viewport == "phone":
            between_refreshes(driver, lambda d: no_horizontal_overflow(d, d.execute_script("return window.innerWidth"), "/verify/{id}"))

        # The wallet answers the scanned link; the page refreshes on its own until the verdict shows.
        request_id = driver.current_url.rsplit("/", 1)[1]
        created = {"request_link": link, "request_uri": rp(vp) + "/request/" + request_id}
        _, claims, client_id = fetch_request_object(vp, created)
        token = present(credential, holder, names={"given_name", "family_name", "birthdate"}, aud=client_id, nonce=claims["nonce"])
        r = post_response(vp, claims, {"pid": [token]})
        assert r.status_code == 200, describe(r)
        WebDriverWait(driver, 15, poll_frequency=0.2).until(lambda d: state(d) != "pending", "the page never showed the answer")
        assert state(driver) == "verified"
        checks = driver.find_elements(By.CSS_SELECTOR, "#checks li.check")
        assert len(checks) >= 7 and all("✓" in c.text for c in checks), [c.text for c in checks]
        assert "family_name" in driver.find_element(By.ID, "claims-pid").text
        screenshot(driver, artifacts, f"verify-verified-{viewport}")
    finally:
        driver.quit()


def test_same_device_redirect_lands_on_the_result_page(vp, artifacts):  # noqa: F811
    credential, holder, _ = obtain_pid(vp)
    driver = browser("desktop")
    try:
        fill_and_submit(driver, vp, template="age_over_18", prefix="x509_san_dns", mode="direct_post", same_device=True)
        page = driver.current_url
        link = driver.find_element(By.ID, "request_link").text.strip()
        request_id = page.rsplit("/", 1)[1]
        _, claims, client_id = fetch_request_object(vp, {"request_link": link, "request_uri": rp(vp) + "/request/" + request_id})
        r = post_response(vp, claims, {"pid": [present(credential, holder, names={"age_equal_or_over", "18"}, aud=client_id,
                                                      nonce=claims["nonce"])]})
        assert r.status_code == 200, describe(r)
        redirect = r.json()["redirect_uri"]
        assert redirect.startswith(page + "#response_code="), redirect
        driver.get("about:blank")       # the wallet opens it afresh (a fragment change alone would not reload)
        driver.get(redirect)
        assert state(driver) == "verified"
    finally:
        driver.quit()


def test_bad_dcql_comes_back_as_the_form_with_the_reason(vp, artifacts):  # noqa: F811
    driver = browser("desktop")
    try:
        fill_and_submit(driver, vp, template="custom", prefix="x509_hash", mode="direct_post", dcql='{"credentials": [{"id": "a b"}]}')
        assert driver.current_url.endswith("/verify/new")
        error = driver.find_element(By.CSS_SELECTOR, "p.error").text
        assert "DCQL" in error and "id" in error, error
        assert '"a b"' in driver.find_element(By.ID, "dcql").get_attribute("value")
        screenshot(driver, artifacts, "verify-new-refused")
    finally:
        driver.quit()


def test_result_page_refresh_header_and_guards(vp):
    r = requests.post(rp(vp) + "/admin/presentation-requests", json={"template": "full_pid"},
                      headers={"Authorization": f"Bearer {vp.admin_token}"}, timeout=10)
    page = rp(vp) + "/verify/" + r.json()["id"]
    r = requests.get(page, timeout=10)
    assert r.status_code == 200 and r.headers.get("Refresh") == "3", r.headers
    assert "<script" not in r.text and 'http-equiv="refresh"' in r.text
    assert requests.get(rp(vp) + "/verify/unknown", timeout=10).status_code == 404
    # DNS rebinding and cross-site posts are refused, as on the offer pages.
    port = vp.base.rsplit(":", 1)[1]
    assert requests.get(rp(vp) + "/verify/new", headers={"Host": f"evil.example:{port}"}, timeout=10).status_code == 403
    r = requests.post(rp(vp) + "/verify/new", data={"template": "full_pid"}, headers={"Origin": "http://evil.example"}, timeout=10)
    assert r.status_code == 403, describe(r)
