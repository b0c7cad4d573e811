"""The memory explorer in a real headless Chromium, against a real server on loopback.

The Mira scenario is replayed into the server (three passport-deadline versions: a
correction and a late-arriving older value) and a small insurance graph is written
beside it (tests/ui/seed.py). Each test opens pages, works the controls as a person
would (typing, keys, clicks) and asserts on what the page displays.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from graph.timeutil import format_instant, parse_instant
from tests.ui import seed
from tests.ui.pages import (
    bars,
    bars_settled,
    graph_nodes,
    screenshot,
    text,
    url_params,
    visible,
    wait_for,
)

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = pytest.mark.browser

MIRA = "/ui/tenants/acme/entities/mira"
E0 = ("2026-08-01", "2026-05-30T08:00:00Z", "2026-06-01T09:00:00Z")
E1 = ("2026-07-15", "2026-06-01T09:00:00Z", "2026-06-03T10:00:00Z")
E2 = ("2026-06-30", "2026-06-03T10:00:00Z", "")


def _versions(drawn: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    return [(b["value"], b["valid_from"], b["valid_to"], b["status"]) for b in drawn]


def _open(browser: WebDriver, url: str) -> list[dict[str, Any]]:
    browser.get(url)
    return bars_settled(browser)


def _type(browser: WebDriver, element_id: str, value: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    field = browser.find_element(By.ID, element_id)
    field.clear()
    field.send_keys(value, Keys.ENTER)


def _key(browser: WebDriver, element_id: str, *keys: str) -> None:
    from selenium.webdriver.common.by import By

    browser.find_element(By.ID, element_id).send_keys(*keys)


def _bar(browser: WebDriver, value: str) -> Any:
    from selenium.webdriver.common.by import By

    return browser.find_element(By.CSS_SELECTOR, f'#timelines .bar[data-value="{value}"]')


def test_entity_view_draws_the_three_passport_deadline_versions(
    open_server: str, browser: WebDriver, screens: Path
) -> None:
    drawn = _open(browser, open_server + MIRA)
    assert _versions(drawn) == [
        (*E0, "superseded"),
        (*E1, "superseded"),
        (*E2, "current"),
    ]
    # The bars are exactly the API's history, value for value and bound for bound.
    api = seed.history(open_server, "mira", "passport_deadline")
    assert [(f["value"], f["valid_from"], f["valid_to"] or "") for f in api] == [E0, E1, E2]
    # Values and statuses are written on (or beside) the bars, as words.
    assert [b["text"] for b in drawn] == [
        "2026-08-01 · superseded",
        "2026-07-15 · superseded",
        "2026-06-30 · current",
    ]
    assert {b["timeline"] for b in drawn} == {"passport_deadline"}
    assert text(browser, "entity-title") == "mira"
    assert "Person" in text(browser, "entity-meta")
    legend = text(browser, "legend")
    for word in ("current", "superseded", "retracted", "ended", "not yet valid"):
        assert word in legend
    # The table holds the same versions with human-readable bounds.
    rows = browser.execute_script(
        "return [...document.querySelectorAll('#versions tbody tr')]"
        ".map(r => [...r.cells].map(c => c.textContent));"
    )
    assert [r[:6] for r in rows] == [
        [
            "passport_deadline",
            "2026-08-01",
            "2026-05-30 08:00 UTC",
            "2026-06-01 09:00 UTC",
            "superseded",
            "e0",
        ],
        [
            "passport_deadline",
            "2026-07-15",
            "2026-06-01 09:00 UTC",
            "2026-06-03 10:00 UTC",
            "superseded",
            "e1",
        ],
        ["passport_deadline", "2026-06-30", "2026-06-03 10:00 UTC", "open", "current", "e2"],
    ]
    assert "as of now" in browser.find_element("css selector", ".marker-text").text
    screenshot(browser, screens / "entity-view.png")


def test_moving_as_of_changes_which_version_is_valid(
    open_server: str, browser: WebDriver, screens: Path
) -> None:
    from selenium.webdriver.common.keys import Keys

    _open(browser, open_server + MIRA)
    _type(browser, "as-of-text", "2026-06-02")

    def at_june_2(d: WebDriver) -> list[dict[str, Any]] | None:
        drawn = bars(d)
        return drawn if [b["status"] for b in drawn][1:2] == ["current"] else None

    drawn = wait_for(browser, at_june_2)
    assert _versions(drawn) == [(*E0, "superseded"), (*E1, "current"), (*E2, "upcoming")]
    assert [b["text"] for b in drawn] == [
        "2026-08-01 · superseded",
        "2026-07-15 · current",
        "2026-06-30 · not yet valid",
    ]
    marker = browser.find_element("css selector", ".marker-text").text
    assert marker == "as of 2026-06-02 00:00 UTC"
    # The address carries the API's own format, and opening it restores the view.
    assert url_params(browser) == {"as_of": "2026-06-02T00:00:00Z"}
    shared = browser.current_url
    restored = _open(browser, shared)
    assert _versions(restored) == _versions(drawn)
    assert browser.find_element("id", "as-of-text").get_attribute("value") == (
        "2026-06-02T00:00:00Z"
    )
    screenshot(browser, screens / "entity-view-as-of-2026-06-02.png")

    # The slider moves the same marker: to the start of the axis nothing is valid yet,
    # to its end the correction is.
    _key(browser, "as-of-range", Keys.HOME)
    start = wait_for(browser, lambda d: bars(d) if bars(d)[0]["status"] == "upcoming" else None)
    assert [b["status"] for b in start] == ["upcoming"] * 3
    assert parse_instant(url_params(browser)["as_of"], field="as_of") < parse_instant(
        E0[1], field="valid_from"
    )
    _key(browser, "as-of-range", Keys.END)
    end = wait_for(browser, lambda d: bars(d) if bars(d)[2]["status"] == "current" else None)
    assert [b["status"] for b in end] == ["superseded", "superseded", "current"]
    browser.find_element("id", "as-of-now").click()
    wait_for(browser, lambda d: url_params(d) == {})


def test_known_at_replays_what_was_believed(open_server: str, browser: WebDriver) -> None:
    from selenium.webdriver.common.keys import Keys

    # When e1 was first recorded: believed just before e2's version arrived.
    now = seed.history(open_server, "mira", "passport_deadline")
    e2_recorded = parse_instant(now[2]["recorded_at"], field="recorded_at")
    before_e2 = httpx.get(
        f"{open_server}/v1/tenants/acme/facts/history",
        params={
            "subject": "mira",
            "predicate": "passport_deadline",
            "known_at": format_instant(e2_recorded - timedelta(microseconds=1)),
        },
    ).json()["facts"]
    assert [(f["value"], f["valid_to"]) for f in before_e2] == [("2026-07-15", None)]
    e1_recorded = before_e2[0]["recorded_at"]

    _open(browser, open_server + MIRA)
    _key(browser, "known-at-range", Keys.HOME)  # the first moment belief changed

    def single(d: WebDriver) -> list[dict[str, Any]] | None:
        drawn = bars(d)
        return drawn if len(drawn) == 1 else None

    drawn = wait_for(browser, single)
    # Only e1, open-ended again: e2 and the late e0 were recorded later.
    assert _versions(drawn) == [("2026-07-15", E1[1], "", "current")]
    assert url_params(browser) == {"known_at": e1_recorded}
    assert browser.find_element("id", "known-at-text").get_attribute("value") == e1_recorded
    assert "as sgam knew it at" in text(browser, "time-summary")
    what = text(browser, "known-at-what")
    assert what.startswith("3 belief changes recorded about this entity")
    assert what.endswith("recorded passport_deadline = 2026-07-15 (e1).")

    _key(browser, "known-at-range", Keys.ARROW_RIGHT)  # e2 recorded: e1 cut at 06-03
    two = wait_for(browser, lambda d: bars(d) if len(bars(d)) == 2 else None)
    assert _versions(two) == [(*E1, "superseded"), (*E2, "current")]

    # Opening a shared address at that known_at shows that belief again.
    restored = _open(browser, f"{open_server}{MIRA}?known_at={e1_recorded}")
    assert _versions(restored) == [("2026-07-15", E1[1], "", "current")]
    browser.find_element("id", "known-at-now").click()
    back = wait_for(browser, lambda d: bars(d) if len(bars(d)) == 3 else None)
    assert [b["value"] for b in back] == ["2026-08-01", "2026-07-15", "2026-06-30"]


def test_source_episode_on_hover_click_and_keyboard(
    open_server: str, browser: WebDriver, screens: Path
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    _open(browser, open_server + MIRA)
    episodes = {
        e: httpx.get(f"{open_server}/v1/tenants/acme/episodes/{e}").json()
        for e in ("e0", "e1", "e2")
    }

    def details_show(episode_id: str) -> str:
        def ready(d: WebDriver) -> str | None:
            shown = text(d, "details-body")
            return shown if f"Episode {episode_id}" in shown and "recorded at" in shown else None

        return wait_for(browser, ready)

    ActionChains(browser).move_to_element(_bar(browser, "2026-08-01")).perform()
    hovered = details_show("e0")
    assert "Mira's passport deadline is 2026-08-01." in hovered
    assert "2026-05-30 08:00 UTC" in hovered  # occurred_at

    _bar(browser, "2026-07-15").click()
    clicked = details_show("e1")
    assert "Mira prefers concise answers. Her passport deadline is 2026-07-15." in clicked
    assert "2026-06-01 09:00 UTC" in clicked
    recorded = parse_instant(episodes["e1"]["recorded_at"], field="recorded_at")
    assert format_instant(recorded)[:10] in clicked
    assert "superseded by 2026-06-30 (e2)" in clicked

    _bar(browser, "2026-06-30").send_keys(Keys.ENTER)  # focus and Enter, no mouse
    keyed = details_show("e2")
    assert "Mira corrected the deadline. It is now 2026-06-30." in keyed
    assert browser.switch_to.active_element.get_attribute("data-value") == "2026-06-30"
    _bar(browser, "2026-07-15").click()
    details_show("e1")
    screenshot(browser, screens / "entity-view-source.png")


def test_neighbourhood_at_as_of_and_opening_a_node(
    open_server: str, browser: WebDriver, screens: Path
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    drawn = _open(browser, f"{open_server}/ui/tenants/acme/entities/cust-7?as_of=2026-02-15")
    # acct-2 was held until it was retracted at 2026-03-01: current on 15 February.
    assert sorted(_versions(drawn)) == [
        ("acct-1", "2026-01-01T00:00:00Z", "", "current"),
        ("acct-2", "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z", "current"),
        ("gold", "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z", "current"),
        ("silver", "2026-03-01T00:00:00Z", "", "upcoming"),
    ]
    nodes = wait_for(browser, lambda d: graph_nodes(d) or None)
    assert nodes == ["acct-1", "acct-2", "cust-7", "pol-9"]  # two hops by default
    listed = browser.execute_script(
        "return [...document.querySelectorAll('#nb-list li')].map(li => li.textContent);"
    )
    assert listed == ["acct-1 (Account)", "acct-2 (Account)", "cust-7 (Customer)", "pol-9 (Policy)"]
    assert text(browser, "type-legend").split() == ["Account", "Customer", "Policy"]
    browser.find_element("css selector", "#nb-form input[value='1']").click()
    wait_for(browser, lambda d: graph_nodes(d) == ["acct-1", "acct-2", "cust-7"])
    browser.find_element("css selector", "#nb-form input[value='2']").click()
    wait_for(browser, lambda d: graph_nodes(d) == ["acct-1", "acct-2", "cust-7", "pol-9"])
    screenshot(browser, screens / "neighbourhood.png", "neighbourhood")

    # Now (no as_of): acct-2 is retracted, so it is neither drawn as current nor a neighbour.
    browser.find_element("id", "as-of-now").click()
    wait_for(browser, lambda d: graph_nodes(d) == ["acct-1", "cust-7", "pol-9"])
    statuses = {(b["timeline"], b["value"]): b["status"] for b in bars(browser)}
    assert statuses[("holds_account → acct-2", "acct-2")] == "retracted"
    assert statuses[("status", "gold")] == "superseded"
    browser.find_element("id", "as-of-text").send_keys("2026-02-15", Keys.ENTER)
    wait_for(browser, lambda d: "acct-2" in graph_nodes(d))

    # Clicking a node opens its entity view at the same as_of.
    graph = browser.find_element("id", "graph")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", graph)
    pos = browser.execute_script(
        "const g = document.getElementById('graph'); const p = g.cy.getElementById('acct-1')"
        ".renderedPosition(); return [p.x - g.clientWidth / 2, p.y - g.clientHeight / 2];"
    )
    ActionChains(browser).move_to_element_with_offset(
        graph, int(pos[0]), int(pos[1])
    ).click().perform()
    wait_for(browser, lambda d: "/entities/acct-1" in d.current_url)
    assert url_params(browser) == {"as_of": "2026-02-15T00:00:00Z"}
    drawn = bars_settled(browser)
    assert _versions(drawn) == [("pol-9", "2026-02-01T00:00:00Z", "", "current")]
    assert wait_for(browser, lambda d: graph_nodes(d) or None) == [
        "acct-1",
        "acct-2",
        "adv-3",
        "cust-7",
        "pol-9",
    ]
    incoming = text(browser, "incoming")
    assert "cust-7 holds_account → acct-1" in incoming

    # Keyboard: focus the graph, step to a node with the arrows, Enter opens it.
    graph = browser.find_element("id", "graph")
    graph.send_keys(Keys.ARROW_RIGHT)
    for _ in range(6):
        if "adv-3" in text(browser, "graph-status"):
            break
        graph.send_keys(Keys.ARROW_RIGHT)
    assert "adv-3, Advisor" in text(browser, "graph-status")
    graph.send_keys(Keys.ENTER)
    wait_for(browser, lambda d: "/entities/adv-3" in d.current_url)
    assert wait_for(browser, lambda d: text(d, "entity-title") or None) == "adv-3"


def test_search_lists_current_facts_with_sources(open_server: str, browser: WebDriver) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, open_server + MIRA)

    def results(d: WebDriver) -> list[dict[str, Any]] | None:
        if not text(d, "search-status").endswith("”."):
            return None
        found: list[dict[str, Any]] = d.execute_script(
            "return [...document.querySelectorAll('#search-results li')].map(li => ({"
            "kind: li.dataset.kind, text: li.innerText}));"
        )
        return found

    _type(browser, "search-input", "passport deadline")
    found = wait_for(browser, results, timeout=240)  # the first search loads the model
    facts = [r["text"] for r in found if r["kind"] == "fact"]
    assert facts, found
    current = [t for t in facts if "mira passport_deadline 2026-06-30" in t]
    assert current, facts
    assert "valid 2026-06-03 10:00 UTC → open" in current[0]
    assert "sources: e2" in current[0]
    # Current only by default: the superseded values are not listed as facts.
    assert not [t for t in facts if "2026-07-15" in t or "2026-08-01" in t]
    assert "current only" in text(browser, "search-scope")
    kinds = {r["kind"] for r in found}
    assert {"fact", "episode"} <= kinds
    # A source opens its episode in the details panel.
    browser.find_element(By.XPATH, "//ol[@id='search-results']//button[text()='e2']").click()
    wait_for(browser, lambda d: "It is now 2026-06-30." in text(d, "details-body"))

    # With the page's as_of the search answers for that date.
    _type(browser, "as-of-text", "2026-06-02T00:00:00Z")
    wait_for(browser, lambda d: bars(d)[1]["status"] == "current")
    browser.find_element(By.CSS_SELECTOR, "#search-form button[type=submit]").click()
    wait_for(browser, lambda d: "2026-06-02 00:00 UTC" in text(d, "search-scope"))
    found = wait_for(
        browser,
        lambda d: (r := results(d)) and any("2026-07-15" in x["text"] for x in r) and r,
    )
    dated = [r["text"] for r in found if r["kind"] == "fact" and "passport_deadline" in r["text"]]
    assert any("mira passport_deadline 2026-07-15" in t and "sources: e1" in t for t in dated)
    assert not any("2026-06-30" in t for t in dated)


def test_narrow_window(open_server: str, browser: WebDriver, screens: Path) -> None:
    browser.set_window_size(400, 800)
    try:
        drawn = _open(browser, f"{open_server}{MIRA}?as_of=2026-06-02")
        assert [(b["value"], b["status"]) for b in drawn] == [
            ("2026-08-01", "superseded"),
            ("2026-07-15", "current"),
            ("2026-06-30", "upcoming"),
        ]
        # Every value is written out somewhere near its bar, none cut off.
        for b in drawn:
            assert b["text"].startswith(b["value"]), b
        # Nothing wider than the window: no sideways scrolling.
        overflow = browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth;"
        )
        assert overflow <= 0
        for control in ("as-of-text", "as-of-range", "known-at-text", "search-input"):
            assert visible(browser, control), control
        screenshot(browser, screens / "narrow-entity-view.png")
    finally:
        browser.set_window_size(1280, 800)


def test_unknown_entity_shows_the_api_not_found(open_server: str, browser: WebDriver) -> None:
    browser.get(f"{open_server}/ui/tenants/acme/entities/nobody")
    wait_for(browser, lambda d: visible(d, "problem"))
    api = httpx.get(f"{open_server}/v1/tenants/acme/entities/nobody")
    assert api.status_code == 404
    body = api.json()
    assert text(browser, "problem-title") == body["title"]
    assert text(browser, "problem-detail") == body["detail"]
    assert "404" in text(browser, "problem-status")
    assert not visible(browser, "workspace")
