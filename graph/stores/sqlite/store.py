"""The embedded store: one SQLite file, WAL, stdlib sqlite3 (the seed article's design).

The database itself enforces the ledger's invariant: a partial unique index allows one
open row per timeline among current versions. The store holds one
:class:`~graph.stores.sqlite.connection.SqliteConnection` and builds its search index
(:mod:`.search`) and its extraction queue (:mod:`.queue`) over it.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from graph.erasure import EraseReads
from graph.errors import ConflictError, StoreUnavailableError, invalid
from graph.model import Direction, Entity, Episode, Fact, FactQuery, Neighborhood
from graph.schema import MemorySchema, schema_from_json
from graph.stores.codec import episode_hash
from graph.stores.sqlite.codec import (
    FACT_COLUMN_COUNT,
    FACT_COLUMNS,
    assertion_from_row,
    assertion_rows,
    entity_from_row,
    entity_unchecked,
    entity_values,
    episode_from_row,
    episode_values,
    fact_from_row,
    fact_rows,
    in_list,
)
from graph.stores.sqlite.connection import SqliteConnection, translated
from graph.stores.sqlite.erasure import EXPIRED_TIMELINES, SqliteEraseOps, expired_keys
from graph.stores.sqlite.queue import QUEUE_SQL, SqliteQueue
from graph.stores.sqlite.search import FACT_DOC_INSERT, SEARCH_SQL, SqliteSearch, fact_doc_rows
from graph.stores.transfer import (
    PAGE,
    Record,
    RecordType,
    assertion_record,
    entity_record,
    episode_record,
    mention_record,
    restore_records,
    schema_record,
    version_record,
)
from graph.stores.traversal import breadth_first
from graph.temporal import Assertion
from graph.timeutil import EPSILON, from_db, to_db, utcnow

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS entities (
  tenant_id TEXT NOT NULL, entity_id TEXT NOT NULL, entity_type TEXT NOT NULL,
  name TEXT NOT NULL, aliases_json TEXT NOT NULL DEFAULT '[]', summary TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, entity_id)
);
-- The entity catalog (extraction's resolution, newest first) pages by it: without it each
-- page sorted every entity of the tenant (139 ms at 102,000). One entry per new entity.
CREATE INDEX IF NOT EXISTS entities_created ON entities (tenant_id, created_at);
-- The catalog of some entity types: a page of each type, where a filter on entities_created
-- walked the tenant's entities until the page filled (all of them for a rare type).
CREATE INDEX IF NOT EXISTS entities_type_created ON entities (tenant_id, entity_type, created_at);
CREATE TABLE IF NOT EXISTS episodes (
  tenant_id TEXT NOT NULL, episode_id TEXT NOT NULL, kind TEXT NOT NULL, source TEXT,
  content_json TEXT NOT NULL, content_hash TEXT NOT NULL, occurred_at TEXT NOT NULL,
  session_id TEXT, metadata_json TEXT NOT NULL DEFAULT '{}', recorded_at TEXT NOT NULL,
  status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT,
  rejected_json TEXT NOT NULL DEFAULT '[]', usage_json TEXT,
  lease_owner TEXT, lease_until TEXT, next_attempt_at TEXT, needs_model INTEGER,
  PRIMARY KEY (tenant_id, episode_id)
);
CREATE INDEX IF NOT EXISTS episodes_queue ON episodes (status, next_attempt_at);
-- Retention's episode batches, oldest first, inside the writer lock: a seek, where
-- the primary key made each batch sort every episode of the tenant (65 ms at 120,000).
-- Not covering episode_id: lookups of episodes by id would take it over the key.
CREATE INDEX IF NOT EXISTS episodes_occurred ON episodes (tenant_id, occurred_at);
CREATE TABLE IF NOT EXISTS episode_mentions (
  tenant_id TEXT NOT NULL, episode_id TEXT NOT NULL, entity_id TEXT NOT NULL,
  PRIMARY KEY (tenant_id, episode_id, entity_id)
);
CREATE INDEX IF NOT EXISTS mentions_entity ON episode_mentions (tenant_id, entity_id);
CREATE TABLE IF NOT EXISTS assertions (
  rowid_ INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id TEXT NOT NULL, timeline_key TEXT NOT NULL, seq INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('assert', 'retract')), fact_id TEXT NOT NULL,
  recorded_at TEXT NOT NULL, valid_from TEXT, valid_to TEXT, source_episode_id TEXT,
  payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS assertions_timeline ON assertions (tenant_id, timeline_key, seq);
CREATE INDEX IF NOT EXISTS assertions_episode ON assertions (tenant_id, source_episode_id);
CREATE TABLE IF NOT EXISTS facts (
  version_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, fact_id TEXT NOT NULL,
  timeline_key TEXT NOT NULL, subject TEXT NOT NULL, subject_type TEXT NOT NULL,
  predicate TEXT NOT NULL, value_json TEXT, value_type TEXT NOT NULL,
  object TEXT, object_type TEXT,
  valid_from TEXT NOT NULL, valid_to TEXT, recorded_at TEXT NOT NULL, retired_at TEXT,
  source_episode_id TEXT, sources_json TEXT NOT NULL, supersedes_json TEXT NOT NULL,
  confidence REAL NOT NULL, memory_type TEXT NOT NULL, schema_version INTEGER NOT NULL,
  retention_policy TEXT NOT NULL, cardinality TEXT NOT NULL,
  CHECK ((value_json IS NULL) <> (object IS NULL)),
  CHECK (valid_to IS NULL OR valid_to > valid_from),
  CHECK (retired_at IS NULL OR retired_at >= recorded_at)
);
-- The seed's invariant, enforced by the database: one open row per timeline.
CREATE UNIQUE INDEX IF NOT EXISTS facts_one_open
  ON facts (tenant_id, timeline_key) WHERE retired_at IS NULL AND valid_to IS NULL;
CREATE UNIQUE INDEX IF NOT EXISTS facts_current_id
  ON facts (tenant_id, fact_id) WHERE retired_at IS NULL;
-- Only current versions are looked up by timeline (the write path); a partial index
-- stays small and a retired version leaves it.
CREATE INDEX IF NOT EXISTS facts_timeline_current
  ON facts (tenant_id, timeline_key) WHERE retired_at IS NULL;
CREATE INDEX IF NOT EXISTS facts_subject ON facts (tenant_id, subject, predicate, valid_from);
CREATE INDEX IF NOT EXISTS facts_object ON facts (tenant_id, object) WHERE object IS NOT NULL;
-- GET /facts?predicate= without a subject (or object), in its page order: without it each
-- page walked facts_subject, every version of the tenant, for a predicate with few facts.
-- Every version, not only current ones: a page reads the versions known at the first
-- page's known_at, which holds those retired since. One entry per version written.
CREATE INDEX IF NOT EXISTS facts_predicate ON facts (tenant_id, predicate, subject, fact_id);
-- The tenant's system clock (graph.port.LedgerTx.system_time): the last instant recorded.
CREATE TABLE IF NOT EXISTS system_clock (
  tenant_id TEXT PRIMARY KEY, last_recorded_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS schemas (
  tenant_id TEXT NOT NULL, version INTEGER NOT NULL, body_json TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, version)
);
"""

