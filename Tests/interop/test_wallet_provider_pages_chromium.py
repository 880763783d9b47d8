"""The Wallet Provider's instances page (issue 20, item 8) used as a person uses it: headless
Chromium (selenium, JavaScript off, as in test_pages_chromium.py) opens `<wp>/instances` on the
loopback base URL, presses an instance's Revoke button, and sees its new state; the server then
refuses that instance's hardware key (403 invalid_request)."""
from __future__ import annotations

import time

import pytest

from harness import TrustbedServer
from test_pages_chromium import artifacts, browser, no_horizontal_overflow, screenshot, submit_and_wait  # noqa: F401 (fixture)
from test_wallet_provider import Instance, assert_error, token, wp

from selenium.webdriver.common.by import By  # noqa: E402  (test_pages_chromium skipped the module without selenium)


@pytest.fixture(scope="module")
def wp_server(trustbed_bin, session_tmp):
    server = TrustbedServer(session_tmp / f"wp-pages-{time.monotonic_ns()}", label="wp-pages").start()
    yield server
    server.stop()


def state_of(driver, tag: str) -> str:
    return driver.find_element(By.ID, f"instance-{tag}").find_element(By.CSS_SELECTOR, ".state").text.strip()


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_press_revoke_and_the_state_changes(wp_server, artifacts, viewport):  # noqa: F811
    tag = f"tag-chromium-{viewport}"
    instance = Instance(wp_server, tag)
    assert token(wp_server, instance.request()[0]).status_code == 200  # operational now
    other = Instance(wp_server, tag + "-other")
    driver = browser(viewport)
    try:
        driver.get(wp(wp_server) + "/instances")
        assert state_of(driver, tag) == "operational"
        assert state_of(driver, other.tag) == "installed"
        no_horizontal_overflow(driver, driver.execute_script("return window.innerWidth"), "instances page")
        screenshot(driver, artifacts, f"wp-instances-before-{viewport}")

        section = driver.find_element(By.ID, f"instance-{tag}")
        section.find_element(By.NAME, "reason").send_keys("lost phone")
        submit_and_wait(driver, button=section.find_element(By.CSS_SELECTOR, 'button[type="submit"]'), what="the revoke")

        assert driver.find_element(By.CSS_SELECTOR, '[role="status"]').text.startswith(f"Revoked {tag}")
        assert state_of(driver, tag) == "installed"
        revoked = driver.find_element(By.ID, f"instance-{tag}")
        assert revoked.find_element(By.CSS_SELECTOR, ".reason").text == "lost phone"
        assert revoked.find_element(By.CSS_SELECTOR, ".key").text == "revoked"
        assert not revoked.find_elements(By.CSS_SELECTOR, "form"), "a revoked key has no button any more"
        assert state_of(driver, other.tag) == "installed", "only the pressed instance changed"
        assert driver.find_element(By.ID, f"instance-{other.tag}").find_elements(By.CSS_SELECTOR, "form")
        screenshot(driver, artifacts, f"wp-instances-after-{viewport}")
    finally:
        driver.quit()
    assert_error(token(wp_server, instance.request()[0]), 403, "invalid_request")
