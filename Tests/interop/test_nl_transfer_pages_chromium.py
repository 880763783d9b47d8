"""The open device transfer sessions on `<wp>/instances` (issue 21, item 8) used as a person uses
them: headless Chromium (selenium, JavaScript off, as in test_pages_chromium.py) sees a paired
session with its state, presses its Cancel button, and the session is gone from the page, the
source account active again and the session `cancelled` for both phones."""
from __future__ import annotations

import time

import pytest

from nlwallet import error_of
from test_nl_transfer import APP, Pair
from test_pages_chromium import artifacts, browser, no_horizontal_overflow, screenshot, submit_and_wait  # noqa: F401 (fixture)
from walletlib import start_pid_server

from selenium.webdriver.common.by import By  # noqa: E402  (test_pages_chromium skipped the module without selenium)


@pytest.fixture(scope="module")
def server(session_tmp):
    s = start_pid_server(session_tmp / f"nl-transfer-pages-{time.monotonic_ns()}", label="nl-transfer-pages")
    yield s
    s.stop()


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_press_cancel_on_an_open_transfer(server, artifacts, viewport):  # noqa: F811
    pair = Pair(server, 0 if viewport == "phone" else 1)
    pair.source.run("confirm_transfer_session", pair.params(app_version=APP))
    driver = browser(viewport)
    try:
        driver.get(server.url("wallet-provider", "/instances"))
        section = driver.find_element(By.ID, f"transfer-{pair.session}")
        assert section.find_element(By.CSS_SELECTOR, ".transfer-state").text.strip() == "ready_for_transfer"
        no_horizontal_overflow(driver, driver.execute_script("return window.innerWidth"), "instances page with transfers")
        screenshot(driver, artifacts, f"wp-transfers-before-{viewport}")

        submit_and_wait(driver, button=section.find_element(By.CSS_SELECTOR, 'button[type="submit"]'), what="the cancel")
        assert driver.find_element(By.CSS_SELECTOR, '[role="status"]').text == f"Cancelled transfer session {pair.session}."
        assert not driver.find_elements(By.ID, f"transfer-{pair.session}"), "a cancelled session is no longer open"
        screenshot(driver, artifacts, f"wp-transfers-after-{viewport}")
    finally:
        driver.quit()
    assert pair.account(pair.source)["state"] == "active"
    assert pair.source.run("check_transfer_status", pair.params()) == {"state": "cancelled"}
    assert pair.destination.run("receive_payload", pair.params()) == {"state": "cancelled"}
    error_of(pair.destination.instruct("complete_transfer", pair.params()), 409, "invalid_transfer_state")
    ended = pair.account(pair.destination)["transfer_sessions"][0]
    assert ended["state"] == "cancelled" and ended["ended_by"] == "admin"