# Every table, index, view and trigger the layout creates (all CREATE … IF NOT EXISTS):
# a file holding them all at the current version needs no write to open.
_LAYOUT_OBJECTS = frozenset(
    re.findall(
        r"CREATE\s+(?:UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|VIEW|TRIGGER)\s+IF\s+NOT\s+EXISTS\s+(\w+)",
        SCHEMA_SQL + QUEUE_SQL + SEARCH_SQL,
    )
)

# PRAGMA user_version of a file this code writes. 0 is a file of the first layout (or a
# new one); MIGRATIONS[n] takes a file from version n to n + 1.
FILE_VERSION = 4
MIGRATIONS: dict[int, str] = {
    0: "DROP INDEX IF EXISTS facts_timeline;",
    # 2: episodes carry their model usage (NULL: no model ran yet).
    1: "ALTER TABLE episodes ADD COLUMN usage_json TEXT;",
    # 3: a fact's search document is written by the store after the batch's inserts
    # (SqliteLedgerTx.insert), no longer by a trigger per version row; facts_source served
    # no query (sources are matched through the assertions' episode index).
    2: "DROP TRIGGER IF EXISTS search_facts_ai; DROP INDEX IF EXISTS facts_source;",
    # 4: the fulltext index holds each word under its tenant's prefix (a new tokenizer, a
    # content view, new triggers: graph.stores.sqlite.terms); REINDEX fills it again.
    3: "DROP TABLE IF EXISTS search_vocab; DROP TABLE IF EXISTS search_fts;"
    " DROP TRIGGER IF EXISTS search_docs_ai; DROP TRIGGER IF EXISTS search_docs_ad;"
    " DROP TRIGGER IF EXISTS search_docs_au; DROP TRIGGER IF EXISTS search_episodes_ai;"
    " DROP TRIGGER IF EXISTS search_entities_ai; DROP TRIGGER IF EXISTS search_entities_au;"
    " UPDATE search_docs SET scope = sgam_prefix(tenant_id, kind);",
}
# Run after the current layout's statements, when a migration from that version ran.
REINDEX: dict[int, str] = {3: "INSERT INTO search_fts (search_fts) VALUES ('rebuild');"}

