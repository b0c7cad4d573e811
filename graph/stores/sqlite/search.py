"""Fulltext (FTS5, BM25) and vector search on SQLite.

One ``search_docs`` row per searchable item — a fact (one row per ``fact_id``, shared by
its versions, whose sentence never changes), an entity (name, aliases, summary) or an
episode (its text) — kept in step with the ledger's tables (by triggers, and for facts by
the store's insert of each batch, :data:`FACT_DOC_INSERT`), so fulltext sees a write as
soon as it commits and the write path never loads a model. ``search_fts`` is an FTS5
index over it whose content is the view ``search_terms``. Vectors are filled in by
:meth:`SqliteSearch.index_pending` (the indexer calls it, off the request path) and scored
with numpy over a per-tenant matrix cached in the process.

Tenancy inside FTS5: each doc's ``scope`` is a prefix standing for its tenant and kind,
and the index holds each of its words as ``<scope>_<word>``
(:mod:`graph.stores.sqlite.terms`; ``body`` keeps the plain text the model embeds). FTS5
counts documents per term, so BM25's document frequencies are the tenant's own (another
tenant's rows do not move its ranking), and a MATCH names the tenant's terms only, with
no clause to intersect with every row of the scope. Each row found is still checked for
the tenant, and facts for the query's window, in the same statement.

Very common query words are left out of a MATCH (see ``SqliteSearch._informative``); the
per-scope document counts that decide it come from fts5vocab and are cached per tenant
and kind while they stay exact: until the tenant writes a doc or a doc of the kind is
deleted or rewritten (``search_doc_changes``).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from graph.embeddings import Embedder, Vectors, from_blob, to_blob
from graph.model import Entity, Episode, Fact
from graph.retrieval.port import (
    HeldVersion,
    HeldVersions,
    Hit,
    ItemKind,
    Pending,
    Window,
    uncovered,
)
from graph.retrieval.text import fts5_query
from graph.stores.codec import Decoded, held_version
from graph.stores.sqlite.bm25 import Averages, idf, score, varint
from graph.stores.sqlite.codec import (
    FACT_COLUMNS,
    entity_unchecked,
    episode_from_row,
    fact_from_row,
    id_list,
)
from graph.stores.sqlite.connection import SqliteConnection
from graph.stores.sqlite.terms import index_terms, term_prefix
from graph.stores.sqlite.vectors import TenantVectors, VectorCache, best_rows, sign_bits
from graph.timeutil import from_db, to_db

_EPISODE_TEXT = """CASE json_type(new.content_json)
      WHEN 'text' THEN json_extract(new.content_json, '$') ELSE new.content_json END"""
_ENTITY_TEXT = """trim(new.name || ' ' || COALESCE((SELECT group_concat(value, ' ')
      FROM json_each(new.aliases_json)), '') || ' ' || COALESCE(new.summary, ''))"""


def _scope_sql(kind: str) -> str:
    return f"sgam_prefix(new.tenant_id, '{kind}')"


def scope_token(tenant_id: str, kind: ItemKind) -> str:
    """The term prefix of one tenant's items of one kind (``search_docs.scope``, as the
    triggers compute it): see :mod:`graph.stores.sqlite.terms`."""
    return term_prefix(tenant_id, kind.value)


# A fact's document, once per fact_id: its versions share it (their sentence is the same).
# Outside a trigger OR IGNORE is the statement's own conflict clause, so it applies.
FACT_DOC_INSERT = (
    "INSERT OR IGNORE INTO search_docs (tenant_id, kind, item_id, scope, body)"
    " VALUES (?, 'fact', ?, ?, ?)"
)


def fact_doc_rows(tenant_id: str, facts: Sequence[Fact]) -> list[tuple[str, str, str, str]]:
    """Rows of :data:`FACT_DOC_INSERT` for these versions, one per fact id."""
    scope = scope_token(tenant_id, ItemKind.FACT)
    seen: set[str] = set()
    rows: list[tuple[str, str, str, str]] = []
    for f in facts:
        if f.fact_id not in seen:
            seen.add(f.fact_id)
            rows.append((tenant_id, f.fact_id, scope, f.sentence()))
    return rows


def _doc_insert(kind: str, id_col: str, text: str) -> str:
    # Insert once per item; NOT EXISTS rather than OR IGNORE, because an outer statement's
    # conflict clause would override the trigger's own. Built from constants only.
    return f"""
  INSERT INTO search_docs (tenant_id, kind, item_id, scope, body)
  SELECT new.tenant_id, '{kind}', new.{id_col}, {_scope_sql(kind)}, {text}
  WHERE NOT EXISTS (SELECT 1 FROM search_docs WHERE tenant_id = new.tenant_id
                    AND kind = '{kind}' AND item_id = new.{id_col});"""  # noqa: S608


# Composed from the constants above only; no value ever reaches this text.
SEARCH_SQL = f"""
-- AUTOINCREMENT: doc ids only grow, so "docs after the last one embedded" is exact.
CREATE TABLE IF NOT EXISTS search_docs (
  doc INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('fact', 'entity', 'episode')),
  item_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  body TEXT NOT NULL,
  UNIQUE (tenant_id, kind, item_id)
);
CREATE INDEX IF NOT EXISTS search_docs_tenant ON search_docs (tenant_id, doc);
-- What the index holds of each doc: its words under the doc's prefix (the scope column),
-- computed rather than stored (body stays the plain text the model embeds). The content
-- of search_fts, so that 'rebuild' and 'integrity-check' see exactly what was indexed.
CREATE VIEW IF NOT EXISTS search_terms AS
  SELECT doc, sgam_terms(scope, body) AS terms FROM search_docs;
