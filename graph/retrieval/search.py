"""Hybrid search: BM25 + vector candidates, fused by RRF, expanded over the graph valid in
the query's window, re-ranked on that subgraph.

    query ─┬─ fulltext (per kind) ─┐
           └─ vector   (per kind) ─┴─ RRF ─ seeds: the query's entities
                                              │
      facts valid in the window around them (depth hops), their source episodes,
      episodes mentioning them, session neighbours of candidate episodes
                                              │
             networkx: personalised PageRank + hops from the seeds → score

Every fact that enters — candidate or expanded — was read in the version valid at
``as_of`` as known at ``known_at``; nothing else can be returned. Episodes that state a
value no longer valid in the window are dropped (see :mod:`graph.retrieval.stale`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field

from graph.embeddings import Embedder, EmbeddingUnavailableError, Vectors, default_embedder
from graph.errors import invalid
from graph.model import Entity, Episode, Fact, Predicate, TypeName
from graph.retrieval import rank
from graph.retrieval.port import (
    GatheredReads,
    GatheringPort,
    Hit,
    ItemKind,
    SearchableStore,
    SearchPort,
    Window,
)
from graph.retrieval.rank import Node, RankConfig
from graph.retrieval.stale import stale_episodes
from graph.retrieval.text import terms
from graph.timeutil import utcnow

ALL_KINDS: tuple[ItemKind, ...] = (ItemKind.FACT, ItemKind.ENTITY, ItemKind.EPISODE)
MAX_LIMIT = 100
MAX_QUERY_CHARS = 4000
MAX_STALE = 200  # episodes checked for staleness per search; the rest are not returned


MAX_FILTER_NAMES = 100


class SearchFilters(BaseModel):
    """Restrict facts (and, for ``entity_types``, entities); episodes are not filtered."""

    model_config = ConfigDict(extra="forbid")

    # Names as the schema spells them, at most MAX_FILTER_NAMES each: a name no fact can
    # carry is a 422 naming it, not a filter that silently matches nothing.
    entity_types: list[TypeName] | None = Field(default=None, max_length=MAX_FILTER_NAMES)
    predicates: list[Predicate] | None = Field(default=None, max_length=MAX_FILTER_NAMES)
    memory_types: list[Predicate] | None = Field(default=None, max_length=MAX_FILTER_NAMES)

    def keeps_fact(self, f: Fact) -> bool:
        if self.predicates is not None and f.predicate not in self.predicates:
            return False
        if self.memory_types is not None and f.memory_type not in self.memory_types:
            return False
        if self.entity_types is not None:
            return f.subject_type in self.entity_types or f.object_type in self.entity_types
        return True

    def keeps_entity(self, e: Entity) -> bool:
        return self.entity_types is None or e.entity_type in self.entity_types


@dataclass(frozen=True)
class SearchResult:
    kind: ItemKind
    score: float
    item: Fact | Entity | Episode
    source_episode_ids: list[str]


@dataclass(frozen=True)
class SearchAnswer:
    """One search's results and what it ran without (``("vector",)`` when no embedding
    model could load). Returned per call: a Retriever is shared by concurrent requests,
    so nothing about one search may live on it."""

    results: list[SearchResult]
    degraded: tuple[str, ...] = ()


@dataclass
class Candidates:
    """What the indexes proposed, per kind, best first."""

    bm25: dict[ItemKind, list[Hit]] = field(default_factory=dict)
    vector: dict[ItemKind, list[Hit]] = field(default_factory=dict)
    degraded: tuple[str, ...] = ()  # signals these candidates were found without

    def fused(self, *, k: int) -> dict[Node, float]:
        """RRF over two lists, normalised to [0, 1]: every kind's BM25 hits by score, and
        every kind's vector hits by cosine. Both scores compare across kinds — one FTS index
        holds all three kinds (shared term statistics) and one model embeds them — so a
        fact matching every query word outranks an entity matching one."""
        lists = [_by_score(self.bm25), _by_score(self.vector)]
        scores = rank.normalise_rrf(rank.rrf(lists, k=k), lists=2, k=k)
        return {_node(i): s for i, s in scores.items()}

    def relevance(self, *, bm25_share: float) -> dict[Node, float]:
        """Each candidate's own evidence in [0, 1]: BM25 relative to the best hit, cosine
        scaled between the worst and best hit, mixed ``bm25_share`` to the rest. Unlike RRF
        this keeps how much better the first hit is than the tenth."""
        bm = [(kind, h) for kind, hits in self.bm25.items() for h in hits]
        vec = [(kind, h) for kind, hits in self.vector.items() for h in hits]
        out: dict[Node, float] = {}
        top = max((h.score for _, h in bm), default=0.0)
        if top > 0:
            for kind, h in bm:
                out[(kind, h.item_id)] = bm25_share * h.score / top
        lo = min((h.score for _, h in vec), default=0.0)
        hi = max((h.score for _, h in vec), default=0.0)
        for kind, h in vec:
            scaled = (h.score - lo) / (hi - lo) if hi > lo else 1.0
            node = (kind, h.item_id)
            out[node] = out.get(node, 0.0) + (1.0 - bm25_share) * scaled
        return out


def _by_score(per_kind: dict[ItemKind, list[Hit]]) -> list[str]:
    merged = [(h.score, kind.value, h.item_id) for kind, hits in per_kind.items() for h in hits]
    merged.sort(key=lambda t: (-t[0], t[1], t[2]))
    return [f"{kind}\x00{item}" for _, kind, item in merged]


def _node(key: str) -> Node:
    kind, _, item = key.partition("\x00")
    return (ItemKind(kind), item)


@dataclass
class Subgraph:
    """The expanded neighbourhood of a query, with every item loaded in the window."""

    graph: nx.Graph
    seeds: set[Node]
    facts: dict[str, Fact]
    entities: Mapping[str, Entity]  # may decode each on first access (SearchPort)
    episodes: Mapping[str, Episode]
    mentions: dict[str, list[str]]  # entity id → episodes mentioning it


class Retriever:
    """Search and context over one store. Stateless apart from the (shared) embedder."""

    def __init__(
        self,
        store: SearchableStore,
        *,
        embedder: Embedder | None = None,
        config: RankConfig | None = None,
        gather: bool = True,
    ) -> None:
        self.store = store
        # A store that can gather (Neo4j) answers a search's reads in two queries, inside
        # one read transaction; gather=False reads call by call (to compare, in tests).
        self.gather = gather
        self.search_index = store.search
        self.embedder: Embedder = embedder or default_embedder()
        self.config = config or RankConfig()

    # -- building blocks (also used by bench/) --------------------------------------------
    @staticmethod
    def window(as_of: datetime | None = None, known_at: datetime | None = None) -> Window:
        now = utcnow()
        return Window(as_of=as_of or now, known_at=known_at or now, latest=known_at is None)

    def ensure_indexed(self, tenant_id: str) -> int:
        """Embed everything the tenant wrote that has no vector yet. Not called by search:
        the indexer (:mod:`graph.retrieval.indexer`) does this off the request path; tests
        and bench/ call it to search a fully embedded tenant."""
        return self.search_index.index_pending(tenant_id=tenant_id, embedder=self.embedder)

    def embed_query(self, query: str) -> Vectors:
        vec: Vectors = self.embedder.encode([query])[0]
        return vec

    def candidates(
        self,
        *,
        tenant_id: str,
        query: str,
        window: Window,
        kinds: Iterable[ItemKind],
        vector: Vectors | None = None,
        limit: int | None = None,
        index: SearchPort | None = None,
    ) -> Candidates:
        n = limit or self.config.candidates
        index = index or self.search_index
        words = terms(query)
        qvec = vector
        out = Candidates()
        if qvec is None:
            try:
                qvec = self.embed_query(query)
            except EmbeddingUnavailableError:
                out.degraded = ("vector",)  # fulltext and the graph still answer
        if isinstance(index, GatheredReads):
            index.prefetch_candidates(
                tenant_id=tenant_id,
                terms=words,
                vector=qvec,
                model=self.embedder.name,
                window=window,
                limit=n,
            )
        for kind in kinds:
            out.bm25[kind] = index.fulltext(
                tenant_id=tenant_id, kind=kind, terms=words, window=window, limit=n
            )
            if qvec is None:
                continue
            out.vector[kind] = index.vector_search(
                tenant_id=tenant_id,
                kind=kind,
                vector=qvec,
                model=self.embedder.name,
                window=window,
                limit=n,
            )
        return out

    def seeds(self, cands: Candidates, fused: dict[Node, float]) -> set[Node]:
        """The query's entities: named in it (a fulltext hit on the name or an alias), or
        close to it in meaning."""
        cfg = self.config
        named = {h.item_id for h in cands.bm25.get(ItemKind.ENTITY, [])}
        close = {
            h.item_id
            for h in cands.vector.get(ItemKind.ENTITY, [])
            if h.score >= cfg.entity_min_cosine
        }
        chosen = sorted(named | close, key=lambda i: (-fused.get((ItemKind.ENTITY, i), 0.0), i))
        return {(ItemKind.ENTITY, i) for i in chosen[: cfg.seed_entities]}

    def expand(
        self,
        *,
        tenant_id: str,
        window: Window,
        cands: Candidates,
        fused: dict[Node, float],
        depth: int,
        index: SearchPort | None = None,
    ) -> Subgraph:
        cfg = self.config
        index = index or self.search_index
        g: nx.Graph = nx.Graph()
        seeds = self.seeds(cands, fused)
        g.add_nodes_from(seeds)

        ranked = sorted(fused, key=lambda n: (-fused[n], n))
        fact_ids = [i for k, i in ranked if k == ItemKind.FACT]
        if isinstance(index, GatheredReads):  # what the rest of this method will read
            candidate_episodes = [i for k, i in ranked if k == ItemKind.EPISODE]
            index.prefetch_expansion(
                tenant_id=tenant_id,
                window=window,
                fact_ids=fact_ids,
                top_fact_ids=fact_ids[:5],
                seed_ids=[i for _, i in seeds],
                entity_ids=[i for k, i in ranked if k == ItemKind.ENTITY],
                episode_ids=candidate_episodes,
                context_ids=candidate_episodes[: cfg.context_episodes],
                hop=depth >= 1,
                max_facts=cfg.max_expanded_facts,
                max_mentions=cfg.max_mentions,
                radius=cfg.context_radius,
            )
        facts = index.facts_by_id(tenant_id=tenant_id, fact_ids=fact_ids, window=window)

        def add_fact(f: Fact) -> None:
            node = (ItemKind.FACT, f.fact_id)
            g.add_edge(node, (ItemKind.ENTITY, f.subject))
            if f.object is not None:
                g.add_edge(node, (ItemKind.ENTITY, f.object))

        for f in facts.values():
            add_fact(f)
        # Expansion: facts valid in the window around the query's entities and the
        # endpoints of the best fact candidates, hop by hop.
        frontier = {i for _, i in seeds}
        for fid in fact_ids[:5]:
            if fid in facts:
                frontier |= {e for e in (facts[fid].subject, facts[fid].object) if e}
        seen_entities = set(frontier)
        for _ in range(depth):
            if not frontier:
                break
            around = index.facts_touching(
                tenant_id=tenant_id,
                entity_ids=sorted(frontier),
                window=window,
                limit=cfg.max_expanded_facts,
            )
            nxt: set[str] = set()
            for f in around:
                facts.setdefault(f.fact_id, f)
                add_fact(f)
                nxt |= {e for e in (f.subject, f.object) if e and e not in seen_entities}
            seen_entities |= nxt
            frontier = nxt

        # Episodes: candidates, sources of the facts, and those mentioning the seeds.
        episode_ids = [i for k, i in ranked if k == ItemKind.EPISODE]
        for f in facts.values():
            for src in f.sources:
                g.add_edge((ItemKind.FACT, f.fact_id), (ItemKind.EPISODE, src))
        mentions: dict[str, list[str]] = {}
        pairs = index.mentioning(
            tenant_id=tenant_id,
            entity_ids=sorted(i for _, i in seeds),
            known_at=window.known_at,
            limit=cfg.max_mentions,
        )
        pairs += index.mentions_of(tenant_id=tenant_id, episode_ids=episode_ids)
        for ep, ent in pairs:
            g.add_edge((ItemKind.EPISODE, ep), (ItemKind.ENTITY, ent))
            mentions.setdefault(ent, [])
            if ep not in mentions[ent]:
                mentions[ent].append(ep)
        # Conversation context: the turns around the best episodes, linked in order.
        chain: dict[tuple[str, int], str] = {}
        for ep, other, offset in index.session_neighbors(
            tenant_id=tenant_id,
            episode_ids=episode_ids[: cfg.context_episodes],
            known_at=window.known_at,
            radius=cfg.context_radius,
        ):
            chain[(ep, offset)] = other
        for (ep, offset), other in chain.items():
            step = 1 if offset > 0 else -1
            prev = ep if abs(offset) == 1 else chain.get((ep, offset - step))
            if prev is not None:
                g.add_edge((ItemKind.EPISODE, prev), (ItemKind.EPISODE, other), session=True)
        g.add_nodes_from((ItemKind.EPISODE, i) for i in episode_ids)
        g.add_nodes_from((ItemKind.ENTITY, i) for k, i in ranked if k == ItemKind.ENTITY)

        # Load what the graph names; drop what is not visible in the window.
        episodes = index.episodes_by_id(
            tenant_id=tenant_id,
            episode_ids=[i for k, i in g.nodes if k == ItemKind.EPISODE],
            known_at=window.known_at,
        )
        entities = index.entities_by_id(
            tenant_id=tenant_id,
            entity_ids=[i for k, i in g.nodes if k == ItemKind.ENTITY],
            known_at=window.known_at,
        )
        loaded: dict[
            ItemKind, Mapping[str, Fact] | Mapping[str, Episode] | Mapping[str, Entity]
        ] = {
            ItemKind.FACT: facts,
            ItemKind.EPISODE: episodes,
            ItemKind.ENTITY: entities,
        }
        g.remove_nodes_from([n for n in list(g.nodes) if n[1] not in loaded[n[0]]])
        return Subgraph(
            graph=g,
            seeds={s for s in seeds if s in g},
            facts=facts,
            entities=entities,
            episodes=episodes,
            mentions=mentions,
        )

    def score(
        self, sub: Subgraph, fused: dict[Node, float], relevance: dict[Node, float]
    ) -> dict[Node, float]:
        cfg = self.config
        g = sub.graph
        restart = {n: relevance.get(n, 0.0) for n in g.nodes}
        best = max(relevance.values(), default=1.0) or 1.0
        for s in sub.seeds:  # the query's entities restart at least as often as any hit
            restart[s] = max(restart[s], best)
        ppr = rank.personalised_pagerank(g, restart, alpha=cfg.alpha)
        dist = rank.distances(g, sub.seeds)
        return rank.combine(
            g.nodes,
            fused=fused,
            relevance=relevance,
            context=context_scores(g, relevance, radius=cfg.context_radius),
            ppr=ppr,
            dist=dist,
            has_seeds=bool(sub.seeds),
            cfg=cfg,
        )

    # -- the operation -------------------------------------------------------------------
    def search(
        self,
        *,
        tenant_id: str,
        query: str,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        limit: int = 10,
        scopes: Sequence[ItemKind] = ALL_KINDS,
        filters: SearchFilters | None = None,
        depth: int | None = None,
    ) -> list[SearchResult]:
        """The results of :meth:`answer`."""
        return self.answer(
            tenant_id=tenant_id,
            query=query,
            as_of=as_of,
            known_at=known_at,
            limit=limit,
            scopes=scopes,
            filters=filters,
            depth=depth,
        ).results

    def answer(
        self,
        *,
        tenant_id: str,
        query: str,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        limit: int = 10,
        scopes: Sequence[ItemKind] = ALL_KINDS,
        filters: SearchFilters | None = None,
        depth: int | None = None,
    ) -> SearchAnswer:
        """Search, and say what the search ran without."""
        check_query(query, field="query")
        if not 1 <= limit <= MAX_LIMIT:
            raise invalid(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
        if not scopes:
            raise invalid("scopes must name at least one of fact, entity, episode", field="scopes")
        window = self.window(as_of, known_at)
        # Entities are always looked up: they are where expansion starts.
        kinds = sorted(set(scopes) | {ItemKind.ENTITY})

        def run(index: SearchPort) -> SearchAnswer:
            cands = self.candidates(
                tenant_id=tenant_id,
                query=query,
                window=window,
                kinds=kinds,
                limit=max(self.config.candidates, 2 * limit),
                index=index,
            )
            fused = cands.fused(k=self.config.rrf_k)
            relevance = cands.relevance(bm25_share=self.config.bm25_share)
            sub = self.expand(
                tenant_id=tenant_id,
                window=window,
                cands=cands,
                fused=fused,
                depth=self.config.depth if depth is None else depth,
                index=index,
            )
            scores = self.score(sub, fused, relevance)
            results = self._select(
                tenant_id, window, sub, scores, set(scopes), filters, limit, index=index
            )
            return SearchAnswer(results=results, degraded=cands.degraded)

        if self.gather and isinstance(self.search_index, GatheringPort):
            return self.search_index.gather(run)
        return run(self.search_index)

    def _select(
        self,
        tenant_id: str,
        window: Window,
        sub: Subgraph,
        scores: dict[Node, float],
        scopes: set[ItemKind],
        filters: SearchFilters | None,
        limit: int,
        *,
        index: SearchPort,
    ) -> list[SearchResult]:
        f = filters or SearchFilters()
        order = sorted(
            (n for n in scores if n[0] in scopes), key=lambda n: (-scores[n], n[0].value, n[1])
        )
        keep: list[Node] = []
        facts: list[Fact] = []
        for n in order:
            kind, item_id = n
            if kind == ItemKind.FACT:
                if f.keeps_fact(sub.facts[item_id]):
                    keep.append(n)
                    facts.append(sub.facts[item_id])
            elif kind == ItemKind.EPISODE or f.entity_types is None:
                keep.append(n)  # no entity filter: the entity need not be decoded
            elif f.keeps_entity(sub.entities[item_id]):
                keep.append(n)
        # Episodes stating a value that is not valid in the window never appear beside it.
        # They are checked in rank order, a batch at a time, until the page is full.
        picked: list[Node] = []
        stale: set[str] = set()
        checked: set[str] = set()
        episodes = [i for k, i in keep if k == ItemKind.EPISODE][:MAX_STALE]
        for n in keep:
            if len(picked) == limit:
                break
            if n[0] == ItemKind.EPISODE:
                if n[1] not in checked:
                    start = episodes.index(n[1]) if n[1] in episodes else len(episodes)
                    batch = episodes[start : start + limit]
                    if not batch:
                        continue  # past MAX_STALE: not returned unchecked
                    stale |= stale_episodes(
                        index,
                        tenant_id=tenant_id,
                        window=window,
                        episode_ids=batch,
                        episodes=sub.episodes,
                        facts=facts[:limit],
                    )
                    checked |= set(batch)
                if n[1] in stale:
                    continue
            picked.append(n)
        return [self._result(tenant_id, window, sub, n, scores[n], index) for n in picked]

    def _result(
        self,
        tenant_id: str,
        window: Window,
        sub: Subgraph,
        n: Node,
        score: float,
        index: SearchPort,
    ) -> SearchResult:
        kind, item_id = n
        item: Fact | Entity | Episode
        if kind == ItemKind.FACT:
            item = sub.facts[item_id]
            sources = list(item.sources) or (
                [item.source_episode_id] if item.source_episode_id else []
            )
        elif kind == ItemKind.EPISODE:
            item = sub.episodes[item_id]
            sources = [item_id]
        else:
            item = sub.entities[item_id]
            sources = sub.mentions.get(item_id) or [
                ep
                for ep, _ in index.mentioning(
                    tenant_id=tenant_id, entity_ids=[item_id], known_at=window.known_at, limit=5
                )
            ]
            sources = sources[:5]
        return SearchResult(kind=kind, score=round(score, 6), item=item, source_episode_ids=sources)


def context_scores(g: nx.Graph, relevance: dict[Node, float], *, radius: int) -> dict[Node, float]:
    """The best relevance near each node: for an episode, among the turns within
    ``radius`` of it in its session; for a fact, among its source episodes. A reply is
    found through the question it answers, and the other way round."""
    session = g.edge_subgraph([(a, b) for a, b, d in g.edges(data=True) if d.get("session")])
    out: dict[Node, float] = {}
    for n in g.nodes:
        if n[0] == ItemKind.EPISODE and n in session:
            near = nx.single_source_shortest_path_length(session, n, cutoff=radius)
            out[n] = max((relevance.get(m, 0.0) for m in near if m != n), default=0.0)
        elif n[0] == ItemKind.FACT:
            out[n] = max(
                (relevance.get(m, 0.0) for m in g.neighbors(n) if m[0] == ItemKind.EPISODE),
                default=0.0,
            )
    return out


def check_query(text: str, *, field: str) -> None:
    if not text.strip():
        raise invalid("must not be empty", field=field)
    if len(text) > MAX_QUERY_CHARS:
        raise invalid(f"must be at most {MAX_QUERY_CHARS} characters", field=field)


__all__ = [
    "ALL_KINDS",
    "Candidates",
    "Retriever",
    "SearchAnswer",
    "SearchFilters",
    "SearchResult",
    "Subgraph",
    "check_query",
]