# A tenant's tables, in the order a purge empties them: review lists (they cite episodes)
# and facts first, the tenant's schema and clock last.
TENANT_TABLES = (
    "extraction_candidates",
    "merge_candidates",
    "facts",
    "assertions",
    "episode_mentions",
    "entities",
    "episodes",
    # Emptied by triggers as the rows above go; named so a purge leaves nothing behind
    # whatever the triggers become (its vectors go with each doc, by trigger).
    "search_docs",
    "search_vectors",
    "schemas",
    "system_clock",
)


# A tenant purge's transactions: sized to hold the writer lock about this long each (a
# first batch of PURGE_FIRST_BATCH rows, then by the time the last took), never more than
# PURGE_BATCH rows.
PURGE_BATCH_SECONDS = 0.05
PURGE_FIRST_BATCH = 200
PURGE_BATCH = 20_000

VALID_AT = "valid_from <= :as_of AND (valid_to IS NULL OR valid_to > :as_of)"
KNOWN_AT = "recorded_at <= :known_at AND (retired_at IS NULL OR retired_at > :known_at)"


T = TypeVar("T")


class SqliteLedgerTx:
    """The ledger primitives over one open SQLite transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.c = conn
        # Entities as read in this transaction: upserting one unchanged is skipped.
        self._read: dict[str, Entity] = {}

    def lock_timelines(
        self, *, tenant_id: str, keys: Sequence[str], since: datetime | None = None
    ) -> None:
        # BEGIN IMMEDIATE already holds the database's single write lock.
        return None

    def put_episode(self, *, episode: Episode) -> tuple[Episode, bool]:
        return _put_episode(self.c, episode)

    def holds_lease(self, *, tenant_id: str, episode_id: str, owner: str) -> bool:
        # Under BEGIN IMMEDIATE: claims (also BEGIN IMMEDIATE) wait for this transaction.
        r = self.c.execute(
            "SELECT 1 FROM episodes WHERE tenant_id = ? AND episode_id = ?"
            " AND status = 'processing' AND lease_owner = ?",
            (tenant_id, episode_id, owner),
        ).fetchone()
        return r is not None

    def system_time(self, *, tenant_id: str, wall: datetime) -> datetime:
        # BEGIN IMMEDIATE holds the write lock: nobody reads or moves the clock meanwhile.
        r = self.c.execute(
            "SELECT last_recorded_at FROM system_clock WHERE tenant_id = ?", (tenant_id,)
        ).fetchone()
        at = wall
        if r is not None and (last := from_db(r["last_recorded_at"])) >= wall:
            at = last + EPSILON
        self.c.execute(
            "INSERT INTO system_clock (tenant_id, last_recorded_at) VALUES (?, ?)"
            " ON CONFLICT (tenant_id) DO UPDATE SET last_recorded_at = excluded.last_recorded_at",
            (tenant_id, to_db(at)),
        )
        return at

    def episodes_occurred_at(self, *, tenant_id: str, episode_ids: set[str]) -> dict[str, datetime]:
        ids = sorted(episode_ids)
        if not ids:
            return {}
        rows = self.c.execute(
            f"SELECT episode_id, occurred_at FROM episodes WHERE tenant_id = ? "  # noqa: S608
            f"AND episode_id IN ({in_list(ids)})",
            [tenant_id, *ids],
        ).fetchall()
        return {r["episode_id"]: from_db(r["occurred_at"]) for r in rows}

    def entities(self, *, tenant_id: str, entity_ids: set[str]) -> dict[str, Entity]:
        ids = sorted(entity_ids)
        out: dict[str, Entity] = {}
        for chunk in _chunks(ids):
            rows = self.c.execute(
                f"SELECT * FROM entities WHERE tenant_id = ? AND entity_id IN ({in_list(chunk)})",  # noqa: S608
                [tenant_id, *chunk],
            ).fetchall()
            out.update({r["entity_id"]: entity_unchecked(r) for r in rows})
        self._read.update(out)
        return out

    def upsert_entities(self, *, tenant_id: str, entities: Sequence[Entity]) -> None:
        read = self._read
        entities = [e for e in entities if read.get(e.entity_id) != e]
        if not entities:
            return
        self.c.executemany(
            "INSERT INTO entities (tenant_id, entity_id, entity_type, name, aliases_json, summary,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, entity_id)"
            " DO UPDATE SET entity_type = excluded.entity_type",
            [entity_values(e, tenant_id=tenant_id) for e in entities],
        )

    def current_versions(
        self, *, tenant_id: str, keys: Sequence[str], since: datetime | None = None
    ) -> dict[str, list[Fact]]:
        out: dict[str, list[Fact]] = {k: [] for k in keys}
        # The bound is checked on the rows the timeline index finds (cheap); what it saves
        # is decoding a long timeline's past (~20 us a version) on every write to it.
        ends = "" if since is None else " AND (valid_to IS NULL OR valid_to > ?)"
        bound = [] if since is None else [to_db(since)]
        for chunk in _chunks(list(keys)):
            rows = self.c.execute(
                f"SELECT {FACT_COLUMNS} FROM facts WHERE tenant_id = ? AND retired_at IS NULL "  # noqa: S608
                f"AND timeline_key IN ({in_list(chunk)}){ends} ORDER BY valid_from",
                [tenant_id, *chunk, *bound],
            ).fetchall()
            for r in rows:
                out[r["timeline_key"]].append(fact_from_row(r))
        return out

    def current_fact(self, *, tenant_id: str, fact_id: str) -> Fact | None:
        r = self.c.execute(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE tenant_id = ? AND fact_id = ? "  # noqa: S608
            "AND retired_at IS NULL",
            (tenant_id, fact_id),
        ).fetchone()
        return None if r is None else fact_from_row(r)

    def assertions(self, *, tenant_id: str, keys: Sequence[str]) -> dict[str, list[Assertion]]:
        out: dict[str, list[Assertion]] = {k: [] for k in keys}
        for chunk in _chunks(list(keys)):
            rows = self.c.execute(
                "SELECT * FROM assertions WHERE tenant_id = ?"  # noqa: S608
                f" AND timeline_key IN ({in_list(chunk)}) ORDER BY seq",
                [tenant_id, *chunk],
            ).fetchall()
            for r in rows:
                out[r["timeline_key"]].append(assertion_from_row(r))
        return out

    def append_assertions(self, *, tenant_id: str, rows: Sequence[tuple[str, Assertion]]) -> None:
        self.c.executemany(
            "INSERT INTO assertions (tenant_id, timeline_key, seq, kind, fact_id, recorded_at,"
            " valid_from, valid_to, source_episode_id, payload) VALUES (?,?,?,?,?,?,?,?,?,?)",
            assertion_rows(rows, tenant_id=tenant_id),
        )

    def retire(self, *, tenant_id: str, version_ids: Sequence[str], at: datetime) -> None:
        self.c.executemany(
            "UPDATE facts SET retired_at = ? WHERE tenant_id = ? AND version_id = ?"
            " AND retired_at IS NULL",
            [(when, tenant_id, v) for when in (to_db(at),) for v in version_ids],
        )

    def insert(self, *, tenant_id: str, facts: Sequence[Fact], keys: Sequence[str]) -> None:
        self.c.executemany(
            f"INSERT INTO facts ({FACT_COLUMNS}) VALUES ({in_list(range(FACT_COLUMN_COUNT))})",  # noqa: S608
            fact_rows(facts, tenant_id=tenant_id, keys=keys),
        )
        # Their search documents, in the same transaction (so fulltext sees them when it
        # commits), one per new fact id.
        self.c.executemany(FACT_DOC_INSERT, fact_doc_rows(tenant_id, facts))

    def mention(self, *, tenant_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        self.c.executemany(
            "INSERT OR IGNORE INTO episode_mentions (tenant_id, episode_id, entity_id)"
            " VALUES (?, ?, ?)",
            [(tenant_id, ep, ent) for ep, ent in pairs],
        )

    def episode_timelines(self, *, tenant_id: str, episode_id: str) -> set[str]:
        # No DISTINCT: without statistics SQLite would answer it from the timeline index,
        # in key order, reading every ledger entry of the tenant instead of the episode's.
        rows = self.c.execute(
            "SELECT timeline_key FROM assertions WHERE tenant_id = ? AND source_episode_id = ?",
            (tenant_id, episode_id),
        ).fetchall()
        return {r["timeline_key"] for r in rows}

    def delete_episode_data(self, *, tenant_id: str, episode_id: str) -> None:
        p = (tenant_id, episode_id)
        # A version whose only source is the episode lies on a timeline the episode
        # asserted on (pieces of a cut version keep its timeline and sources): seek those
        # timelines, where sources alone would scan every version of the tenant.
        only = json.dumps([episode_id])
        keys = sorted(self.episode_timelines(tenant_id=tenant_id, episode_id=episode_id))
        for chunk in _chunks(keys):
            self.c.execute(
                "DELETE FROM facts WHERE tenant_id = ? AND timeline_key IN"  # noqa: S608
                f" ({in_list(chunk)}) AND sources_json = ?",
                (tenant_id, *chunk, only),
            )
        self.c.execute("DELETE FROM assertions WHERE tenant_id = ? AND source_episode_id = ?", p)
        self.c.execute("DELETE FROM episode_mentions WHERE tenant_id = ? AND episode_id = ?", p)
        self.c.execute("DELETE FROM episodes WHERE tenant_id = ? AND episode_id = ?", p)


def _put_episode(c: sqlite3.Connection, episode: Episode) -> tuple[Episode, bool]:
    """Insert a new episode in the open transaction; the same one again: (stored, False)."""
    h = episode_hash(episode)
    r = c.execute(
        "SELECT * FROM episodes WHERE tenant_id = ? AND episode_id = ?",
        (episode.tenant_id, episode.episode_id),
    ).fetchone()
    if r is not None:
        existing = episode_from_row(r)
        if existing.content_hash != h:
            raise ConflictError(
                f"episode {episode.episode_id!r} already exists with other content",
                episode_id=episode.episode_id,
            )
        return existing, False
    c.execute(
        "INSERT INTO episodes (tenant_id, episode_id, kind, source, content_json,"
        " content_hash, occurred_at, session_id, metadata_json, recorded_at, status,"
        " attempts, last_error, rejected_json, next_attempt_at, needs_model)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (*episode_values(episode, h), episode.needs_model),
    )
    return episode.model_copy(update={"content_hash": h}), True


class SqliteEraseTx(SqliteLedgerTx, SqliteEraseOps):
    """The ledger primitives and the erasure ones (graph.erasure), in one transaction."""


def _chunks(items: list[str], size: int = 500) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


_EXPORTS: dict[str, tuple[str, str, str]] = {
    # kind: (table, keyset cursor columns, selected columns)
    "entity": ("entities", "entity_id", "*"),
    "episode": ("episodes", "episode_id", "*"),
    "mention": ("episode_mentions", "episode_id, entity_id", "*"),
    # Versions and ledger entries by timeline, in the order of an index that leads with
    # (tenant_id, timeline_key): by version_id or rowid_ alone, every page sorted the
    # whole tenant (1.3 s a page of versions at 1M facts: a ledger export was quadratic).
    "version": ("facts", "timeline_key, version_id", FACT_COLUMNS),
    "assertion": ("assertions", "timeline_key, seq, rowid_", "*"),
}


def _export_record(kind: str, r: sqlite3.Row) -> Record:
    if kind == "entity":
        return entity_record(entity_from_row(r))
    if kind == "episode":
        return episode_record(episode_from_row(r))
    if kind == "mention":
        return mention_record(r["episode_id"], r["entity_id"])
    if kind == "version":
        return version_record(fact_from_row(r), key=r["timeline_key"])
    return assertion_record(assertion_from_row(r), key=r["timeline_key"])


class SqliteEraseReads(SqliteEraseTx):
    """What a forget dry run reads (:class:`graph.erasure.EraseReads`): the erase
    transaction's own reads, over a read transaction, and every version of a timeline.
    Nothing here writes: the dry run's changes stay in memory (graph.erasure.Preview)."""

    def timeline_versions(self, *, tenant_id: str, keys: Sequence[str]) -> dict[str, list[Fact]]:
        out: dict[str, list[Fact]] = {k: [] for k in keys}
        for chunk in _chunks(list(keys)):
            rows = self.c.execute(
                f"SELECT {FACT_COLUMNS} FROM facts WHERE tenant_id = ?"  # noqa: S608
                f" AND timeline_key IN ({in_list(chunk)}) ORDER BY valid_from",
                [tenant_id, *chunk],
            ).fetchall()
            for r in rows:
                out[r["timeline_key"]].append(fact_from_row(r))
        return out


