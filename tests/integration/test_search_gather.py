"""Search on Neo4j reads through one read transaction of two queries (candidates; the
expansion with every load the re-rank needs), and ranks exactly as call by call.

The reads are counted at the connection (every template run goes through
``Neo4jConnection.run``), on the real server: round trips, not timings.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graph.embeddings import SentenceEmbedder, default_embedder
from graph.model import EpisodeCreate, MemoryDelta
from graph.port import Store
from graph.retrieval import ItemKind, Retriever, SearchableStore, SearchResult, Window
from graph.service import MemoryService
from graph.stores import open_store
from tests.conformance.test_search_contract import run_mira

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="session")
def embedder() -> SentenceEmbedder:
    return default_embedder()


def searchable(store: Store) -> SearchableStore:
    assert isinstance(store, SearchableStore)
    return store


def d(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def load(service: MemoryService, ntenant: str) -> None:
    """Mira's corrected deadline, accounts with an ended relation, a conversation."""
    run_mira(service, ntenant)
    at = d("2026-01-01T00:00:00")
    service.add_episode(
        tenant_id=ntenant,
        body=EpisodeCreate(episode_id="crm", content="CRM export for cust-7", occurred_at=at),
    )
    service.write_facts(
        tenant_id=ntenant,
        deltas=[
            MemoryDelta(
                subject="cust-7",
                subject_type="Customer",
                predicate="holds_account",
                object="acct-1",
                object_type="Account",
                valid_from=at,
                source_episode_id="crm",
            ),
            MemoryDelta(
                subject="cust-7",
                subject_type="Customer",
                predicate="holds_account",
                object="acct-2",
                object_type="Account",
                valid_from=at,
                valid_to=d("2026-02-01T00:00:00"),
                source_episode_id="crm",
            ),
            MemoryDelta(
                subject="acct-1",
                predicate="account_status",
                value="frozen",
                valid_from=at,
                source_episode_id="crm",
            ),
            MemoryDelta(
                subject="acct-2",
                predicate="account_status",
                value="overdrawn",
                valid_from=at,
                source_episode_id="crm",
            ),
        ],
    )
    turns = [
        "Ana: Did you book the flights to Porto for Mira?",
        "Ben: Yes, we leave on the 3rd of May.",
        "Ana: Great, Mira will pack tonight.",
        "Ben: cust-7 called about the frozen account.",
    ]
    for i, text in enumerate(turns):
        service.add_episode(
            tenant_id=ntenant,
            body=EpisodeCreate(
                episode_id=f"t{i}",
                content=text,
                occurred_at=d("2026-03-01T10:00:00"),
                session_id="s1",
            ),
        )


@pytest.fixture
def data(neo4j_store: Store, ntenant: str, embedder: SentenceEmbedder) -> str:
    load(MemoryService(neo4j_store), ntenant)
    retriever = Retriever(searchable(neo4j_store), embedder=embedder, gather=False)
    retriever.ensure_indexed(ntenant)
    # Neo4j's indexes settle for a while after the commits (scores drift in the last
    # digits over the first searches, on either path): wait until two passes agree, so
    # that both paths below read the same index state.
    last = None
    for _ in range(30):
        now = [
            seen(retriever.search(tenant_id=ntenant, query=q, scopes=s, depth=0))
            for q in QUERIES
            for s in ([ItemKind.EPISODE], [ItemKind.FACT])
        ]
        if now == last:
            break
        last = now
        time.sleep(0.5)
    return ntenant


@pytest.fixture
def runs(neo4j_store: Store) -> Iterator[list[str]]:
    """The names of the templates run on the store's connection while the test runs."""
    conn: Any = neo4j_store.search.conn  # type: ignore[attr-defined]
    names: list[str] = []
    real = conn.run

    def counted(name: str, params: Any, **kw: Any) -> Any:
        names.append(name)
        return real(name, params, **kw)

    conn.run = counted
    try:
        yield names
    finally:
        del conn.run


def seen(results: list[SearchResult]) -> list[tuple[str, float, str, list[str]]]:
    return [
        (r.kind.value, r.score, r.item.model_dump_json(), r.source_episode_ids) for r in results
    ]