-- "_" is part of a token: it joins the prefix and the word.
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
  terms, content = 'search_terms', content_rowid = 'doc',
  tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'"
);
-- Document frequency of each indexed token, to leave out query terms of no weight.
CREATE VIRTUAL TABLE IF NOT EXISTS search_vocab USING fts5vocab(search_fts, 'row');
-- AUTOINCREMENT: ids are never reused, so (count, max id) of a tenant's vectors changes
-- whenever they do, which is how the in-process matrix cache knows it is stale.
CREATE TABLE IF NOT EXISTS search_vectors (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  doc INTEGER NOT NULL,
  tenant_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  model TEXT NOT NULL,
  vector BLOB NOT NULL,
  UNIQUE (doc, model)
);
CREATE INDEX IF NOT EXISTS search_vectors_scope ON search_vectors (tenant_id, kind, model, id);
-- Vectors deleted so far, per kind and model (no tenant: nothing of one stays behind a
-- purge). With the highest id it tells a cached matrix it is stale, in two index seeks.
CREATE TABLE IF NOT EXISTS search_vector_deletes (
  kind TEXT NOT NULL, model TEXT NOT NULL, deleted INTEGER NOT NULL,
  PRIMARY KEY (kind, model)
);
CREATE TRIGGER IF NOT EXISTS search_vectors_ad AFTER DELETE ON search_vectors BEGIN
  INSERT INTO search_vector_deletes (kind, model, deleted) VALUES (old.kind, old.model, 1)
  ON CONFLICT (kind, model) DO UPDATE SET deleted = deleted + 1;
END;
CREATE INDEX IF NOT EXISTS search_vectors_tenant ON search_vectors (tenant_id, model);