class SqliteStore:
    """The storage port over one SQLite file; ``search`` and ``queue`` share its connection."""

    def __init__(self, path: str | Path, *, url: str | None = None) -> None:
        self.path = str(path)
        self.url = url or f"sqlite:///{path}"
        self.conn = SqliteConnection(self.path)
        self.search = SqliteSearch(self.conn)
        self.queue = SqliteQueue(self.conn)

    @classmethod
    def from_url(cls, url: str) -> SqliteStore:
        """``sqlite:///rel/path.db`` is relative, ``sqlite:////abs/path.db`` absolute."""
        if not url.startswith("sqlite:///"):
            raise invalid(
                f"unsupported store URL {url!r}: use sqlite:///path.db, neo4j://host:7687 or bolt://host:7687",
                field="store",
            )
        path = url[len("sqlite:///") :]
        if not path:
            raise invalid("sqlite URL needs a path, e.g. sqlite:///.sgam/sgam.db", field="store")
        return cls(path, url=url)

    @contextmanager
    def transaction(self) -> Iterator[SqliteLedgerTx]:
        with self.conn.write() as conn:
            try:
                yield SqliteLedgerTx(conn)
            except sqlite3.IntegrityError as e:
                raise ConflictError(f"constraint violated: {e}") from e

    def erase_snapshot(self, work: Callable[[EraseReads], T], /) -> T:
        """A forget dry run's reads (graph.erasure), on one WAL snapshot of this thread's
        connection: no ``BEGIN IMMEDIATE``, so no writer of any tenant waits for it."""
        with self.conn.snapshot():
            try:
                return work(SqliteEraseReads(self.conn.connect()))
            except sqlite3.DatabaseError as e:
                raise translated(e, what="read") from e

    @contextmanager
    def erase_transaction(self) -> Iterator[SqliteEraseTx]:
        """A write transaction with erasure and retention primitives (graph.erasure)."""
        with self.conn.write() as conn:
            try:
                yield SqliteEraseTx(conn)
            except sqlite3.IntegrityError as e:
                raise ConflictError(f"constraint violated: {e}") from e

    def expired_timelines(self, *, tenant_id: str, predicate: str, before: datetime) -> list[str]:
        """A read on its own snapshot (WAL): it scans the tenant's versions of the
        predicate without the writer lock, which every tenant's writes wait for."""
        params = (tenant_id, predicate, to_db(before))
        return expired_keys(self.conn.read(EXPIRED_TIMELINES, params))

    # -- lifecycle ---------------------------------------------------------------------
    def init(self) -> None:
        """Create or migrate the file; refuse one written by a newer sgam."""
        found = int(self.conn.read("PRAGMA user_version")[0][0])
        if found > FILE_VERSION:
            raise StoreUnavailableError(
                f"{self.path} has layout version {found}, newer than this sgam's"
                f" {FILE_VERSION}: upgrade sgam, or export it with the newer one"
                " (sgam export --ledger) and import --restore it here"
            )
        existing = {r[0] for r in self.conn.read("SELECT name FROM sqlite_master")}
        columns = {r["name"] for r in self.conn.read("PRAGMA table_info(episodes)")}
        if found == FILE_VERSION and existing >= _LAYOUT_OBJECTS and "needs_model" in columns:
            # Up to date: opening it writes nothing, so a second process (an export, a
            # CLI command) opens a file the server is writing without waiting for its lock.
            return
        # A new file gets the current layout from SCHEMA_SQL: nothing to migrate.
        new = "episodes" not in existing
        start = FILE_VERSION if new else found
        script = "".join(MIGRATIONS[v] for v in range(start, FILE_VERSION))
        after = "".join(REINDEX.get(v, "") for v in range(start, FILE_VERSION))
        try:
            # One transaction, IMMEDIATE: it waits for another process's writer (a
            # deferred one failed at once, upgrading its read), and a failed migration
            # leaves the file as it was.
            self.conn.executescript(
                "BEGIN IMMEDIATE;"
                + script
                + SCHEMA_SQL
                + QUEUE_SQL
                + SEARCH_SQL
                + after
                + f"PRAGMA user_version = {FILE_VERSION};COMMIT;"
            )
            # Columns added to a table that files of this layout version may lack (CREATE
            # TABLE IF NOT EXISTS leaves an existing table as it is). Null: not known.
            if not new and "needs_model" not in columns:
                self.conn.executescript("ALTER TABLE episodes ADD COLUMN needs_model INTEGER;")
        except sqlite3.DatabaseError as e:
            with contextlib.suppress(sqlite3.Error):
                self.conn.connect().execute("ROLLBACK")
            raise translated(e, what="init") from e

    def close(self) -> None:
        self.conn.close()

    def ping(self) -> None:
        self.conn.read("SELECT 1")

    # -- episodes ----------------------------------------------------------------------
    def put_episode(self, *, episode: Episode) -> tuple[Episode, bool]:
        with self.conn.write() as c:
            return _put_episode(c, episode)

    def get_episode(self, *, tenant_id: str, episode_id: str) -> Episode | None:
        rows = self.conn.read(
            "SELECT * FROM episodes WHERE tenant_id = ? AND episode_id = ?", (tenant_id, episode_id)
        )
        return episode_from_row(rows[0]) if rows else None

    def save_episode_state(self, *, episode: Episode) -> None:
        with self.conn.write() as c:
            c.execute(
                "UPDATE episodes SET status = ?, attempts = ?, last_error = ?, rejected_json = ?,"
                " usage_json = COALESCE(?, usage_json) WHERE tenant_id = ? AND episode_id = ?",
                (
                    episode.status.value,
                    episode.attempts,
                    episode.last_error,
                    json.dumps(episode.rejected),
                    # None keeps what the queue recorded (a restore sets the exported one).
                    None if episode.usage is None else episode.usage.model_dump_json(),
                    episode.tenant_id,
                    episode.episode_id,
                ),
            )

    # -- state reads -------------------------------------------------------------------
    def facts(self, *, tenant_id: str, query: FactQuery) -> list[Fact]:
        where = ["tenant_id = :tenant", KNOWN_AT]
        params: dict[str, Any] = {
            "tenant": tenant_id,
            "known_at": to_db(query.known_at),
            "limit": query.limit,
        }
        if query.as_of is not None:
            where.append(VALID_AT)
            params["as_of"] = to_db(query.as_of)
        for col in ("subject", "predicate", "object", "memory_type"):
            v = getattr(query, col)
            if v is not None:
                where.append(f"{col} = :{col}")  # column names from this fixed tuple only
                params[col] = v
        if query.source_episode_id is not None:
            # Every version citing the episode, at every system time. Sought on the timelines
            # the episode has ledger entries on, the differential test found a version citing
            # it elsewhere (after the episode was deleted and written again), which Neo4j
            # answered: a walk of the tenant's versions until that is understood.
            where.append("EXISTS (SELECT 1 FROM json_each(sources_json) WHERE value = :src)")
            params["src"] = query.source_episode_id
        # Without a subject, the rows an object names are sought and sorted:
        # planned without statistics, the page order would otherwise walk facts_subject,
        # every version of the tenant, checking each (the unary + keeps the order and the
        # cursor off that index). A listing of the whole tenant still walks it in order.
        sort = "+" if query.subject is None and query.object is not None else ""
        if query.after is not None:
            where.append(f"({sort}subject, predicate, fact_id) > (:a_s, :a_p, :a_f)")
            params.update(a_s=query.after[0], a_p=query.after[1], a_f=query.after[2])
            if query.subject is None and query.object is None and query.after[1] == query.predicate:
                # The same bound in facts_predicate's columns (the predicate is fixed): the
                # page seeks where the last one stopped.
                where.append("(subject, fact_id) > (:a_s, :a_f)")
        sql = (
            f"SELECT {FACT_COLUMNS} FROM facts WHERE {' AND '.join(where)}"  # noqa: S608
            f" ORDER BY {sort}subject, predicate, fact_id LIMIT :limit"
        )
        return [fact_from_row(r) for r in self.conn.read(sql, params)]

    def history(
        self,
        *,
        tenant_id: str,
        subject: str,
        predicate: str,
        object: str | None,
        known_at: datetime,
        limit: int | None = None,
        after: tuple[datetime, str] | None = None,
    ) -> list[Fact]:
        sql = (
            f"SELECT {FACT_COLUMNS} FROM facts WHERE tenant_id = :tenant AND subject = :subject"  # noqa: S608
            f" AND predicate = :predicate AND {KNOWN_AT}"
        )
        params: dict[str, Any] = {
            "tenant": tenant_id,
            "subject": subject,
            "predicate": predicate,
            "known_at": to_db(known_at),
        }
        if object is not None:
            sql += " AND object = :object"
            params["object"] = object
        if after is not None:  # keyset cursor: strictly after (valid_from, fact_id)
            sql += " AND (valid_from, fact_id) > (:a_from, :a_fact)"
            params.update(a_from=to_db(after[0]), a_fact=after[1])
        sql += " ORDER BY valid_from, fact_id"
        if limit is not None:
            sql += " LIMIT :limit"
            params["limit"] = limit
        return [fact_from_row(r) for r in self.conn.read(sql, params)]

    def entity(self, *, tenant_id: str, entity_id: str) -> Entity | None:
        rows = self.conn.read(
            "SELECT * FROM entities WHERE tenant_id = ? AND entity_id = ?", (tenant_id, entity_id)
        )
        return entity_from_row(rows[0]) if rows else None

    def neighbors(
        self,
        *,
        tenant_id: str,
        entity_id: str,
        depth: int,
        predicates: Sequence[str] | None,
        direction: Direction,
        as_of: datetime,
        known_at: datetime,
        limit: int | None = None,
    ) -> Neighborhood:
        def hop(ids: list[str], cap: int | None) -> list[Fact]:
            # One index seek per side (facts_subject, facts_object), joined by UNION ALL:
            # an OR of the two makes the planner walk every relation of the tenant, and so
            # does a bare "object IS NOT NULL" (as object > NULL in facts_object); the unary
            # + keeps that test off the index.
            marks = in_list(ids)
            sides: list[tuple[str, list[Any]]] = []
            if direction in (Direction.OUT, Direction.BOTH):
                sides.append((f"subject IN ({marks}) AND +object IS NOT NULL", list(ids)))
            if direction in (Direction.IN, Direction.BOTH):
                if direction is Direction.BOTH:  # a fact between two of ids: once
                    sides.append((f"object IN ({marks}) AND subject NOT IN ({marks})", ids * 2))
                else:
                    sides.append((f"object IN ({marks})", list(ids)))
            t, k = to_db(as_of), to_db(known_at)
            extra = f" AND predicate IN ({in_list(predicates)})" if predicates else ""
            parts, params = [], []
            for cond, values in sides:
                parts.append(
                    f"SELECT {FACT_COLUMNS} FROM facts WHERE tenant_id = ? AND {cond}"  # noqa: S608
                    " AND valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)"
                    " AND recorded_at <= ? AND (retired_at IS NULL OR retired_at > ?)" + extra
                )
                params += [tenant_id, *values, t, t, k, k, *(predicates or ())]
            sql = " UNION ALL ".join(parts)
            if cap is not None:
                sql += " LIMIT ?"
                params.append(cap)
            return [fact_from_row(r) for r in self.conn.read(sql, params)]

        seen, ordered = breadth_first(entity_id, depth, hop, limit)
        ents = [
            e for e in (self.entity(tenant_id=tenant_id, entity_id=i) for i in sorted(seen)) if e
        ]
        return Neighborhood(entities=ents, facts=ordered)

    # -- schemas -----------------------------------------------------------------------
    def get_schema(self, *, tenant_id: str) -> MemorySchema | None:
        rows = self.conn.read(
            "SELECT body_json FROM schemas WHERE tenant_id = ? ORDER BY version DESC LIMIT 1",
            (tenant_id,),
        )
        return schema_from_json(rows[0]["body_json"]) if rows else None

    def put_schema(self, *, tenant_id: str, schema: MemorySchema) -> MemorySchema:
        with self.conn.write() as c:
            r = c.execute(
                "SELECT COALESCE(MAX(version), 0) AS v FROM schemas WHERE tenant_id = ?",
                (tenant_id,),
            ).fetchone()
            stored = schema.model_copy(update={"version": int(r["v"]) + 1})
            c.execute(
                "INSERT INTO schemas (tenant_id, version, body_json, updated_at) VALUES (?,?,?,?)",
                (tenant_id, stored.version, stored.model_dump_json(), to_db(utcnow())),
            )
        return stored

    # -- export and restore (graph.stores.transfer) -------------------------------------------
    def export_snapshot(self) -> AbstractContextManager[None]:
        """The export's pages, of every record type, read from one snapshot of the file:
        a ledger exported while others write is one state of it."""
        return self.conn.snapshot()

    def export_records(self, *, tenant_id: str, kind: RecordType) -> Iterator[Record]:
        """Every record of one type, in pages of :data:`PAGE` after a keyset cursor."""
        if kind == "schema":
            for r in self.conn.read(
                "SELECT body_json FROM schemas WHERE tenant_id = ? ORDER BY version", (tenant_id,)
            ):
                yield schema_record(MemorySchema.model_validate_json(r["body_json"]))
            return
        table, cursor, columns = _EXPORTS[kind]
        after: tuple[Any, ...] | None = None
        while True:
            # Table and column names come from the fixed _EXPORTS table only.
            sql = f"SELECT {columns} FROM {table} WHERE tenant_id = ?"  # noqa: S608
            params: list[Any] = [tenant_id]
            if after is not None:
                sql += f" AND ({cursor}) > ({in_list(after)})"
                params += after
            rows = self.conn.read(sql + f" ORDER BY {cursor} LIMIT {PAGE}", params)
            for r in rows:
                yield _export_record(kind, r)
            if len(rows) < PAGE:
                return
            after = tuple(rows[-1][c.strip()] for c in cursor.split(","))

    def restore_records(self, *, tenant_id: str, records: Sequence[Record]) -> None:
        restore_records(self, tenant_id=tenant_id, records=records)

    # -- administration ----------------------------------------------------------------
    def purge_tenant(self, *, tenant_id: str) -> None:
        """Delete everything of one tenant, in transactions of at most
        :data:`PURGE_BATCH` rows: every tenant's writes wait for the file's one writer
        lock, and one transaction for a large tenant held it for minutes. Run again after
        an interruption, it finishes the job."""
        for table in TENANT_TABLES:  # fixed whitelist of table names
            # Each table has an index that leads with tenant_id: every batch is a seek.
            sql = (
                f"DELETE FROM {table} WHERE rowid IN"  # noqa: S608
                f" (SELECT rowid FROM {table} WHERE tenant_id = ? LIMIT ?)"
            )
            batch = min(PURGE_FIRST_BATCH, PURGE_BATCH)
            while True:
                with self.conn.write() as c:
                    # From BEGIN: time spent queuing for the writer lock is not this
                    # batch's cost, and counting it shrank batches to one row under load.
                    started = time.perf_counter()
                    deleted = c.execute(sql, (tenant_id, batch)).rowcount
                took = max(time.perf_counter() - started, 1e-4)
                self.conn.checkpoint()  # this job's pages, at its own cost
                if deleted < batch:
                    break
                # A row costs 2 µs (a ledger entry) to 130 µs (an entity, with its search
                # document and vectors, by trigger): size the next batch by this one's
                # time, so that each holds the writer lock about PURGE_BATCH_SECONDS.
                batch = max(1, min(PURGE_BATCH, int(batch * PURGE_BATCH_SECONDS / took)))