QUERIES = [
    "When is Mira's passport deadline?",
    "cust-7 account",
    "flights to Porto frozen",
    "zzz-nothing-matches",
]
WINDOWS: list[dict[str, Any]] = [
    {},
    {"as_of": d("2026-01-15T00:00:00")},
    {"as_of": d("2026-06-02T00:00:00"), "known_at": datetime.now(UTC)},
]


@pytest.mark.parametrize("query", QUERIES)
def test_gathered_reads_rank_exactly_as_call_by_call(
    neo4j_store: Store, data: str, embedder: SentenceEmbedder, query: str
) -> None:
    gathered = Retriever(searchable(neo4j_store), embedder=embedder)
    per_call = Retriever(searchable(neo4j_store), embedder=embedder, gather=False)
    for window in WINDOWS:
        for depth in (0, 1, 2):
            for scopes in (list(ItemKind), [ItemKind.FACT], [ItemKind.EPISODE]):
                args: dict[str, Any] = {
                    "tenant_id": data,
                    "query": query,
                    "depth": depth,
                    "scopes": scopes,
                    "limit": 5,
                    **window,
                }
                # Between two equal per-call answers the index held still (it settles
                # for a while after writes on a busy server): the gathered answer read
                # that same state.
                for _ in range(20):
                    before = seen(per_call.search(**args))
                    got = seen(gathered.search(**args))
                    if seen(per_call.search(**args)) == before:
                        break
                    time.sleep(0.5)
                else:
                    pytest.fail("the indexes never held still")
                assert got == before, (window, depth, scopes)
    assert seen(gathered.search(tenant_id=data, query=query)) or query.startswith("zzz")


def test_a_search_is_two_queries_in_one_read_transaction(
    neo4j_store: Store, data: str, embedder: SentenceEmbedder, runs: list[str]
) -> None:
    question = "When is Mira's passport deadline?"
    gathered = Retriever(searchable(neo4j_store), embedder=embedder)
    assert gathered.search(tenant_id=data, query=question, scopes=[ItemKind.FACT])
    assert runs == ["search.gather_candidates", "search.gather_expansion"]
    # Episodes on the page: the staleness check after the ranking reads the timelines
    # they asserted on (and those of the page's facts) in one more query, in the same
    # transaction.
    runs.clear()
    assert gathered.search(tenant_id=data, query=question)
    assert runs == [
        "search.gather_candidates",
        "search.gather_expansion",
        "search.staleness",
    ]
    runs.clear()
    assert Retriever(searchable(neo4j_store), embedder=embedder, gather=False).search(
        tenant_id=data, query=question
    )
    assert len(runs) == 14  # call by call: six index queries, seven reads, one check


def test_the_staleness_check_is_one_query_and_reads_what_sqlite_reads(
    neo4j_store: Store, data: str, runs: list[str], tmp_path: Path
) -> None:
    """search.staleness computes validity and the pairs left to read in Cypher; the
    embedded store does both in SQL and Python. The same history gives the same reads."""
    sqlite = open_store(f"sqlite:///{tmp_path / 'same.db'}")
    try:
        load(MemoryService(sqlite), data)
        now = datetime.now(UTC)
        accounts = [
            ("cust-7", "holds_account"),
            ("acct-1", "account_status"),
            ("acct-2", "account_status"),
        ]
        cases: list[tuple[list[str], list[tuple[str, str]], datetime]] = [
            (["crm"], accounts, now),
            # holds_account is many-valued: not covered by what the episodes sourced, so
            # its versions come from the pair read.
            (["t3", "t0"], accounts, now),
            (["e1", "e2", "crm"], [("cust-7", "holds_account")], d("2026-01-15T00:00:00")),
            (["e1", "e2"], [("mira", "passport_deadline")], d("2025-01-01T00:00:00")),
            # the instant acct-2's relation ends: valid time is half-open
            (["t0"], [("cust-7", "holds_account")], d("2026-02-01T00:00:00")),
            (["t1"], [], now),
        ]
        sizes: list[tuple[int, int]] = []
        valid: set[bool] = set()
        for episode_ids, pairs, as_of in cases:
            window = Window(as_of=as_of, known_at=datetime.now(UTC))

            def reads(
                index: Any, ids: list[str] = episode_ids, pairs: Any = pairs, w: Window = window
            ) -> Any:
                held = index.staleness_versions(
                    tenant_id=data, episode_ids=ids, pairs=pairs, window=w
                )
                # fact ids are each store's own; everything else is the history's
                return [sorted(v[1:] for v in vs) for vs in (held.around, held.pairs)]

            runs.clear()
            got = searchable(neo4j_store).search.gather(reads)
            assert runs == ["search.staleness"]
            assert got == reads(searchable(sqlite).search), (episode_ids, pairs, as_of)
            sizes.append((len(got[0]), len(got[1])))
            valid |= {v[3] for vs in got for v in vs}
        # The cases read through the episodes and through the pairs, some versions valid
        # at as_of and some not.
        assert any(a for a, _ in sizes), sizes
        assert any(b for _, b in sizes), sizes
        assert valid == {True, False}
    finally:
        sqlite.close()


