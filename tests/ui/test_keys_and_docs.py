"""API keys in the explorer, the API's not-found for a foreign tenant, and /docs offline."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import pytest

from tests.ui.conftest import KEYS
from tests.ui.pages import bars, bars_settled, text, visible, wait_for

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = pytest.mark.browser


def _submit_key(browser: WebDriver, key: str) -> None:
    from selenium.webdriver.common.keys import Keys

    field = browser.find_element("id", "key-input")
    field.clear()
    field.send_keys(key, Keys.ENTER)


def test_keys_are_asked_for_kept_in_the_tab_and_never_in_the_address(
    keyed_server: str, browser: WebDriver
) -> None:
    page = f"{keyed_server}/ui/tenants/acme/entities/mira?as_of=2026-06-02T00:00:00Z"
    browser.get(page)
    wait_for(browser, lambda d: visible(d, "key-prompt"))
    assert "an API key is required" in text(browser, "key-reason")
    assert not visible(browser, "workspace")
    assert browser.find_element("id", "key-input").get_attribute("type") == "password"

    _submit_key(browser, "not-a-key")
    wait_for(browser, lambda d: "unknown API key" in text(d, "key-reason"))
    assert browser.execute_script("return sessionStorage.getItem('sgam.apiKey');") is None

    _submit_key(browser, KEYS["acme"])
    drawn = bars_settled(browser)
    assert [(b["value"], b["status"]) for b in drawn] == [
        ("2026-08-01", "superseded"),
        ("2026-07-15", "current"),
        ("2026-06-30", "upcoming"),
    ]
    assert visible(browser, "key-status")
    assert browser.execute_script("return sessionStorage.getItem('sgam.apiKey');") == KEYS["acme"]
    # The key is in no address: not the page's, not any request the page made.
    assert browser.current_url == page
    requested = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name);"
    )
    assert any("/facts/history" in u for u in requested)
    assert not [u for u in requested if KEYS["acme"] in u]

    # Another tenant's page answers exactly what the API answers that key: not found.
    foreign = f"{keyed_server}/ui/tenants/beta/entities/mira"
    browser.get(foreign)
    wait_for(browser, lambda d: visible(d, "problem"))
    api = httpx.get(
        f"{keyed_server}/v1/tenants/beta/entities/mira",
        headers={"Authorization": f"Bearer {KEYS['acme']}"},
    )
    assert api.status_code == 404
    assert text(browser, "problem-title") == api.json()["title"]
    assert text(browser, "problem-detail") == api.json()["detail"]
    assert text(browser, "problem-status") == "404:"
    assert not bars(browser)

    # Forgetting the key asks again.
    browser.get(page)
    bars_settled(browser)
    browser.find_element("id", "forget-key").click()
    wait_for(browser, lambda d: visible(d, "key-prompt"))
    assert browser.execute_script("return sessionStorage.getItem('sgam.apiKey');") is None


def test_open_mode_needs_no_key(open_server: str, browser: WebDriver) -> None:
    browser.get(f"{open_server}/ui/tenants/acme")
    wait_for(browser, lambda d: visible(d, "search"))
    assert not visible(browser, "key-prompt")
    assert not visible(browser, "key-status")
    assert text(browser, "home-title") == "Tenant acme"


def test_docs_render_offline_from_the_package(open_server: str, browser: WebDriver) -> None:
    # The browser resolves no name but loopback (see conftest): a CDN would fail here.
    browser.get(f"{open_server}/docs")
    title = wait_for(
        browser,
        lambda d: d.execute_script(
            "const t = document.querySelector('.swagger-ui .info .title');"
            "return t ? t.textContent : null;"
        ),
    )
    assert title.startswith("sgam")
    paths = wait_for(
        browser,
        lambda d: (
            d.execute_script(
                "return [...document.querySelectorAll('.opblock-summary-path')]"
                ".map(e => e.textContent);"
            )
            or None
        ),
    )
    assert "/v1/tenants/{tenant}/facts/history" in [p.replace("\u200b", "") for p in paths]
    assets = browser.execute_script(
        "return [...document.scripts].map(s => s.src).filter(Boolean)"
        ".concat([...document.querySelectorAll('link[href]')].map(l => l.href));"
    )
    assert assets
    assert all(a.startswith(open_server + "/ui/static/vendor/swagger-ui/") for a in assets), assets