-- Docs deleted or rewritten so far, per kind (no tenant: nothing of one stays behind a
-- purge). With a tenant's highest doc it tells the in-process document-frequency cache
-- whether its counts still hold: inserts only add rows above that doc.
CREATE TABLE IF NOT EXISTS search_doc_changes (
  kind TEXT PRIMARY KEY, changed INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS search_docs_changed_ad AFTER DELETE ON search_docs BEGIN
  INSERT INTO search_doc_changes (kind, changed) VALUES (old.kind, 1)
  ON CONFLICT (kind) DO UPDATE SET changed = changed + 1;
END;
CREATE TRIGGER IF NOT EXISTS search_docs_changed_au AFTER UPDATE OF scope, body ON search_docs
BEGIN
  INSERT INTO search_doc_changes (kind, changed) VALUES (old.kind, 1)
  ON CONFLICT (kind) DO UPDATE SET changed = changed + 1;
END;

CREATE TRIGGER IF NOT EXISTS search_docs_ai AFTER INSERT ON search_docs BEGIN
  INSERT INTO search_fts (rowid, terms) VALUES (new.doc, sgam_terms(new.scope, new.body));
END;
CREATE TRIGGER IF NOT EXISTS search_docs_ad AFTER DELETE ON search_docs BEGIN
  INSERT INTO search_fts (search_fts, rowid, terms)
  VALUES ('delete', old.doc, sgam_terms(old.scope, old.body));
  DELETE FROM search_vectors WHERE doc = old.doc;
END;
CREATE TRIGGER IF NOT EXISTS search_docs_au AFTER UPDATE OF scope, body ON search_docs BEGIN
  INSERT INTO search_fts (search_fts, rowid, terms)
  VALUES ('delete', old.doc, sgam_terms(old.scope, old.body));
  INSERT INTO search_fts (rowid, terms) VALUES (new.doc, sgam_terms(new.scope, new.body));
  DELETE FROM search_vectors WHERE doc = old.doc;
END;

-- Facts: one document per fact_id, written by the store after each batch's inserts
-- (FACT_DOC_INSERT; a trigger per version row cost a fifth of a bulk write). The lookups
-- by fact_id at any system time (search's window filter, the delete trigger) need an
-- index the ledger's partial ones cannot serve.
CREATE INDEX IF NOT EXISTS search_facts_id ON facts (tenant_id, fact_id);
-- Every version of a timeline, retired ones included (staleness_versions: the staleness
-- check of a search's episodes); the ledger's timeline indexes hold current rows only,
-- and without this the check scanned the tenant's facts (~100 ms at 100k facts).
CREATE INDEX IF NOT EXISTS search_facts_timeline ON facts (tenant_id, timeline_key);
CREATE TRIGGER IF NOT EXISTS search_facts_ad AFTER DELETE ON facts
WHEN NOT EXISTS (SELECT 1 FROM facts WHERE tenant_id = old.tenant_id AND fact_id = old.fact_id)
BEGIN
  DELETE FROM search_docs WHERE tenant_id = old.tenant_id AND kind = 'fact'
    AND item_id = old.fact_id;
END;

CREATE TRIGGER IF NOT EXISTS search_episodes_ai AFTER INSERT ON episodes BEGIN
  {_doc_insert("episode", "episode_id", _EPISODE_TEXT)}
END;
CREATE TRIGGER IF NOT EXISTS search_episodes_ad AFTER DELETE ON episodes BEGIN
  DELETE FROM search_docs WHERE tenant_id = old.tenant_id AND kind = 'episode'
    AND item_id = old.episode_id;
END;
-- Conversation order inside a session, for expansion to neighbouring turns.
CREATE INDEX IF NOT EXISTS search_episodes_session
  ON episodes (tenant_id, session_id, occurred_at, recorded_at);

CREATE TRIGGER IF NOT EXISTS search_entities_ai AFTER INSERT ON entities BEGIN
  {_doc_insert("entity", "entity_id", _ENTITY_TEXT)}
END;
-- A renamed entity gets a new doc (a new id, so index_pending sees it as new).
CREATE TRIGGER IF NOT EXISTS search_entities_au AFTER UPDATE OF name, aliases_json, summary
ON entities BEGIN
  DELETE FROM search_docs WHERE tenant_id = new.tenant_id AND kind = 'entity'
    AND item_id = new.entity_id;
  {_doc_insert("entity", "entity_id", _ENTITY_TEXT)}
END;
CREATE TRIGGER IF NOT EXISTS search_entities_ad AFTER DELETE ON entities BEGIN
  DELETE FROM search_docs WHERE tenant_id = old.tenant_id AND kind = 'entity'
    AND item_id = old.entity_id;
END;
"""  # noqa: S608

_FACT_WINDOW = (
    "f.valid_from <= :as_of AND (f.valid_to IS NULL OR f.valid_to > :as_of)"
    " AND f.recorded_at <= :known_at AND (f.retired_at IS NULL OR f.retired_at > :known_at)"
)
# Whether a search_docs row ``d`` is visible in the window, per kind.
_VISIBLE = {
    ItemKind.FACT: "EXISTS (SELECT 1 FROM facts f WHERE f.tenant_id = d.tenant_id"  # noqa: S608
    f" AND f.fact_id = d.item_id AND {_FACT_WINDOW})",
    ItemKind.EPISODE: "EXISTS (SELECT 1 FROM episodes e WHERE e.tenant_id = d.tenant_id"
    " AND e.episode_id = d.item_id AND e.recorded_at <= :known_at)",
    ItemKind.ENTITY: "EXISTS (SELECT 1 FROM entities n WHERE n.tenant_id = d.tenant_id"
    " AND n.entity_id = d.item_id AND n.created_at <= :known_at)",
}
# Statements per kind, composed once from the constants above. Lists of ids travel as one
# JSON parameter read with json_each, so no statement text depends on a request.
# Fulltext ranks the index's best :fetch rows first, then checks only those for tenant and
# window (the terms' prefix already stands for the tenant): checking every match costs.
_FULLTEXT_SQL = {
    kind: "SELECT d.item_id, c.s, (d.tenant_id = :tenant AND "  # noqa: S608
    f"{cond}) AS ok FROM (SELECT rowid AS doc, bm25(search_fts) AS s"
    " FROM search_fts WHERE search_fts MATCH :q ORDER BY s LIMIT :fetch) AS c"
    " JOIN search_docs d ON d.doc = c.doc ORDER BY c.s"
    for kind, cond in _VISIBLE.items()
}
# The narrowed fulltext (SqliteSearch._narrowed): the rows holding a rare query word; the
# visible ones among them tokenized again on the scratch table; then their counts of the
# query's tokens, and their lengths (FTS5's docsize record) with their item ids. The
# lists drive each join (CROSS JOIN): a MATCH inside a join lets the planner scan instead.
_RARE_DOCS_SQL = "SELECT rowid AS doc FROM search_fts WHERE search_fts MATCH :q"
_NARROWED_SQL = {
    kind: "INSERT INTO temp.search_tok (rowid, x) SELECT d.doc, sgam_terms(d.scope, d.body)"  # noqa: S608
    " FROM search_docs d WHERE d.doc IN (SELECT value FROM json_each(:docs))"
    f" AND d.tenant_id = :tenant AND {cond}"
    for kind, cond in _VISIBLE.items()
}
_TERM_COUNTS_SQL = (
    "SELECT doc, term, count(*) AS n FROM temp.search_tok_v"
    " WHERE term IN (SELECT value FROM json_each(:tokens)) GROUP BY doc, term"
)
_NARROWED_ROWS_SQL = (
    "SELECT s.id AS doc, s.sz, d.item_id FROM temp.search_tok_docsize s"
    " CROSS JOIN search_docs d ON d.doc = s.id"
)
# FTS5's averages record: rows and tokens of the whole index, as bm25() reads them.
_AVERAGES_SQL = "SELECT block FROM search_fts_data WHERE id = 1"
_VISIBLE_SQL = {
    kind: "SELECT d.item_id FROM search_docs d WHERE d.tenant_id = :tenant"  # noqa: S608
    f" AND d.kind = :kind AND d.item_id IN (SELECT value FROM json_each(:ids)) AND {cond}"
    for kind, cond in _VISIBLE.items()
}
# The index's own tokenizer, on a per-connection scratch table: how a query word is stored.
_TOKENIZER_SQL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_tok USING fts5(x,"
    " tokenize = \"porter unicode61 remove_diacritics 2 tokenchars '_'\")",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_tok_v"
    " USING fts5vocab(temp, search_tok, 'instance')",
    "DELETE FROM temp.search_tok",
)
_FETCH_GROWTH = 4
_MAX_FETCH = 20_000
_COMMON_DF = 2000  # rows holding a term before it may be left out of a query
# Rows holding the query's rare words, at most, for a narrowed fulltext: past it FTS5's
# own scoring of every match is as cheap as tokenizing them again.
_NARROW_ROWS = 1000
_WINDOW = (
    "valid_from <= :as_of AND (valid_to IS NULL OR valid_to > :as_of)"
    " AND recorded_at <= :known_at AND (retired_at IS NULL OR retired_at > :known_at)"
)
_KNOWN = "recorded_at <= :known_at AND (retired_at IS NULL OR retired_at > :known_at)"
_IDS = "(SELECT value FROM json_each(:ids))"
_PAIRS = "(SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(:pairs))"


# One tenant's docs after ``mark`` (up to ``top``) without a vector from the model. The
# tenant filter is what keeps an indexing pass to its own tenant's items.
_PENDING_DOCS_SQL = (
    "SELECT d.doc, d.kind, d.body FROM search_docs d WHERE d.tenant_id = ?"
    " AND d.doc > ? AND d.doc <= ? AND NOT EXISTS (SELECT 1 FROM search_vectors v"
    " WHERE v.doc = d.doc AND v.model = ?) ORDER BY d.doc LIMIT ?"
)
# Per tenant and kind: docs waiting for a vector, and when the first of them was written.
_PENDING_STATS_SQL = """
SELECT g.tenant_id, g.kind, g.n, g.first, CASE g.kind
  WHEN 'fact' THEN (SELECT min(f.recorded_at) FROM facts f
                    WHERE f.tenant_id = d.tenant_id AND f.fact_id = d.item_id)
  WHEN 'episode' THEN (SELECT e.recorded_at FROM episodes e
                       WHERE e.tenant_id = d.tenant_id AND e.episode_id = d.item_id)
  ELSE (SELECT e.created_at FROM entities e
        WHERE e.tenant_id = d.tenant_id AND e.entity_id = d.item_id) END AS oldest
FROM (SELECT p.tenant_id, p.kind, count(*) AS n, min(p.doc) AS first FROM search_docs p
      WHERE p.doc > ? AND p.doc <= ? AND NOT EXISTS (SELECT 1 FROM search_vectors v
      WHERE v.doc = p.doc AND v.model = ?) GROUP BY p.tenant_id, p.kind) g
JOIN search_docs d ON d.doc = g.first
ORDER BY g.tenant_id, g.kind
"""


# What tells whether cached document counts still hold: the tenant's highest doc, and the
# docs of this kind deleted or rewritten so far.
_DOC_STATE_SQL = (
    "SELECT COALESCE((SELECT max(doc) FROM search_docs WHERE tenant_id = :tenant), 0) AS top,"
    " COALESCE((SELECT changed FROM search_doc_changes WHERE kind = :kind), 0) AS changed"
)
_MAX_CACHED_TERMS = 10_000  # per cache; past it the cache starts again
_MAX_CACHED_SCOPES = 64  # (tenant, kind) scopes whose counts are kept (least recent go)


class _DocCounts:
    """Document counts within one scope (one tenant's items of one kind): per indexed
    token, and for ``None`` every row of the scope, the count and the tenant's highest doc
    when it was taken. Docs only get higher ids, so a count stays exact while no doc of
    the kind is deleted or rewritten (``changed``) and the tenant writes none (a token's
    count is then taken again; the scope's rows are counted on top, above the old top).
    Never shared between scopes."""

    def __init__(self, changed: int) -> None:
        self.changed = changed
        self.rows: dict[str | None, tuple[int, int]] = {}


@dataclass(frozen=True)
class _QueryTerms:
    """A query's words as one scope's index sees them: those a MATCH names (``kept``),
    the rows of the scope holding each (``df``) and the tokens the index stores for each
    (``tokens``). ``df`` and ``tokens`` are filled for queries of two words or more."""

    kept: list[str]
    df: dict[str, int]
    tokens: dict[str, tuple[str, ...]]

    def rare(self) -> list[str] | None:
        """The rare words a narrowed fulltext matches (``SqliteSearch._narrowed``): when
        the query holds both words in thousands of the scope's rows and words in few, and
        those few rows are not many. ``None``: an ordinary fulltext."""
        if not self.df or any(len(self.tokens[w]) != 1 for w in self.kept):
            return None  # a word the index splits is a phrase: FTS5 counts it, not us
        rare = [w for w in self.kept if 0 < self.df[w] < _COMMON_DF]
        if not rare or all(self.df[w] < _COMMON_DF for w in self.kept):
            return None
        if sum(self.df[w] for w in rare) > _NARROW_ROWS:
            return None
        return rare


def _facts_sql(where: str) -> str:
    return f"SELECT {FACT_COLUMNS} FROM facts WHERE tenant_id = :tenant AND {where}"  # noqa: S608


def _ids(values: Sequence[str]) -> str:
    return json.dumps(sorted(set(values)))


class SqliteSearch:
    """The search index of one SQLite store (tables and triggers in SEARCH_SQL), over the
    store's connection. Its caches live as long as the store."""

    def __init__(self, conn: SqliteConnection) -> None:
        self.conn = conn
        self._vectors = VectorCache()
        # Highest doc embedded per (tenant, model): the next pass starts after it.
        self._marks: dict[tuple[str, str], int] = {}
        # Per model: every doc at or below it has a vector (see pending()).
        self._pending_low: dict[str, int] = {}
        # Document frequencies for _informative: how the tokenizer stores each prefixed
        # query word, and counts per scope (see _DocCounts).
        self._lock = threading.Lock()
        self._token_cache: dict[str, tuple[str, ...]] = {}
        self._df: OrderedDict[str, _DocCounts] = OrderedDict()

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
        marks = self._marks
        key = (tenant_id, model)
        top = self.conn.read(
            "SELECT COALESCE(max(doc), 0) AS m FROM search_docs WHERE tenant_id = ?", (tenant_id,)
        )[0]["m"]
        mark = marks.get(key, 0)
        if top <= mark:
            return 0  # nothing written since the last pass: one index seek
        done = 0
        while limit is None or done < limit:
            take = batch_size if limit is None else min(batch_size, limit - done)
            rows = self.conn.read(_PENDING_DOCS_SQL, (tenant_id, mark, top, model, take))
            if not rows:
                break
            vectors = embedder.encode([r["body"] for r in rows])
            with self.conn.write() as c:
                # Only if the doc still exists, of this tenant, with the text that was
                # embedded: a concurrent delete or edit must not leave a vector behind.
                c.executemany(
                    "INSERT OR IGNORE INTO search_vectors (doc, tenant_id, kind, model, vector)"
                    " SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM search_docs"
                    " WHERE doc = ? AND tenant_id = ? AND body = ?)",
                    [
                        (
                            r["doc"],
                            tenant_id,
                            r["kind"],
                            model,
                            to_blob(v),
                            r["doc"],
                            tenant_id,
                            r["body"],
                        )
                        for r, v in zip(rows, vectors, strict=True)
                    ],
                )
            done += len(rows)
            mark = int(rows[-1]["doc"])
            if len(rows) < take:
                mark = top  # drained up to top
                break
        else:
            # Stopped at the limit: the next pass goes on after the last doc embedded.
            marks[key] = mark
            return done
        # Docs are written under SQLite's one write lock, so none committed later can have
        # an id at or below ``top``: the next pass starts after it.
        marks[key] = top
        return done

    def pending(self, *, model: str) -> list[Pending]:
        # Every doc at or below the low mark has a vector from the model (or had when the
        # mark was set), so a pass reads only what is newer: cheap when the indexer keeps up.
        low = self._pending_low.get(model, 0)
        top = self.conn.read("SELECT COALESCE(max(doc), 0) AS m FROM search_docs")[0]["m"]
        rows = self.conn.read(_PENDING_STATS_SQL, (low, top, model))
        out = [
            Pending(
                tenant_id=r["tenant_id"],
                kind=ItemKind(r["kind"]),
                count=int(r["n"]),
                oldest=from_db(r["oldest"]) if r["oldest"] else None,
            )
            for r in rows
        ]
        self._pending_low[model] = min((int(r["first"]) - 1 for r in rows), default=top)
        return out

    # -- candidates --------------------------------------------------------------------
    def fulltext(
        self, *, tenant_id: str, kind: ItemKind, terms: Sequence[str], window: Window, limit: int
    ) -> list[Hit]:
        scope = scope_token(tenant_id, kind)
        query = self._query_terms(tenant_id, kind, terms)
        words = query.kept
        if not words:
            return []
        params = {
            "q": fts5_query(scope, words),  # this tenant's terms only
            "tenant": tenant_id,
            "as_of": to_db(window.as_of),
            "known_at": to_db(window.known_at),
        }
        rare = query.rare()
        if rare is not None:
            return self._narrowed(query, {**params, "q": fts5_query(scope, rare)}, kind, limit)
        fetch = max(limit * _FETCH_GROWTH, 64)
        while True:
            rows = self.conn.read(_FULLTEXT_SQL[kind], {**params, "fetch": fetch})
            # FTS5's bm25() is negated so that ascending order is best first.
            hits = [Hit(r["item_id"], -float(r["s"])) for r in rows if r["ok"]]
            if len(hits) >= limit or len(rows) < fetch or fetch >= _MAX_FETCH:
                return hits[:limit]
            fetch = min(fetch * _FETCH_GROWTH, _MAX_FETCH)

    def _narrowed(
        self, query: _QueryTerms, params: Mapping[str, str], kind: ItemKind, limit: int
    ) -> list[Hit]:
        """Fulltext over the rows holding one of the query's rare words only, each scored
        with BM25 over all its words as FTS5 would (:mod:`graph.stores.sqlite.bm25`).

        A word in thousands of the scope's rows makes FTS5 visit and score every one of
        them (8-11 ms at 100k facts). When the query also names a rare word, the rows
        holding only common words rank below those holding a rare one anyway, and among
        themselves by length more than by anything the query says; they are left out. The
        rows kept get exactly the score a full query gives them. The rare rows are
        tokenized again on the connection's scratch table (the index's own tokenizer),
        which gives each one's word counts and length."""
        docs = [int(r["doc"]) for r in self.conn.read(_RARE_DOCS_SQL, {"q": params["q"]})]
        if not docs:
            return []
        for sql in _TOKENIZER_SQL:
            self.conn.read(sql)
        self.conn.read(_NARROWED_SQL[kind], {**params, "docs": json.dumps(docs)})
        tokens = [query.tokens[w][0] for w in query.kept]
        freqs: dict[int, dict[str, int]] = {}
        for r in self.conn.read(_TERM_COUNTS_SQL, {"tokens": json.dumps(tokens)}):
            freqs.setdefault(int(r["doc"]), {})[r["term"]] = int(r["n"])
        found = self.conn.read(_AVERAGES_SQL)
        avg = Averages.decode(bytes(found[0]["block"])) if found else Averages(0, 0)
        weights = [(query.tokens[w][0], idf(avg.rows, query.df[w])) for w in query.kept]
        scored = sorted(
            (
                -score(freqs.get(int(r["doc"]), {}), weights, varint(r["sz"])[0], avg.mean_length),
                int(r["doc"]),
                r["item_id"],
            )
            for r in self.conn.read(_NARROWED_ROWS_SQL)
        )
        return [Hit(item_id, -s) for s, _, item_id in scored[:limit]]

    def _informative(self, tenant_id: str, kind: ItemKind, terms: Sequence[str]) -> list[str]:
        """The terms a MATCH names: :meth:`_query_terms`."""
        return self._query_terms(tenant_id, kind, terms).kept

    def _query_terms(self, tenant_id: str, kind: ItemKind, terms: Sequence[str]) -> _QueryTerms:
        """The terms minus the very common ones — in half the rows of this tenant's scope
        or more, and in thousands: BM25 gives them an IDF of about zero
        (log((N - n + 0.5) / (n + 0.5))), so leaving them out hardly changes a ranking,
        while scoring every row that holds them is what makes a query slow. Small indexes
        keep every term (they are fast, and a term can still decide what matches).

        The index's terms are the scope's own (see :mod:`graph.stores.sqlite.terms`), so
        fts5vocab's count of a prefixed word is its document frequency in the scope:
        another tenant's rows cannot decide which of this tenant's words count. Counts are
        cached per scope (:class:`_DocCounts`), so a search pays one statement here once
        its words have been seen and the tenant has written nothing since."""
        if len(terms) < 2:
            return _QueryTerms(list(terms), {}, {})
        scope = scope_token(tenant_id, kind)
        state = self.conn.read(_DOC_STATE_SQL, {"tenant": tenant_id, "kind": kind.value})[0]
        top, changed = int(state["top"]), int(state["changed"])
        counts = self._counts(scope, changed)
        tokens = self._tokens(scope, terms)
        df = self._scope_df(counts, sorted({tok for t in terms for tok in tokens[t]}), top)
        weight = {t: min((df[tok] for tok in tokens[t]), default=0) for t in terms}
        common = [t for t in terms if weight[t] >= _COMMON_DF]
        if common:
            in_scope = self._scope_rows(counts, tenant_id, kind, top)
            common = [t for t in common if 2 * weight[t] >= in_scope]
        kept = [t for t in terms if t not in common] or [min(terms, key=lambda t: weight[t])]
        return _QueryTerms(kept, {t: weight[t] for t in kept}, {t: tokens[t] for t in kept})

    def _tokens(self, scope: str, terms: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """How the index's own tokenizer stores each term under the scope's prefix
        (remembered: it never changes)."""
        cache = self._token_cache
        keys = {t: index_terms(scope, t) for t in terms}
        out = {t: toks for t in terms if (toks := cache.get(keys[t])) is not None}
        missing = [t for t in dict.fromkeys(terms) if t not in out]
        if missing:
            for sql in _TOKENIZER_SQL:
                self.conn.read(sql)
            for i, t in enumerate(missing):
                self.conn.read(
                    "INSERT INTO temp.search_tok (rowid, x) VALUES (?, ?)", (i + 1, keys[t])
                )
            found: dict[int, list[str]] = {}
            rows = self.conn.read("SELECT doc, term FROM temp.search_tok_v ORDER BY doc, offset")
            for r in rows:
                found.setdefault(int(r["doc"]), []).append(r["term"])
            with self._lock:
                if len(cache) + len(missing) > _MAX_CACHED_TERMS:
                    cache.clear()
                for i, t in enumerate(missing):
                    out[t] = cache[keys[t]] = tuple(found.get(i + 1, ()))
        return out

    def _counts(self, scope: str, changed: int) -> _DocCounts:
        """The scope's cached counts, started again when a doc of the kind was deleted or
        rewritten since they were taken."""
        with self._lock:
            counts = self._df.get(scope)
            if counts is None or counts.changed != changed:
                counts = self._df[scope] = _DocCounts(changed)
            self._df.move_to_end(scope)
            while len(self._df) > _MAX_CACHED_SCOPES:
                self._df.popitem(last=False)
            return counts

    def _scope_df(self, counts: _DocCounts, tokens: Sequence[str], top: int) -> dict[str, int]:
        """Rows of the scope holding each (prefixed) token: fts5vocab, one seek each. A
        count taken at the same top still holds (the scope wrote nothing since)."""
        out: dict[str, int] = {}
        with self._lock:
            for tok in tokens:
                held = counts.rows.get(tok)
                if held is not None and held[1] == top:
                    out[tok] = held[0]
        for tok in tokens:
            if tok not in out:
                # One equality lookup per token: fts5vocab seeks "term =", but scans "IN".
                found = self.conn.read("SELECT doc FROM search_vocab WHERE term = ?", (tok,))
                out[tok] = int(found[0]["doc"]) if found else 0
        with self._lock:
            if len(counts.rows) + len(tokens) > _MAX_CACHED_TERMS:
                counts.rows.clear()
            for tok in tokens:
                counts.rows[tok] = (out[tok], top)
        return out

    def _scope_rows(self, counts: _DocCounts, tenant_id: str, kind: ItemKind, top: int) -> int:
        """Rows of the scope among docs up to ``top``. Exact: a count cached for a lower
        top is topped up by counting the docs above it only."""
        with self._lock:
            cached = counts.rows.get(None)
        if cached is not None and cached[1] == top:
            return cached[0]
        base, since = cached if cached is not None and cached[1] < top else (0, 0)
        rows = self.conn.read(
            "SELECT count(*) AS n FROM search_docs WHERE tenant_id = ? AND kind = ?"
            " AND doc > ? AND doc <= ?",
            (tenant_id, kind.value, since, top),
        )
        n = base + int(rows[0]["n"])
        with self._lock:
            held = counts.rows.get(None)
            if held is None or held[1] < top:
                counts.rows[None] = (n, top)
        return n

    def _matrix(self, tenant_id: str, kind: ItemKind, model: str) -> TenantVectors | None:
        key = (tenant_id, kind.value, model)
        max_id = int(
            self.conn.read(
                "SELECT COALESCE(max(id), 0) AS m FROM search_vectors"
                " WHERE tenant_id = ? AND kind = ? AND model = ?",
                key,
            )[0]["m"]
        )
        if max_id == 0:
            return None
        found = self.conn.read(
            "SELECT deleted FROM search_vector_deletes WHERE kind = ? AND model = ?",
            (kind.value, model),
        )
        deleted = int(found[0]["deleted"]) if found else 0
        cache = self._vectors
        cached = cache.get(key)
        if cached is not None and (cached.max_id, cached.deleted) == (max_id, deleted):
            return cached
        # Nothing deleted since: append what is new. Otherwise load everything again.
        append = cached is not None and cached.deleted == deleted
        rows = self.conn.read(
            "SELECT v.id, d.item_id, v.vector FROM search_vectors v"
            " JOIN search_docs d ON d.doc = v.doc"
            " WHERE v.tenant_id = ? AND v.kind = ? AND v.model = ? AND v.id > ? ORDER BY v.id",
            (*key, cached.max_id if append and cached is not None else 0),
        )
        new_ids = [row["item_id"] for row in rows]
        new = np.vstack([from_blob(row["vector"]) for row in rows]) if rows else None
        if append and cached is not None:
            ids = cached.item_ids + new_ids
            mat = np.vstack([cached.matrix, new]) if new is not None else cached.matrix
            bits = np.hstack([cached.bits, sign_bits(new)]) if new is not None else cached.bits
        else:
            ids = new_ids
            mat = new if new is not None else np.zeros((0, 1), dtype=np.float32)
            bits = sign_bits(mat)
        m = TenantVectors(max_id=max_id, deleted=deleted, item_ids=ids, matrix=mat, bits=bits)
        cache.put(key, m)
        return m

    def vector_search(
        self,
        *,
        tenant_id: str,
        kind: ItemKind,
        vector: Vectors,
        model: str,
        window: Window,
        limit: int,
    ) -> list[Hit]:
        m = self._matrix(tenant_id, kind, model)
        if m is None or not m.item_ids:
            return []
        # Over-fetch, keep what is visible in the window, and widen while short: the matrix
        # holds every fact ever known, the window only some of them.
        out: list[Hit] = []
        for batch in best_rows(m, vector, max(limit * 4, 64)):
            visible = self._visible(tenant_id, kind, [m.item_ids[i] for i, _ in batch], window)
            out.extend(Hit(m.item_ids[i], score) for i, score in batch if m.item_ids[i] in visible)
            if len(out) >= limit:
                break
        return out[:limit]

    def _visible(
        self, tenant_id: str, kind: ItemKind, ids: Sequence[str], window: Window
    ) -> set[str]:
        rows = self.conn.read(
            _VISIBLE_SQL[kind],
            {
                "tenant": tenant_id,
                "kind": kind.value,
                "ids": _ids(ids),
                "as_of": to_db(window.as_of),
                "known_at": to_db(window.known_at),
            },
        )
        return {r["item_id"] for r in rows}

    # -- items -------------------------------------------------------------------------
    def facts_by_id(
        self, *, tenant_id: str, fact_ids: Sequence[str], window: Window
    ) -> dict[str, Fact]:
        rows = self.conn.read(
            _facts_sql(f"fact_id IN {_IDS} AND {_WINDOW}"),
            {"tenant": tenant_id, "ids": _ids(fact_ids), **_window_params(window)},
        )
        return {f.fact_id: f for f in map(fact_from_row, rows)}

    def facts_touching(
        self, *, tenant_id: str, entity_ids: Sequence[str], window: Window, limit: int
    ) -> list[Fact]:
        if not entity_ids:
            return []
        # Two index seeks (by subject, by object) rather than one OR that scans the tenant.
        # No "object IS NOT NULL" (the IN implies it): with it the planner walks every
        # relation of the tenant in facts_object (object > NULL), 3x slower at 100k.
        rows = self.conn.read(
            _facts_sql(f"subject IN {_IDS} AND {_WINDOW}")
            + " UNION ALL "
            + _facts_sql(f"object IN {_IDS} AND subject NOT IN {_IDS} AND {_WINDOW}")
            + " ORDER BY valid_from DESC, fact_id LIMIT :limit",
            {
                "tenant": tenant_id,
                "ids": _ids(entity_ids),
                "limit": limit,
                **_window_params(window),
            },
        )
        return [fact_from_row(r) for r in rows]

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
        params = {"tenant": tenant_id, "ids": _ids(episode_ids), **_window_params(window)}
        # The ledger indexes assertions by episode; the timelines they touched hold every
        # version citing the episode, corroborating sources included.
        around = self._held(
            "timeline_key IN (SELECT timeline_key FROM assertions"  # noqa: S608
            f" WHERE tenant_id = :tenant AND source_episode_id IN {_IDS})",
            params,
        )
        rest = uncovered(around, pairs)
        more = (
            self._held(f"(subject, predicate) IN {_PAIRS}", {**params, "pairs": json.dumps(rest)})
            if rest
            else []
        )
        return HeldVersions(around=around, pairs=more)

    def _held(self, where: str, params: Mapping[str, object]) -> list[HeldVersion]:
        rows = self.conn.read(
            "SELECT fact_id, subject, predicate, object, value_json,"  # noqa: S608
            " valid_from <= :as_of AND (valid_to IS NULL OR valid_to > :as_of),"
            f" cardinality = 'one', sources_json FROM facts WHERE tenant_id = :tenant"
            f" AND {where} AND {_KNOWN}",
            params,
        )
        return [held_version(r, id_list(r[7])) for r in rows]

    def episodes_by_id(
        self, *, tenant_id: str, episode_ids: Sequence[str], known_at: datetime
    ) -> Mapping[str, Episode]:
        rows = self.conn.read(
            f"SELECT * FROM episodes WHERE tenant_id = :tenant AND episode_id IN {_IDS}"  # noqa: S608
            " AND recorded_at <= :known_at",
            {"tenant": tenant_id, "ids": _ids(episode_ids), "known_at": to_db(known_at)},
        )
        return Decoded({r["episode_id"]: r for r in rows}, episode_from_row)

    def entities_by_id(
        self, *, tenant_id: str, entity_ids: Sequence[str], known_at: datetime
    ) -> Mapping[str, Entity]:
        rows = self.conn.read(
            f"SELECT * FROM entities WHERE tenant_id = :tenant AND entity_id IN {_IDS}"  # noqa: S608
            " AND created_at <= :known_at",
            {"tenant": tenant_id, "ids": _ids(entity_ids), "known_at": to_db(known_at)},
        )
        return Decoded({r["entity_id"]: r for r in rows}, entity_unchecked)

    def mentions_of(self, *, tenant_id: str, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        rows = self.conn.read(
            "SELECT episode_id, entity_id FROM episode_mentions WHERE tenant_id = :tenant"  # noqa: S608
            f" AND episode_id IN {_IDS} ORDER BY episode_id, entity_id",
            {"tenant": tenant_id, "ids": _ids(episode_ids)},
        )
        return [(r["episode_id"], r["entity_id"]) for r in rows]

    def mentioning(
        self, *, tenant_id: str, entity_ids: Sequence[str], known_at: datetime, limit: int
    ) -> list[tuple[str, str]]:
        if not entity_ids:
            return []
        rows = self.conn.read(
            # INDEXED BY: without statistics the planner walks the tenant's whole primary
            # key instead (4 ms rather than 0.1 at 32k mentions).
            "SELECT m.episode_id, m.entity_id FROM episode_mentions m"  # noqa: S608
            " INDEXED BY mentions_entity JOIN episodes e"
            " ON e.tenant_id = m.tenant_id AND e.episode_id = m.episode_id"
            f" WHERE m.tenant_id = :tenant AND m.entity_id IN {_IDS}"
            " AND e.recorded_at <= :known_at ORDER BY e.occurred_at DESC, e.episode_id"
            " LIMIT :limit",
            {
                "tenant": tenant_id,
                "ids": _ids(entity_ids),
                "known_at": to_db(known_at),
                "limit": limit,
            },
        )
        return [(r["episode_id"], r["entity_id"]) for r in rows]

    def session_neighbors(
        self, *, tenant_id: str, episode_ids: Sequence[str], known_at: datetime, radius: int
    ) -> list[tuple[str, str, int]]:
        if radius < 1 or not episode_ids:
            return []
        # One statement for every episode (a search asks for twenty): each one's turns
        # before and after, as JSON lists of [occurred_at, recorded_at, id].
        rows = self.conn.read(
            _NEIGHBOURS_SQL,
            {
                "tenant": tenant_id,
                "ids": _ids(episode_ids),
                "known_at": to_db(known_at),
                "radius": radius,
            },
        )
        out: list[tuple[str, str, int]] = []
        for row in rows:
            for column, sign in (("before", -1), ("after", 1)):
                turns = json.loads(row[column]) if row[column] else []
                # Nearest first; json_group_array need not keep the subquery's order.
                turns.sort(key=lambda t: (t[0], t[1]), reverse=sign < 0)
                out.extend((row["eid"], t[2], sign * i) for i, t in enumerate(turns, 1))
        return out


_SESSION = (
    "SELECT occurred_at AS o, recorded_at AS r, episode_id AS id FROM episodes"
    " WHERE tenant_id = me.tenant_id AND session_id = me.session_id"
    " AND recorded_at <= :known_at AND "
)
_NEIGHBOURS_SQL = (
    "SELECT me.episode_id AS eid,"  # noqa: S608
    " (SELECT json_group_array(json_array(o, r, id)) FROM ("
    + _SESSION
    + "(occurred_at, recorded_at) < (me.occurred_at, me.recorded_at)"
    " ORDER BY occurred_at DESC, recorded_at DESC LIMIT :radius)) AS before,"
    " (SELECT json_group_array(json_array(o, r, id)) FROM ("
    + _SESSION
    + "(occurred_at, recorded_at) > (me.occurred_at, me.recorded_at)"
    " ORDER BY occurred_at, recorded_at LIMIT :radius)) AS after"
    f" FROM episodes me WHERE me.tenant_id = :tenant AND me.episode_id IN {_IDS}"
    " AND me.session_id IS NOT NULL ORDER BY me.episode_id"
)


def _window_params(window: Window) -> dict[str, str]:
    return {"as_of": to_db(window.as_of), "known_at": to_db(window.known_at)}


__all__ = ["FACT_DOC_INSERT", "SEARCH_SQL", "SqliteSearch", "fact_doc_rows", "scope_token"]