def test_expansion_reads_which_episodes_are_visible_and_loads_records_on_demand(
    neo4j_store: Store, data: str, runs: list[str]
) -> None:
    """The expansion query returns episode ids only; a record asked for before any
    staleness check loaded it is read then, in one query for the mapping's missing ones,
    and equals the per-call record."""
    from graph.retrieval.port import Window

    search: Any = searchable(neo4j_store).search
    ids = ["t0", "t1", "crm", "no-such-episode"]
    crm = search.episodes_by_id(tenant_id=data, episode_ids=["crm"], known_at=datetime.now(UTC))
    # Now, and when crm was recorded but not yet the turns written after it.
    for known_at in (datetime.now(UTC), crm["crm"].recorded_at):
        window = Window(as_of=known_at, known_at=known_at)
        expected = {
            k: v.model_dump_json()
            for k, v in search.episodes_by_id(
                tenant_id=data, episode_ids=ids, known_at=known_at
            ).items()
        }
        runs.clear()

        def gathered(reads: Any, at: datetime = known_at, w: Window = window) -> Any:
            reads.prefetch_expansion(
                tenant_id=data,
                window=w,
                fact_ids=[],
                top_fact_ids=[],
                seed_ids=[],
                entity_ids=[],
                episode_ids=ids,
                context_ids=[],
                hop=False,
                max_facts=10,
                max_mentions=10,
                radius=0,
            )
            found = reads.episodes_by_id(tenant_id=data, episode_ids=ids, known_at=at)
            keys = list(found)
            after_keys = list(runs)
            return keys, after_keys, {k: found[k].model_dump_json() for k in keys}

        keys, after_keys, got = search.gather(gathered)
        assert keys == sorted(expected), known_at
        assert got == expected
        # Which ids are visible came with the expansion; the records took one more query.
        assert after_keys == ["search.gather_expansion"]
        assert runs == ["search.gather_expansion", "search.episodes_by_id"]
    assert list(expected) == ["crm"]  # the last window's


def test_an_episode_erased_between_the_queries_runs_the_search_again(
    neo4j_store: Store, data: str
) -> None:
    """Neo4j reads committed data query by query: an episode the expansion saw may be
    erased before its record is read. The search then runs again whole, without it."""
    from graph.retrieval.port import Window

    search: Any = searchable(neo4j_store).search
    service = MemoryService(neo4j_store)
    at = datetime.now(UTC)
    ids = ["t1", "t2"]
    attempts: list[list[str]] = []

    def gathered(reads: Any) -> dict[str, str]:
        reads.prefetch_expansion(
            tenant_id=data,
            window=Window(as_of=at, known_at=at),
            fact_ids=[],
            top_fact_ids=[],
            seed_ids=[],
            entity_ids=[],
            episode_ids=ids,
            context_ids=[],
            hop=False,
            max_facts=10,
            max_mentions=10,
            radius=0,
        )
        found = reads.episodes_by_id(tenant_id=data, episode_ids=ids, known_at=at)
        attempts.append(list(found))
        if len(attempts) == 1:
            service.delete_episode(tenant_id=data, episode_id="t2")
        return {k: found[k].content for k in found}

    assert search.gather(gathered) == {"t1": "Ben: Yes, we leave on the 3rd of May."}
    assert attempts == [["t1", "t2"], ["t1"]]
