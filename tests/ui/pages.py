"""What the browser tests read off a page: the drawn bars, the graph's nodes, panels.

Everything is read from the rendered DOM (the SVG bars and their text, the lists, the
panels), i.e. what a person sees, never from the data the page fetched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

T = TypeVar("T")
WAIT = 30.0

BARS_JS = """
return [...document.querySelectorAll('#timelines .bar')].map(b => ({
  timeline: b.dataset.timeline,
  value: b.dataset.value,
  status: b.dataset.status,
  valid_from: b.dataset.validFrom,
  valid_to: b.dataset.validTo,
  text: b.querySelector('text').textContent,
  label: b.querySelector('text').dataset.label,
}));
"""


def wait_for(driver: WebDriver, what: Callable[[WebDriver], T], timeout: float = WAIT) -> T:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: what(d))


def visible(driver: WebDriver, element_id: str) -> bool:
    return bool(
        driver.execute_script(
            "const e = document.getElementById(arguments[0]);"
            "return !!e && !e.hidden && e.offsetParent !== null;",
            element_id,
        )
    )


def text(driver: WebDriver, element_id: str) -> str:
    out: str = driver.execute_script(
        "return document.getElementById(arguments[0]).innerText;", element_id
    )
    return out


def bars(driver: WebDriver) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = driver.execute_script(BARS_JS)
    return found


def bars_settled(driver: WebDriver) -> list[dict[str, Any]]:
    """The bars once the page has drawn them (busy flag off)."""

    def ready(d: WebDriver) -> list[dict[str, Any]] | None:
        busy = d.execute_script(
            "return document.getElementById('timelines').getAttribute('aria-busy');"
        )
        drawn = bars(d)
        return drawn if busy == "false" and drawn else None

    return wait_for(driver, ready)


def graph_nodes(driver: WebDriver) -> list[str]:
    raw = driver.execute_script("return document.getElementById('graph').dataset.nodes || '';")
    if not raw:
        return []
    import json

    nodes: list[str] = json.loads(raw)
    return nodes


def url_params(driver: WebDriver) -> dict[str, str]:
    from urllib.parse import parse_qsl, urlsplit

    return dict(parse_qsl(urlsplit(driver.current_url).query))


def screenshot(driver: WebDriver, path: Path, element_id: str | None = None) -> None:
    """The whole page (or one element of it), not just what the window shows."""
    import base64

    if element_id is None:
        size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}
    else:
        clip = driver.execute_script(
            "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
            "return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height};",
            element_id,
        )
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot",
        {"format": "png", "captureBeyondViewport": True, "clip": {**clip, "scale": 1}},
    )
    path.write_bytes(base64.b64decode(shot["data"]))
