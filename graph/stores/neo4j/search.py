"""Fulltext, vector and graph reads of the read path on Neo4j (``cypher/search_*.cypher``).

The indexes are schema.setup's: fulltext ``fact_text`` (FACT relationships, one per
version), ``episode_text``, ``entity_text``; vector ``fact_vector`` (FactVector nodes,
one per fact), ``episode_embedding``, ``entity_embedding``. Both kinds filter by tenant
inside the index, so what other tenants hold changes neither a tenant's results nor their
cost:

- vector: the Cypher 25 ``SEARCH ... WHERE`` over the index's filter properties (tenant
  and model; for facts one property, ``live_scope``, holds both while the fact has a
  version open in system time, and ``scope`` always);
- fulltext: every item is indexed under its tenant's own terms (each word prefixed with
  the tenant's token, :func:`graph.stores.neo4j.codec.fact_terms`; the open fact version
  also under a "current" prefix), so a query names only its tenant's terms, BM25 counts
  only that tenant's documents, and Lucene skips the postings of common words.

What the indexes cannot filter is checked on the rows they return: valid time (as_of),
and for a past known_at the system-time window (the index then offers every version of
the tenant). A search of the present (as_of = known_at = now) fetches a quarter more rows
than it needs (only facts whose validity ended or has not begun are hidden), any other
``4 * limit`` (at least 64); then four times more while too few are in the window, up to
``_MAX_FETCH`` rows of this tenant: a tenant whose own versions outside the window
outnumber that can get fewer hits for a past window.

Vectors are written by :meth:`Neo4jSearch.index_pending` (the indexer, off the request
path), never by the write path: it embeds what was recorded since a per-process watermark
(minus a lag that covers transactions still committing). A fact has one vector whatever
its versions: a cut interval's new versions share their fact's sentence, and so its
vector, and cutting one rewrites no vector index entry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from neo4j import ManagedTransaction
from neo4j.exceptions import SessionExpired

from graph.embeddings import Embedder, Vectors
from graph.model import Entity, Episode, Fact
from graph.retrieval.port import (
    GatheredReads,
    HeldVersion,
    HeldVersions,
    Hit,
    ItemKind,
    Pending,
    Window,
)
from graph.retrieval.text import index_terms, lucene_query
from graph.stores.codec import Decoded, held_version
from graph.stores.neo4j.codec import (
    Row,
    entity_from_props,
    episode_from_props,
    fact_from_props,
    fact_terms,
    from_neo,
    scope_token,
    utc,
)
from graph.stores.neo4j.connection import Neo4jConnection
from graph.timeutil import utcnow

# A write stamped before the watermark may still be committing when a pass runs; items
# recorded within this lag of it are looked at again by the next pass.
WATERMARK_LAG = timedelta(minutes=1)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FETCH_GROWTH = 4
_MAX_FETCH = 4096  # rows of one tenant read from one index call at most
_BACKFILL_BATCH = 10_000
# Versions whose vector moves per transaction: each carries a 384-float list, which the
# transaction's state holds boxed (10,000 of them passed Neo4j's default 256 MiB
# transaction memory limit at 100k facts).
_MOVE_BATCH = 1_000
_setup_lock = threading.Lock()
T = TypeVar("T")

_FULLTEXT = {
    ItemKind.FACT: "search.fulltext_facts",
    ItemKind.EPISODE: "search.fulltext_episodes",
    ItemKind.ENTITY: "search.fulltext_entities",
}
_VECTOR = {
    ItemKind.FACT: "search.vector_facts",
    ItemKind.EPISODE: "search.vector_episodes",
    ItemKind.ENTITY: "search.vector_entities",
}
# What each index must cover; an older definition is dropped and created again.
_INDEX_PROPERTIES = {
    "fact_text": ["terms", "terms_current"],
    "entity_text": ["terms"],
    "episode_text": ["terms"],
    "fact_vector": ["embedding", "scope", "live_scope"],
    "entity_embedding": ["embedding", "tenant_id", "embedding_model"],
    "episode_embedding": ["embedding", "tenant_id", "embedding_model"],
}
_VECTOR_INDEXES = ("fact_vector", "entity_embedding", "episode_embedding", "fact_embedding")
_PENDING = {
    ItemKind.FACT: "search.pending_facts",
    ItemKind.EPISODE: "search.pending_episodes",
    ItemKind.ENTITY: "search.pending_entities",
}
_SET_VECTORS = {
    ItemKind.FACT: "search.set_fact_vectors",
    ItemKind.EPISODE: "search.set_episode_vectors",
    ItemKind.ENTITY: "search.set_entity_vectors",
}


class Neo4jSearch:
    """The read path's indexes and reads of one Neo4j store, over the store's connection."""

    def __init__(self, conn: Neo4jConnection) -> None:
        self.conn = conn
        self._ready = False
        # Per (tenant, kind, model): when the last indexing pass started.
        self._watermarks: dict[tuple[str, str, str], datetime] = {}
        # Per model: nothing recorded before it waits for a vector (see pending()).
        self._pending_low: dict[str, datetime] = {}
        self._pending_ready = False
        self._tx: ManagedTransaction | None = None  # set on a gathered view only

    def init(self) -> None:
        """Create the read path's extra indexes, and migrate fulltext and vector indexes
        made before in-index filtering (idempotent)."""
        with _setup_lock:
            if self._ready:
                return
            self.migrate()
            self.conn.run("search.setup", {})
            self._ready = True

    def migrate(self) -> bool:
        """Recreate outdated search indexes and backfill the properties they read or
        filter on, and move fact vectors off the versions; whether anything was
        outdated. Only the outdated kind of index is dropped: rebuilding the vector
        indexes of a large store takes long."""
        found = {r["name"]: r for r in self.conn.run("search.indexes", {})}
        outdated = [
            name
            for name, props in _INDEX_PROPERTIES.items()
            if name in found and sorted(found[name]["properties"] or []) != sorted(props)
        ]
        # Built with Neo4j's default binary quantization (before sgam turned it off).
        quantized = [
            name
            for name in _VECTOR_INDEXES
            if name in found and name != "fact_embedding" and _quantized(found[name])
        ]
        # Before FactVector nodes, each version carried its fact's vector (fact_embedding).
        versions_held_vectors = "fact_embedding" in found
        if not outdated and not quantized and not versions_held_vectors:
            return False
        config = next((found[n].get("options") or {} for n in _VECTOR_INDEXES if n in found), {})
        dim = int((config.get("indexConfig") or {}).get("vector.dimensions") or 384)
        # fact_vector outdated alone (its filter properties changed): only it is rebuilt.
        drop_all = any(name in _VECTOR_INDEXES and name != "fact_vector" for name in outdated)
        fulltext = [name for name in outdated if name not in _VECTOR_INDEXES]
        if fulltext or drop_all:
            self._backfill_terms()
        if "fact_vector" in outdated:
            self._backfill_fact_vector_scopes()
        if drop_all:
            self.conn.run("search.drop_indexes", {})
        else:
            if fulltext:
                self.conn.run("search.drop_fulltext_indexes", {})
            if quantized:  # rebuilt from the vectors the nodes hold: ~20 s at 100k facts
                self.conn.run("search.drop_vector_indexes", {})
            elif "fact_vector" in outdated:
                self.conn.run("search.drop_fact_vector_index", {})
        self.conn.run("schema.setup", {"embedding_dim": dim})
        if versions_held_vectors:
            self._move_fact_vectors()
            # Dropped last: while it exists, an interrupted move is taken up again.
            self.conn.run("search.drop_version_vectors_index", {})
        return True

    def _move_fact_vectors(self) -> None:
        """Give each fact one FactVector node with the vector its versions carried, and
        take the vectors off the versions, a batch of versions at a time."""
        after = ""
        while True:
            (row,) = self.conn.run(
                "search.move_fact_vectors", {"after": after, "batch": _MOVE_BATCH}
            )
            if row["last"] is None:
                return
            after = row["last"]

    def _backfill_fact_vector_scopes(self) -> None:
        """Give every FactVector written before them the index's filter properties, a
        tenant's batch at a time (linear: each batch starts after the last one's id)."""
        for t in self.conn.run("search.fact_vector_tenants", {}):
            after = ""
            while True:
                (row,) = self.conn.run(
                    "search.backfill_fact_vector_scopes",
                    {"tenant_id": t["tenant_id"], "after": after, "batch": _BACKFILL_BATCH},
                )
                if row["last"] is None:
                    break
                after = row["last"]

    def _backfill_terms(self) -> None:
        """Give every fact version, entity and episode written before the tenant-prefixed
        fulltext terms its terms (and a version its current flag), a batch at a time."""
        after = ""
        while rows := self.conn.run(
            "search.backfill_facts", {"after": after, "batch": _BACKFILL_BATCH}
        ):
            out = []
            for r in rows:
                held, now = fact_terms(r["tenant_id"], r["text"] or "", open_version=r["open"])
                out.append({"id": r["id"], "open": r["open"], "terms": held, "terms_current": now})
            self.conn.run("search.set_fact_terms", {"rows": out})
            after = rows[-1]["id"]
        for t in self.conn.run("search.backfill_tenants", {}):
            tenant_id = t["tenant_id"]
            scope = scope_token(tenant_id)
            for template in ("search.backfill_entities", "search.backfill_episodes"):
                after = ""
                while rows := self.conn.run(
                    template, {"tenant_id": tenant_id, "after": after, "batch": _BACKFILL_BATCH}
                ):
                    missing = [
                        {"node": r["node"], "terms": index_terms(scope, r["text"])}
                        for r in rows
                        if r["missing"]
                    ]
                    if missing:
                        self.conn.run("search.set_node_terms", {"rows": missing})
                    after = rows[-1]["key"]

    def _s(self, name: str, params: Mapping[str, Any]) -> list[Row]:
        if not self._ready:
            self.init()
        # The search templates return values, maps and lists only (no graph types).
        return self.conn.run(name, params, tx=self._tx, plain=True)

    def gather(self, work: Callable[[GatheredReads], T]) -> T:
        """Run one search's reads in one read transaction, through a view that fetches the
        candidates in one query and the expansion with its loads in another
        (:class:`_Gathered`)."""
        if not self._ready:
            self.init()
        return self.conn.read(lambda tx: work(_Gathered(self, tx)))

    # -- indexing ----------------------------------------------------------------------
    def index_pending(
        self,
        *,
        tenant_id: str,
        embedder: Embedder,
        batch_size: int = 256,
        limit: int | None = None,
    ) -> int:
        model = embedder.name
        marks = self._watermarks
        done = 0
        for kind in ItemKind:
            key = (tenant_id, kind.value, model)
            started = utcnow()
            # The pass's cursor: each batch starts after the last row of the one before,
            # so a pass reads each waiting item once (linear in the backlog).
            since = utc(marks.get(key, _EPOCH + WATERMARK_LAG) - WATERMARK_LAG)
            after = ""
            drained = False
            while limit is None or done < limit:
                take = batch_size if limit is None else min(batch_size, limit - done)
                rows = self._s(
                    _PENDING[kind],
                    {
                        "tenant_id": tenant_id,
                        "since": since,
                        "after": after,
                        "model": model,
                        "limit": take,
                    },
                )
                if rows:
                    done += self._embed(tenant_id, kind, rows, embedder)
                    # Back as the offset time the items were stored with: a DateTime in
                    # the driver's named UTC zone sorts after them at the same instant.
                    last = from_neo(rows[-1]["at"])
                    assert last is not None
                    since, after = utc(last), rows[-1]["cursor"]
                if len(rows) < take:
                    drained = True
                    break
            if drained:  # a kind cut short by the limit keeps its watermark
                marks[key] = started
        return done

    def pending(self, *, model: str) -> list[Pending]:
        if not self._pending_ready:
            with _setup_lock:
                self.conn.run("search.pending_setup", {})
            self._pending_ready = True
        started = utcnow()
        since = self._pending_low.get(model, _EPOCH + WATERMARK_LAG) - WATERMARK_LAG
        rows = self._s("search.pending_stats", {"since": utc(since), "model": model})
        out = [
            Pending(
                tenant_id=r["tenant_id"],
                kind=ItemKind(r["kind"]),
                count=int(r["n"]),
                oldest=from_neo(r["oldest"]),
            )
            for r in rows
            if r["n"]
        ]
        # Nothing recorded before the oldest waiting item (or before this pass, if none
        # waits) is pending; the lag covers writes still committing.
        self._pending_low[model] = min(
            (p.oldest for p in out if p.oldest is not None), default=started
        )
        return out

    def _embed(self, tenant_id: str, kind: ItemKind, rows: list[Row], embedder: Embedder) -> int:
        model = embedder.name
        rows = list({r["id"]: r for r in reversed(rows)}.values())  # a fact's versions: once
        texts = sorted({r["text"] or "" for r in rows})
        vectors = dict(zip(texts, embedder.encode(texts), strict=True)) if texts else {}
        out: list[dict[str, Any]] = []
        for r in rows:
            item: dict[str, Any] = {
                "id": r["id"],
                "vector": [float(x) for x in vectors[r["text"] or ""]],
            }
            if kind == ItemKind.EPISODE:
                item["text"] = r["text"]
            out.append(item)
        out.sort(key=lambda o: str(o["id"]))  # the lock order (search.set_fact_vectors)
        self._s(_SET_VECTORS[kind], {"tenant_id": tenant_id, "rows": out, "model": model})
        return len(rows)

    # -- candidates --------------------------------------------------------------------
    def _widening(
        self,
        name: str,
        params: dict[str, Any],
        limit: int,
        window: Window,
        *,
        cosine: bool = False,
        fetch: int | None = None,
    ) -> list[Hit]:
        """Run an index query with a growing ``fetch`` (from ``fetch`` when given: what a
        gathered search already read is not read again) until ``limit`` visible items are
        found or the index has nothing more; keep each item's best score."""
        fetch = fetch or _first_fetch(limit, window)
        while True:
            hits = _hits(self._s(name, {**params, "fetch": fetch}), fetch, limit, cosine=cosine)
            if hits is not None:
                return hits
            fetch = min(fetch * _FETCH_GROWTH, _MAX_FETCH)

    def fulltext(
        self,
        *,
        tenant_id: str,
        kind: ItemKind,
        terms: Sequence[str],
        window: Window,
        limit: int,
        fetch: int | None = None,
    ) -> list[Hit]:
        """``fetch``: the first index call's rows, when not the first fetch's (a gathered
        search widening past what its prefetch read)."""
        if not terms:
            return []
        params: dict[str, Any] = {
            "query": fulltext_query(tenant_id, kind, terms, window),
            "tenant_id": tenant_id,
            "known_at": utc(window.known_at),
        }
        if kind == ItemKind.FACT:
            params["as_of"] = utc(window.as_of)
        return self._widening(_FULLTEXT[kind], params, limit, window, fetch=fetch)

    def vector_search(
        self,
        *,
        tenant_id: str,
        kind: ItemKind,
        vector: Vectors,
        model: str,
        window: Window,
        limit: int,
        fetch: int | None = None,
    ) -> list[Hit]:
        """``fetch`` as for :meth:`fulltext`."""
        params: dict[str, Any] = {
            "vector": [float(x) for x in vector],
            "tenant_id": tenant_id,
            "model": model,
            "known_at": utc(window.known_at),
        }
        if kind == ItemKind.FACT:
            params["as_of"] = utc(window.as_of)
        name = _VECTOR[kind]
        if kind == ItemKind.FACT and not window.latest:
            name = "search.vector_facts_past"
        return self._widening(name, params, limit, window, cosine=True, fetch=fetch)

    # -- items -------------------------------------------------------------------------
    def facts_by_id(
        self, *, tenant_id: str, fact_ids: Sequence[str], window: Window
    ) -> dict[str, Fact]:
        if not fact_ids:
            return {}
        rows = self._s(
            "search.facts_by_id",
            {
                "tenant_id": tenant_id,
                "fact_ids": sorted(set(fact_ids)),
                "as_of": utc(window.as_of),
                "known_at": utc(window.known_at),
            },
        )
        return {f.fact_id: f for f in (fact_from_props(r["fact"]) for r in rows)}

    def facts_touching(
        self, *, tenant_id: str, entity_ids: Sequence[str], window: Window, limit: int
    ) -> list[Fact]:
        if not entity_ids:
            return []
        rows = self._s(
            "search.facts_touching",
            {
                "tenant_id": tenant_id,
                "entity_ids": sorted(set(entity_ids)),
                "as_of": utc(window.as_of),
                "known_at": utc(window.known_at),
                "limit": limit,
            },
        )
        return [fact_from_props(r["fact"]) for r in rows]

    def staleness_versions(
        self,
        *,
        tenant_id: str,
        episode_ids: Sequence[str],
        pairs: Sequence[tuple[str, str]],
        window: Window,
    ) -> HeldVersions:
        if not episode_ids:
            return HeldVersions(around=[], pairs=[])
        row = self._s(
            "search.staleness",
            {
                "tenant_id": tenant_id,
                "episode_ids": _ids(episode_ids),
                "pairs": [list(p) for p in sorted(set(pairs))],
                "as_of": utc(window.as_of),
                "known_at": utc(window.known_at),
            },
        )[0]
        self._staleness_loaded(row["episodes"])
        return HeldVersions(around=_held(row["around"]), pairs=_held(row["versions"]))

    def _staleness_loaded(self, episodes: list[Row]) -> None:
        """The records of the checked episodes, which the query loads too: a gathered view
        keeps them for the page (:meth:`_Gathered.episode_row`)."""

    def episodes_by_id(
        self, *, tenant_id: str, episode_ids: Sequence[str], known_at: datetime
    ) -> Mapping[str, Episode]:
        if not episode_ids:
            return {}
        rows = self._s(
            "search.episodes_by_id",
            {
                "tenant_id": tenant_id,
                "episode_ids": sorted(set(episode_ids)),
                "known_at": utc(known_at),
            },
        )
        return Decoded({r["episode"]["episode_id"]: r["episode"] for r in rows}, episode_from_props)

    def entities_by_id(
        self, *, tenant_id: str, entity_ids: Sequence[str], known_at: datetime
    ) -> Mapping[str, Entity]:
        if not entity_ids:
            return {}
        rows = self._s(
            "search.entities_by_id",
            {
                "tenant_id": tenant_id,
                "entity_ids": sorted(set(entity_ids)),
                "known_at": utc(known_at),
            },
        )
        return Decoded(
            {r["entity"]["entity_id"]: r["entity"] for r in rows},
            lambda p: entity_from_props(tenant_id, p),
        )

    def mentions_of(self, *, tenant_id: str, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        if not episode_ids:
            return []
        rows = self._s(
            "search.mentions_of",
            {"tenant_id": tenant_id, "episode_ids": sorted(set(episode_ids))},
        )
        return [(r["episode_id"], r["entity_id"]) for r in rows]

    def mentioning(
        self, *, tenant_id: str, entity_ids: Sequence[str], known_at: datetime, limit: int
    ) -> list[tuple[str, str]]:
        if not entity_ids:
            return []
        rows = self._s(
            "search.mentioning",
            {
                "tenant_id": tenant_id,
                "entity_ids": sorted(set(entity_ids)),
                "known_at": utc(known_at),
                "limit": limit,
            },
        )
        return [(r["episode_id"], r["entity_id"]) for r in rows]

    def session_neighbors(
        self, *, tenant_id: str, episode_ids: Sequence[str], known_at: datetime, radius: int
    ) -> list[tuple[str, str, int]]:
        if radius < 1 or not episode_ids:
            return []
        rows = self._s(
            "search.session_neighbors",
            {
                "tenant_id": tenant_id,
                "episode_ids": sorted(set(episode_ids)),
                "known_at": utc(known_at),
                "radius": radius,
            },
        )
        return [(r["episode_id"], r["other"], int(r["offset"])) for r in rows]


def _quantized(index: Row) -> bool:
    """Whether a vector index searches quantized vectors: newer index providers say so
    with ``vector.quantization.type`` (``NONE`` when off), older ones with
    ``vector.quantization.enabled``."""
    config = (index.get("options") or {}).get("indexConfig") or {}
    kind = config.get("vector.quantization.type")
    if kind is not None:
        return str(kind).upper() != "NONE"
    return bool(config.get("vector.quantization.enabled", False))


def _first_fetch(limit: int, window: Window) -> int:
    """Rows of the first index call. In the present the indexes filter all but valid
    time, so nearly every row is visible; each row costs (the vector search most), and
    the widening covers a tenant with many facts whose validity ended."""
    if window.latest and window.as_of == window.known_at:
        return limit + max(limit // 4, 8)
    return max(limit * _FETCH_GROWTH, 64)


def _hits(rows: Sequence[Row], fetch: int, limit: int, *, cosine: bool) -> list[Hit] | None:
    """The best ``limit`` visible items of one index query's rows, each at its best score;
    None when too few were visible and a larger fetch could find more."""
    visible = [(r["item_id"], r["score"]) for r in rows if r["ok"]]
    return _best(visible, len(rows), fetch, limit, cosine=cosine)


def _best(
    visible: Iterable[Sequence[Any]], n: int, fetch: int, limit: int, *, cosine: bool
) -> list[Hit] | None:
    """:func:`_hits` of the visible ``[item_id, score]`` pairs among ``n`` rows."""
    best: dict[str, float] = {}
    for item_id, score in visible:
        # Neo4j's cosine score is (1 + cos) / 2; search compares cosines.
        s = 2.0 * float(score) - 1.0 if cosine else float(score)
        if s > best.get(item_id, float("-inf")):
            best[item_id] = s
    if len(best) >= limit or n < fetch or fetch >= _MAX_FETCH:
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
        return [Hit(i, s) for i, s in ranked[:limit]]
    return None


def fulltext_query(tenant_id: str, kind: ItemKind, terms: Sequence[str], window: Window) -> str:
    """The Lucene query of one search's terms: any of them, as the tenant's own terms
    (codec.fact_terms); a search of the present reads a fact's open versions only."""
    current = kind == ItemKind.FACT and window.latest
    field = "terms_current" if current else "terms"
    scope = scope_token(tenant_id, current=current)
    return f"{field}:(" + lucene_query(f"{scope}_{t}" for t in terms) + ")"


def _held(rows: Sequence[list[Any]]) -> list[HeldVersion]:
    """search.staleness's lists (fragment held_version), as HeldVersions."""
    return [held_version(r, r[7] or ()) for r in rows]


def _ids(ids: Sequence[str]) -> list[str]:
    """Ids as every per-call read sends them: once each, sorted."""
    return sorted(set(ids))


class _Gathered(Neo4jSearch):
    """One search's reads in one read transaction (:meth:`Neo4jSearch.gather`).

    ``prefetch_candidates`` runs search.gather_candidates (every kind's fulltext and vector
    rows at the first fetch size); ``prefetch_expansion`` runs search.gather_expansion.
    The :class:`SearchPort` calls that follow are answered from those rows when their
    arguments are the ones foreseen, by the same code as the per-call reads, so the answers
    are the same; any other call (a widening fetch, a second hop, the staleness check) runs
    its own template in the same transaction. The staleness check is one query in any case
    (search.staleness); here the episodes' records it loads answer the page.
    """

    def __init__(self, base: Neo4jSearch, tx: ManagedTransaction) -> None:
        super().__init__(base.conn)
        self._ready = True
        self._tx = tx
        self._cand_key: tuple[Any, ...] | None = None
        self._cand_vector: list[float] | None = None
        self._cand_model = ""
        self._cand_fetch = 0
        self._cand_rows: dict[tuple[str, str], Row] = {}
        self._x_key: tuple[Any, ...] | None = None
        self._x: Row = {}
        self._x_facts: dict[str, Fact] | None = None
        self._episode_rows: dict[str, Row] = {}  # loaded by the staleness checks

    # -- candidates --------------------------------------------------------------------
    def prefetch_candidates(
        self,
        *,
        tenant_id: str,
        terms: Sequence[str],
        vector: Vectors | None,
        model: str,
        window: Window,
        limit: int,
    ) -> None:
        fetch = _first_fetch(limit, window)
        vec = None if vector is None else [float(x) for x in vector]
        queries = {
            kind: fulltext_query(tenant_id, kind, terms, window) if terms else None
            for kind in ItemKind
        }
        rows = self._s(
            "search.gather_candidates" if window.latest else "search.gather_candidates_past",
            {
                "tenant_id": tenant_id,
                "fact_query": queries[ItemKind.FACT],
                "entity_query": queries[ItemKind.ENTITY],
                "episode_query": queries[ItemKind.EPISODE],
                "fetch": fetch,
                "vector": vec,
                "model": model,
                "as_of": utc(window.as_of),
                "known_at": utc(window.known_at),
            },
        )
        grouped = {(r["kind"], r["signal"]): r for r in rows}
        self._cand_key = (tenant_id, tuple(terms), window, limit)
        self._cand_vector = vec
        self._cand_model = model
        self._cand_fetch = fetch
        self._cand_rows = grouped

    def _wider(self) -> int:
        """The fetch after the prefetched one, when its rows held too few visible items."""
        return min(self._cand_fetch * _FETCH_GROWTH, _MAX_FETCH)

    def _cand_hits(
        self, kind: ItemKind, signal: str, limit: int, *, cosine: bool
    ) -> list[Hit] | None:
        """The prefetched rows' answer for one index; None: a larger fetch is needed."""
        row = self._cand_rows.get((kind.value, signal))
        if row is None:  # the index gave no row at all
            return _best([], 0, self._cand_fetch, limit, cosine=cosine)
        return _best(row["hits"], int(row["n"]), self._cand_fetch, limit, cosine=cosine)

    def fulltext(
        self,
        *,
        tenant_id: str,
        kind: ItemKind,
        terms: Sequence[str],
        window: Window,
        limit: int,
        fetch: int | None = None,
    ) -> list[Hit]:
        if fetch is None and self._cand_key == (tenant_id, tuple(terms), window, limit):
            hits = self._cand_hits(kind, "bm25", limit, cosine=False) if terms else []
            if hits is not None:
                return hits
            fetch = self._wider()
        return super().fulltext(
            tenant_id=tenant_id, kind=kind, terms=terms, window=window, limit=limit, fetch=fetch
        )

    def vector_search(
        self,
        *,
        tenant_id: str,
        kind: ItemKind,
        vector: Vectors,
        model: str,
        window: Window,
        limit: int,
        fetch: int | None = None,
    ) -> list[Hit]:
        key = self._cand_key
        if (
            fetch is None
            and key is not None
            and key[0] == tenant_id
            and key[2] == window
            and key[3] == limit
            and self._cand_model == model
            and self._cand_vector == [float(x) for x in vector]
        ):
            hits = self._cand_hits(kind, "vector", limit, cosine=True)
            if hits is not None:
                return hits
            fetch = self._wider()
        return super().vector_search(
            tenant_id=tenant_id,
            kind=kind,
            vector=vector,
            model=model,
            window=window,
            limit=limit,
            fetch=fetch,
        )

    # -- expansion and loads -----------------------------------------------------------
    def prefetch_expansion(
        self,
        *,
        tenant_id: str,
        window: Window,
        fact_ids: Sequence[str],
        top_fact_ids: Sequence[str],
        seed_ids: Sequence[str],
        entity_ids: Sequence[str],
        episode_ids: Sequence[str],
        context_ids: Sequence[str],
        hop: bool,
        max_facts: int,
        max_mentions: int,
        radius: int,
    ) -> None:
        params: dict[str, Any] = {
            "tenant_id": tenant_id,
            "fact_ids": _ids(fact_ids),
            "top_fact_ids": list(top_fact_ids),
            "seed_ids": _ids(seed_ids),
            "entity_ids": _ids(entity_ids),
            "episode_ids": _ids(episode_ids),
            "context_ids": _ids(context_ids),
            "hop": hop,
            "max_facts": max_facts,
            "max_mentions": max_mentions,
            "radius": radius,
            "as_of": utc(window.as_of),
            "known_at": utc(window.known_at),
        }
        self._x = self._s("search.gather_expansion", params)[0]
        self._x.update(params)
        self._x["episode_scope"] = set(self._x["episode_scope"])
        self._x["episodes"] = set(self._x["episodes"])  # the visible ones' ids
        self._x["entity_scope"] = set(self._x["entity_scope"])
        self._x_key = (tenant_id, window)
        self._x_facts = None

    # -- the staleness check ------------------------------------------------------------
    def _staleness_loaded(self, episodes: list[Row]) -> None:
        self._episode_rows.update((p["episode_id"], p) for p in episodes)

    def _foreseen(self, tenant_id: str, known_at: datetime) -> bool:
        key = self._x_key
        return key is not None and key[0] == tenant_id and key[1].known_at == known_at

    def facts_by_id(
        self, *, tenant_id: str, fact_ids: Sequence[str], window: Window
    ) -> dict[str, Fact]:
        x = self._x
        if self._x_key == (tenant_id, window) and _ids(fact_ids) == x["fact_ids"]:
            if self._x_facts is None:
                self._x_facts = {f.fact_id: f for f in (fact_from_props(p) for p in x["facts"])}
            return dict(self._x_facts)
        return super().facts_by_id(tenant_id=tenant_id, fact_ids=fact_ids, window=window)

    def facts_touching(
        self, *, tenant_id: str, entity_ids: Sequence[str], window: Window, limit: int
    ) -> list[Fact]:
        x = self._x
        if (
            self._x_key == (tenant_id, window)
            and x["hop"]
            and limit == x["max_facts"]
            and entity_ids
            and set(entity_ids) == set(x["frontier"])
        ):
            return [fact_from_props(p) for p in x["around"]]
        return super().facts_touching(
            tenant_id=tenant_id, entity_ids=entity_ids, window=window, limit=limit
        )

    def mentioning(
        self, *, tenant_id: str, entity_ids: Sequence[str], known_at: datetime, limit: int
    ) -> list[tuple[str, str]]:
        x = self._x
        if (
            self._foreseen(tenant_id, known_at)
            and limit == x["max_mentions"]
            and _ids(entity_ids) == x["seed_ids"]
        ):
            return [(ep, ent) for ep, ent in x["mentioning"]]
        return super().mentioning(
            tenant_id=tenant_id, entity_ids=entity_ids, known_at=known_at, limit=limit
        )

    def mentions_of(self, *, tenant_id: str, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        x = self._x
        if (
            self._x_key is not None
            and self._x_key[0] == tenant_id
            and (_ids(episode_ids) == x["episode_ids"])
        ):
            return [(ep, ent) for ep, ent in x["mentions"]]
        return super().mentions_of(tenant_id=tenant_id, episode_ids=episode_ids)

    def session_neighbors(
        self, *, tenant_id: str, episode_ids: Sequence[str], known_at: datetime, radius: int
    ) -> list[tuple[str, str, int]]:
        x = self._x
        if (
            self._foreseen(tenant_id, known_at)
            and radius == x["radius"]
            and _ids(episode_ids) == x["context_ids"]
        ):
            if radius < 1:
                return []
            return [(ep, other, int(offset)) for ep, other, offset in x["neighbours"]]
        return super().session_neighbors(
            tenant_id=tenant_id, episode_ids=episode_ids, known_at=known_at, radius=radius
        )

    def episodes_by_id(
        self, *, tenant_id: str, episode_ids: Sequence[str], known_at: datetime
    ) -> Mapping[str, Episode]:
        x = self._x
        ids = _ids(episode_ids)
        if self._foreseen(tenant_id, known_at) and x["episode_scope"].issuperset(ids):
            visible = sorted(x["episodes"].intersection(ids))
            return Decoded(_EpisodeRows(self, tenant_id, known_at, visible), episode_from_props)
        return super().episodes_by_id(
            tenant_id=tenant_id, episode_ids=episode_ids, known_at=known_at
        )

    def episode_row(self, tenant_id: str, known_at: datetime, key: str, keys: Sequence[str]) -> Row:
        """One episode's record: as a staleness check loaded it, else read now with those
        of ``keys`` not loaded yet (one query; a search that shows only episodes it has
        checked never gets here)."""
        row = self._episode_rows.get(key)
        if row is None:
            missing = sorted({k for k in keys if k not in self._episode_rows} | {key})
            rows = self._s(
                "search.episodes_by_id",
                {"tenant_id": tenant_id, "episode_ids": missing, "known_at": utc(known_at)},
            )
            self._episode_rows.update((r["episode"]["episode_id"], r["episode"]) for r in rows)
            row = self._episode_rows.get(key)
            if row is None:
                # Erased since the expansion read it (Neo4j reads committed data, query by
                # query): a retryable error makes the driver run the whole search again.
                raise SessionExpired(f"episode {key!r} was erased during the search")
        return row

    def entities_by_id(
        self, *, tenant_id: str, entity_ids: Sequence[str], known_at: datetime
    ) -> Mapping[str, Entity]:
        x = self._x
        ids = _ids(entity_ids)
        if self._foreseen(tenant_id, known_at) and x["entity_scope"].issuperset(ids):
            wanted = set(ids)
            found = {p["entity_id"]: p for p in x["entities"] if p["entity_id"] in wanted}
            return Decoded(dict(sorted(found.items())), lambda p: entity_from_props(tenant_id, p))
        return super().entities_by_id(tenant_id=tenant_id, entity_ids=entity_ids, known_at=known_at)


class _EpisodeRows(Mapping[str, Row]):
    """The records of the episodes a gathered expansion found visible, by id, each read
    when first asked for (:meth:`_Gathered.episode_row`)."""

    def __init__(
        self, view: _Gathered, tenant_id: str, known_at: datetime, keys: Sequence[str]
    ) -> None:
        self._view = view
        self._tenant_id = tenant_id
        self._known_at = known_at
        self._keys = keys
        self._index = set(keys)

    def __getitem__(self, key: str) -> Row:
        if key not in self._index:
            raise KeyError(key)
        return self._view.episode_row(self._tenant_id, self._known_at, key, self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


__all__ = ["WATERMARK_LAG", "Neo4jSearch", "fulltext_query", "scope_token"]
