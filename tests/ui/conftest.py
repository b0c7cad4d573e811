"""Browser fixtures: a real server on loopback and Debian's Chromium, driven headless.

Without Chromium and its driver the tests skip and say how to install them; with
``SGAM_REQUIRE_BROWSER=1`` (CI) a missing browser fails the run instead. Other binaries:
``SGAM_CHROMIUM`` and ``SGAM_CHROMEDRIVER``. The browser is
started with name resolution off for everything but loopback, so a page that reached
for a CDN would visibly break: every page must work from the server alone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from api.server import running
from api.settings import Settings
from tests.ui import seed

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

SCREENS = seed.ROOT / ".sgam" / "screens"
INSTALL_HINT = (
    "install Debian's Chromium and its driver: "
    "sudo apt-get update && sudo apt-get install -y chromium chromium-driver"
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--lang=en-US",
    # Offline except for loopback: a CDN dependency shows up as a broken page.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


def _find(names: tuple[str, ...], fixed: str) -> str | None:
    if os.access(fixed, os.X_OK):
        return fixed
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def browser_paths() -> tuple[str, str] | str:
    """(chromium, chromedriver), or why they cannot be used.

    ``SGAM_CHROMIUM`` and ``SGAM_CHROMEDRIVER`` name other binaries (e.g. on a laptop
    whose Chromium lives elsewhere); a named binary that is not there counts as missing.
    """
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is missing (pip install selenium, or the dev extra)"
    named_chromium = os.environ.get("SGAM_CHROMIUM")
    named_driver = os.environ.get("SGAM_CHROMEDRIVER")
    chromium = (
        (named_chromium if os.access(named_chromium, os.X_OK) else None)
        if named_chromium
        else _find(("chromium", "chromium-browser"), "/usr/bin/chromium")
    )
    driver = (
        (named_driver if os.access(named_driver, os.X_OK) else None)
        if named_driver
        else _find(("chromedriver",), "/usr/bin/chromedriver")
    )
    if chromium is None or driver is None:
        missing = [n for n, p in (("chromium", chromium), ("chromedriver", driver)) if p is None]
        return f"{' and '.join(missing)} not found; {INSTALL_HINT}"
    return chromium, driver


@pytest.fixture(scope="session")
def browser() -> Iterator[WebDriver]:
    """One headless Chromium for the session (a fresh profile), closed at the end."""
    found = browser_paths()
    if isinstance(found, str):
        if os.environ.get("SGAM_REQUIRE_BROWSER") == "1":
            pytest.fail(f"a browser is required (SGAM_REQUIRE_BROWSER=1): {found}")
        pytest.skip(f"browser tests need Chromium: {found}")
    chromium, driver_path = found
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="sgam-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in [*FLAGS, f"--user-data-dir={profile}", "--window-size=1280,800"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sgam-ui-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def open_server(data_dir: Path) -> Iterator[str]:
    """``sgam serve`` on loopback in open mode, on a temp SQLite file, with the seed data."""
    settings = Settings(
        host="127.0.0.1",
        port=0,
        store_url=f"sqlite:///{data_dir / 'open.db'}",
        log_level="warning",
    )
    with running(settings) as url:
        seed.replay_mira(url)
        seed.seed_graph(url)
        yield url


KEYS = {"acme": "k-acme-1", "beta": "k-beta-2"}


@pytest.fixture(scope="module")
def keyed_server(data_dir: Path) -> Iterator[str]:
    """The same server with API keys configured (tenant acme and tenant beta)."""
    settings = Settings(
        host="127.0.0.1",
        port=0,
        store_url=f"sqlite:///{data_dir / 'keyed.db'}",
        api_keys=",".join(f"{t}:{k}" for t, k in KEYS.items()),
        log_level="warning",
    )
    with running(settings) as url:
        seed.replay_mira(url, key=KEYS["acme"])
        yield url


@pytest.fixture(scope="session")
def screens() -> Path:
    SCREENS.mkdir(parents=True, exist_ok=True)
    return SCREENS
