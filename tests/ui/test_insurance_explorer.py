"""The explorer on the insurance example (examples/insurance), as a user would load it.

The example's schema goes in with ``sgam schema put`` and the tour's lines with
``sgam import`` over HTTP, into a server of its own; the pages are then opened in the
headless Chromium and what they draw is compared with what the API answers and with the
example README's tour (Ada's move, the policies covering her accounts on a date).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from api.cli import main as cli
from api.server import running
from api.settings import Settings
from tests.ui import seed
from tests.ui.pages import bars_settled, graph_nodes, screenshot, wait_for

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = pytest.mark.browser

EXAMPLE = seed.ROOT / "examples" / "insurance"
TENANT = "insurance"
ADA = f"/ui/tenants/{TENANT}/entities/cust-ada"
MARCHMONT = "7 Marchmont Road, Edinburgh EH9 1HX"
HARBOUR = "14 Harbour Street, Leith, Edinburgh EH6 6QN"


def _tour_lines() -> list[dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("insurance_load_ui", EXAMPLE / "load.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    lines: list[dict[str, Any]] = mod.tour_lines(mod.read_lines())
    return lines


@pytest.fixture(scope="module")
def insurance_server(data_dir: Path) -> Iterator[str]:
    settings = Settings(
        host="127.0.0.1",
        port=0,
        store_url=f"sqlite:///{data_dir / 'insurance.db'}",
        log_level="warning",
    )
    tour = data_dir / "tour.jsonl"
    tour.write_text("".join(json.dumps(b) + "\n" for b in _tour_lines()), encoding="utf-8")
    with running(settings) as url:
        where = ["--api", url, "--tenant", TENANT]
        assert cli(["schema", "put", str(EXAMPLE / "schema.json"), *where]) == 0
        assert cli(["import", str(tour), *where]) == 0
        yield url


def _api(url: str, path: str, **params: Any) -> Any:
    r = httpx.get(f"{url}/v1/tenants/{TENANT}{path}", params=params, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def test_ada_address_timeline_is_the_api_history(
    insurance_server: str, browser: WebDriver, screens: Path
) -> None:
    browser.get(f"{insurance_server}{ADA}?as_of=2025-02-01")
    drawn = [b for b in bars_settled(browser) if b["timeline"] == "address"]
    api = _api(insurance_server, "/facts/history", subject="cust-ada", predicate="address")
    assert [(b["value"], b["valid_from"], b["valid_to"]) for b in drawn] == [
        (f["value"], f["valid_from"], f["valid_to"] or "") for f in api["facts"]
    ]
    # On 1 February 2025 she still lived in Marchmont Road; the move (dated 1 March by the
    # late form) is not valid yet.
    status = {b["value"]: b["status"] for b in drawn}
    assert status[MARCHMONT] == "current"
    assert status[HARBOUR] == "upcoming"
    screenshot(browser, screens / "insurance-ada-2025-02-01.png")


@pytest.mark.parametrize(
    ("day", "present", "absent"),
    [
        ("2025-09-28", {"pol-ada-car", "pol-ada-home"}, {"pol-ada-car-2"}),
        ("2025-11-01", {"pol-ada-car-2", "pol-ada-home"}, set()),
    ],
)
def test_neighbourhood_follows_the_policies_valid_on_the_day(
    insurance_server: str,
    browser: WebDriver,
    day: str,
    present: set[str],
    absent: set[str],
) -> None:
    browser.get(f"{insurance_server}{ADA}?as_of={day}")
    bars_settled(browser)
    nodes = wait_for(browser, lambda d: graph_nodes(d) or None)
    hood = _api(insurance_server, "/entities/cust-ada/neighbors", depth=2, as_of=f"{day}T00:00:00Z")
    assert nodes == sorted(e["entity_id"] for e in hood["entities"])
    assert {"cust-ada", "acct-ada-1", "acct-ada-2"} | present <= set(nodes)
    assert not absent & set(nodes)
