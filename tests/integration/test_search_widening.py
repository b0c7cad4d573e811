"""A search of the present reads few index rows, and still fills its page when most of
the best matches are hidden by valid time.

On Neo4j a search of the present (as_of = known_at = now) fetches only a little more than
it needs from each index: the indexes filter tenant and current version inside, and only
facts whose validity ended (or has not begun) are hidden. Here the tenant's best fulltext
matches all ended: the first fetch holds none of its visible facts, and the search must
widen, call by call and through the gathered candidate query alike.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from graph.model import EpisodeCreate, MemoryDelta
from graph.port import Store
from graph.retrieval import ItemKind, Retriever, SearchableStore
from graph.retrieval.port import GatheredReads, Hit
from graph.service import MemoryService
from graph.stores.neo4j.search import fulltext_query

pytestmark = pytest.mark.neo4j

HIDDEN = 30  # ended facts that match the query best
VISIBLE = 6
LIMIT = 4


def d(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture
def data(neo4j_store: Store, ntenant: str) -> dict[str, set[str]]:
    service = MemoryService(neo4j_store)
    service.add_episode(
        tenant_id=ntenant,
        body=EpisodeCreate(
            episode_id="src", content="inventory", occurred_at=d("2020-01-01T00:00:00")
        ),
    )
    ended = [
        MemoryDelta(
            subject=f"lamp-{i}",
            subject_type="Item",
            predicate="lamp_note",
            value="lamp lamp",
            valid_from=d("2020-01-01T00:00:00"),
            valid_to=d("2021-01-01T00:00:00"),
            source_episode_id="src",
        )
        for i in range(HIDDEN)
    ]
    valid = [
        MemoryDelta(
            subject=f"desk-{i}",
            subject_type="Item",
            predicate="comment",
            value="an old desk under a dusty green reading lamp by the window",
            valid_from=d("2022-01-01T00:00:00"),
            source_episode_id="src",
        )
        for i in range(VISIBLE)
    ]
    service.write_facts(tenant_id=ntenant, deltas=ended + valid)
    facts = service.facts(tenant_id=ntenant, as_of=d("2020-06-01T00:00:00"))
    now = service.facts(tenant_id=ntenant)
    return {"ended": {f.fact_id for f in facts}, "visible": {f.fact_id for f in now}}


def test_the_present_widens_past_ended_facts(
    neo4j_store: Store, ntenant: str, data: dict[str, set[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(data["ended"]) == HIDDEN
    assert len(data["visible"]) == VISIBLE
    assert isinstance(neo4j_store, SearchableStore)
    search: Any = neo4j_store.search
    window = Retriever.window()
    # The first fetch of the present (limit + 8 rows here) holds only ended facts: without
    # widening the page would be empty.
    first = search.conn.run(
        "search.fulltext_facts",
        {
            "query": fulltext_query(ntenant, ItemKind.FACT, ["lamp"], window),
            "fetch": 12,
            "tenant_id": ntenant,
            "as_of": window.as_of,
            "known_at": window.known_at,
        },
    )
    assert len(first) == 12
    assert not any(r["ok"] for r in first)
    assert {r["item_id"] for r in first} <= data["ended"]

    per_call = search.fulltext(
        tenant_id=ntenant, kind=ItemKind.FACT, terms=["lamp"], window=window, limit=LIMIT
    )

    def gathered(reads: GatheredReads) -> list[Hit]:
        reads.prefetch_candidates(
            tenant_id=ntenant, terms=["lamp"], vector=None, model="m", window=window, limit=LIMIT
        )
        return reads.fulltext(
            tenant_id=ntenant, kind=ItemKind.FACT, terms=["lamp"], window=window, limit=LIMIT
        )

    for hits in (per_call, search.gather(gathered)):
        assert len(hits) == LIMIT
        assert {h.item_id for h in hits} <= data["visible"]
    # The gathered search widens from the fetch after its prefetch's: it does not read the
    # first 12 rows again.
    fetches: list[tuple[str, int]] = []
    run = search.conn.run

    def counting(name: str, params: Any, **kwargs: Any) -> Any:
        fetches.append((name, params.get("fetch")))
        return run(name, params, **kwargs)

    monkeypatch.setattr(search.conn, "run", counting)
    assert per_call == search.gather(gathered)
    assert fetches == [("search.gather_candidates", 12), ("search.fulltext_facts", 48)]
    fetches.clear()
    assert per_call == search.fulltext(
        tenant_id=ntenant, kind=ItemKind.FACT, terms=["lamp"], window=window, limit=LIMIT
    )
    assert fetches == [("search.fulltext_facts", 12), ("search.fulltext_facts", 48)]
    monkeypatch.undo()
    # In the past the ended facts are the answer, and they rank first.
    past = search.fulltext(
        tenant_id=ntenant,
        kind=ItemKind.FACT,
        terms=["lamp"],
        window=Retriever.window(as_of=d("2020-06-01T00:00:00")),
        limit=LIMIT,
    )
    assert len(past) == LIMIT
    assert {h.item_id for h in past} <= data["ended"]
