"""The SQLite file's layout version: an old file is migrated, a newer one refused."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graph import EpisodeCreate, EpisodeKind, MemoryDelta, MemoryService
from graph.errors import StoreUnavailableError
from graph.model import EpisodeStatus
from graph.retrieval import ItemKind, Retriever
from graph.retrieval.text import terms
from graph.stores.sqlite import connection as connection_module
from graph.stores.sqlite.search import scope_token
from graph.stores.sqlite.store import FILE_VERSION, SqliteStore

LATER = datetime.now(UTC) + timedelta(minutes=5)


def _user_version(path: Path) -> int:
    with sqlite3.connect(path) as c:
        return int(c.execute("PRAGMA user_version").fetchone()[0])


def test_a_first_layout_file_is_migrated(tmp_path: Path) -> None:
    fresh = tmp_path / "new.db"
    s = SqliteStore(fresh)
    s.init()
    s.close()
    assert _user_version(fresh) == FILE_VERSION
    with sqlite3.connect(fresh) as c:
        c.execute("PRAGMA user_version = 0")
        c.execute("ALTER TABLE episodes DROP COLUMN usage_json")  # not in the first layout
        c.execute("CREATE INDEX facts_timeline ON facts (tenant_id, timeline_key, retired_at)")
    s = SqliteStore(fresh)
    s.init()
    s.close()
    with sqlite3.connect(fresh) as c:
        names = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "facts_timeline" not in names
    assert "facts_timeline_current" in names
    assert _user_version(fresh) == FILE_VERSION


def test_a_version_1_file_gets_the_usage_column_and_keeps_its_episodes(tmp_path: Path) -> None:
    db = tmp_path / "v1.db"
    s = SqliteStore(db)
    s.init()
    s.close()
    with sqlite3.connect(db) as c:  # a file written by the layout before model usage
        c.execute("ALTER TABLE episodes DROP COLUMN usage_json")
        c.execute("PRAGMA user_version = 1")
    at = datetime(2026, 6, 1, tzinfo=UTC)
    body = EpisodeCreate(episode_id="old", content="x", occurred_at=at)
    with sqlite3.connect(db) as c:
        columns = {r[1] for r in c.execute("PRAGMA table_info(episodes)")}
    assert "usage_json" not in columns
    s = SqliteStore(db)
    s.init()
    try:
        assert _user_version(db) == FILE_VERSION == 4
        MemoryService(s).add_episode(tenant_id="t", body=body, status=EpisodeStatus.PENDING)
        episode = s.get_episode(tenant_id="t", episode_id="old")
        assert episode is not None
        assert episode.usage is None
        claimed = s.queue.claim_episode(
            tenant_id="t",
            episode_id="old",
            owner="w",
            now=datetime.now(UTC),
            lease_until=LATER,
            from_statuses={"pending"},
        )
        assert claimed is not None
        usage = {"model": "m", "prompt_tokens": 7, "completion_tokens": 3, "calls": 1}
        done = s.queue.complete(
            tenant_id="t", episode_id="old", owner="w", rejected=[], usage=usage
        )
        assert done
        episode = s.get_episode(tenant_id="t", episode_id="old")
        assert episode is not None
        assert episode.usage is not None
        assert (episode.usage.prompt_tokens, episode.usage.completion_tokens) == (7, 3)
    finally:
        s.close()


def test_a_newer_file_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    with sqlite3.connect(db) as c:
        c.execute(f"PRAGMA user_version = {FILE_VERSION + 1}")
    s = SqliteStore(db)
    with pytest.raises(StoreUnavailableError, match="newer than this sgam"):
        s.init()
    s.close()


def test_a_version_2_file_writes_fact_documents_once_per_fact(tmp_path: Path) -> None:
    """Layout 3 writes a fact's search document from the store, not from a trigger per
    version: a version-2 file loses the trigger (which would write it twice) and the
    unused facts_source index, and its facts stay searchable, one document per fact."""
    db = tmp_path / "v2.db"
    s = SqliteStore(db)
    s.init()
    s.close()
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA user_version = 2")
        c.execute("CREATE INDEX facts_source ON facts (tenant_id, source_episode_id)")
        c.execute(
            "CREATE TRIGGER search_facts_ai AFTER INSERT ON facts BEGIN"
            " INSERT INTO search_docs (tenant_id, kind, item_id, scope, body)"
            " VALUES (new.tenant_id, 'fact', new.fact_id || '-trigger', 'x', 'x'); END"
        )
    s = SqliteStore(db)
    s.init()
    svc = MemoryService(s)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    svc.add_episode(
        tenant_id="t",
        body=EpisodeCreate(episode_id="e1", kind=EpisodeKind.EVENT, content="x", occurred_at=at),
    )
    first = svc.write_facts(
        tenant_id="t",
        deltas=[
            MemoryDelta(subject="mira", predicate="lives_in", value="Porto", source_episode_id="e1")
        ],
    )
    # A late fact cuts it: the cut version is a second version of the same fact id.
    svc.write_facts(
        tenant_id="t",
        deltas=[
            MemoryDelta(
                subject="mira",
                predicate="lives_in",
                value="Lisbon",
                valid_from=at + timedelta(days=30),
                source_episode_id="e1",
            ),
        ],
    )
    s.close()
    assert _user_version(db) == FILE_VERSION
    with sqlite3.connect(db) as c:
        names = {r[0] for r in c.execute("SELECT name FROM sqlite_master")}
        docs = c.execute(
            "SELECT item_id, body FROM search_docs WHERE kind = 'fact' ORDER BY doc"
        ).fetchall()
        versions = c.execute(
            "SELECT count(*) FROM facts WHERE fact_id = ?", (first.facts[0].fact_id,)
        ).fetchone()[0]
    assert "search_facts_ai" not in names
    assert "facts_source" not in names
    assert versions == 2
    assert [b for _, b in docs] == ["mira lives in Porto", "mira lives in Lisbon"]
    assert docs[0][0] == first.facts[0].fact_id


# The search index of layout 3 (each row's scope token in its own column, required by
# every MATCH; plain words, so FTS5's document frequencies spanned every tenant), put back
# over a file written by this code: search_docs keeps its rows, with layout 3's scopes.
_LAYOUT_3_SEARCH = """
DROP TRIGGER search_docs_ai; DROP TRIGGER search_docs_ad; DROP TRIGGER search_docs_au;
DROP TRIGGER search_episodes_ai; DROP TRIGGER search_entities_ai;
DROP TRIGGER search_entities_au;
DROP TABLE search_vocab; DROP TABLE search_fts; DROP VIEW search_terms;
UPDATE search_docs SET scope = lower(hex(tenant_id)) || 'x' || kind;
CREATE VIRTUAL TABLE search_fts USING fts5(
  scope, body, content = 'search_docs', content_rowid = 'doc',
  tokenize = 'porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE search_vocab USING fts5vocab(search_fts, 'row');
CREATE TRIGGER search_docs_ai AFTER INSERT ON search_docs BEGIN
  INSERT INTO search_fts (rowid, scope, body) VALUES (new.doc, new.scope, new.body);
END;
CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs BEGIN
  INSERT INTO search_fts (search_fts, rowid, scope, body)
  VALUES ('delete', old.doc, old.scope, old.body);
  DELETE FROM search_vectors WHERE doc = old.doc;
END;
CREATE TRIGGER search_episodes_ai AFTER INSERT ON episodes BEGIN
  INSERT INTO search_docs (tenant_id, kind, item_id, scope, body)
  SELECT new.tenant_id, 'episode', new.episode_id, lower(hex(new.tenant_id)) || 'xepisode',
    new.content_json;
END;
CREATE TRIGGER search_entities_ai AFTER INSERT ON entities BEGIN
  INSERT INTO search_docs (tenant_id, kind, item_id, scope, body)
  SELECT new.tenant_id, 'entity', new.entity_id, lower(hex(new.tenant_id)) || 'xentity',
    new.name;
END;
INSERT INTO search_fts (search_fts) VALUES ('rebuild');
PRAGMA user_version = 3;
"""


def _note(subject: str, value: str) -> MemoryDelta:
    return MemoryDelta(
        subject=subject,
        subject_type="Document",
        predicate="note",
        value=value,
        valid_from=datetime(2026, 1, 1, tzinfo=UTC),
        source_episode_id="src",
    )


def test_a_version_3_file_is_reindexed_under_tenant_prefixes(tmp_path: Path) -> None:
    """Layout 4 indexes each word under its tenant's prefix: a version-3 file's index is
    made again from its docs on open, in the migration's transaction. Its items are found
    and its tenants rank by their own document frequencies, which layout 3 could not."""
    db = tmp_path / "v3.db"
    s = SqliteStore(db)
    s.init()
    svc = MemoryService(s)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    for tenant, text in (("small", "renewal talk with acme"), ("big", "noise")):
        svc.add_episode(
            tenant_id=tenant,
            body=EpisodeCreate(
                episode_id="src", kind=EpisodeKind.EVENT, content=text, occurred_at=at
            ),
        )
    # Within "small" both query words are in one row each, and "notice" twice in its row:
    # it ranks first. Counted over both tenants ("notice" in 400 rows of "big") it would
    # weigh next to nothing, and the "renewal" row would rank first.
    small = svc.write_facts(
        tenant_id="small",
        deltas=[
            _note("doc-0", "renewal due"),
            _note("doc-1", "notice, notice again"),
            _note("doc-2", "an unrelated remark"),
        ],
    ).facts
    svc.write_facts(
        tenant_id="big", deltas=[_note(f"n-{i}", f"notice number {i}") for i in range(400)]
    )
    s.close()
    with sqlite3.connect(db) as c:
        c.executescript(_LAYOUT_3_SEARCH)
        old = [
            r[0]
            for r in c.execute(
                "SELECT d.item_id FROM search_fts f JOIN search_docs d ON d.doc = f.rowid"
                " WHERE search_fts MATCH ? ORDER BY bm25(search_fts, 0.0, 1.0)",
                ('scope : "' + b"small".hex() + 'xfact" AND body : ("renewal" OR "notice")',),
            )
        ]
    assert old == [small[0].fact_id, small[1].fact_id]  # the defect: "big" decided
    assert _user_version(db) == 3

    s = SqliteStore(db)
    s.init()
    try:
        assert _user_version(db) == FILE_VERSION == 4
        # The index holds exactly what its content view says (FTS5's own check).
        s.conn.read("INSERT INTO search_fts (search_fts, rank) VALUES ('integrity-check', 1)")
        scopes = s.conn.read("SELECT DISTINCT tenant_id, kind, scope FROM search_docs")
        assert len(scopes) == 6  # two tenants, three kinds
        assert all(r["scope"] == scope_token(r["tenant_id"], ItemKind(r["kind"])) for r in scopes)

        def found(tenant: str, kind: ItemKind, query: str) -> list[str]:
            hits = s.search.fulltext(
                tenant_id=tenant,
                kind=kind,
                terms=terms(query),
                window=Retriever.window(),
                limit=5,
            )
            return [h.item_id for h in hits]

        assert found("small", ItemKind.FACT, "renewal notice") == [
            small[1].fact_id,
            small[0].fact_id,
        ]
        assert found("small", ItemKind.EPISODE, "acme renewal") == ["src"]
        assert found("small", ItemKind.ENTITY, "doc") != []
        assert found("big", ItemKind.FACT, "renewal") == []
        # Written after the migration: through layout 4's triggers, not layout 3's.
        svc = MemoryService(s)
        svc.add_episode(
            tenant_id="small",
            body=EpisodeCreate(
                episode_id="late",
                kind=EpisodeKind.EVENT,
                content="a quarterly invoice",
                occurred_at=at,
            ),
        )
        svc.write_facts(tenant_id="small", deltas=[_note("ledger", "quarterly invoice")])
        assert found("small", ItemKind.EPISODE, "quarterly") == ["late"]
        assert len(found("small", ItemKind.FACT, "quarterly invoice")) == 1
        assert found("small", ItemKind.ENTITY, "ledger") != []
        s.conn.read("INSERT INTO search_fts (search_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        s.close()


def _current_file(path: Path) -> Path:
    s = SqliteStore(path)
    s.init()
    s.close()
    return path


@contextmanager
def _writing_elsewhere(path: Path) -> Iterator[None]:
    """Another process, mid-write: it holds the file's writer lock."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_an_up_to_date_file_opens_while_another_process_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sgam export` beside a running server: opening a current file writes nothing, so
    it does not wait for (or fail on) the writer lock another connection holds."""
    path = _current_file(tmp_path / "busy.db")
    monkeypatch.setattr(connection_module, "BUSY_TIMEOUT_S", 0.2)
    with _writing_elsewhere(path):
        s = SqliteStore(path)
        s.init()
        assert s.get_episode(tenant_id="t", episode_id="e") is None  # and it reads
        s.close()


def test_a_file_to_migrate_behind_a_held_lock_is_a_503_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _current_file(tmp_path / "old.db")
    with sqlite3.connect(path) as c:
        c.execute("PRAGMA user_version = 3")
    monkeypatch.setattr(connection_module, "BUSY_TIMEOUT_S", 0.2)
    with _writing_elsewhere(path):
        s = SqliteStore(path)
        with pytest.raises(StoreUnavailableError, match="busy"):
            s.init()
        s.close()
    assert _user_version(path) == 3  # nothing half-done
