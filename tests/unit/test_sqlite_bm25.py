"""FTS5's BM25 in Python (graph.stores.sqlite.bm25) and the narrowed fulltext built on it:
the same scores as ``bm25()`` for the same rows, and the same ranking of the rows kept."""

from __future__ import annotations

import math
import random
import sqlite3
from collections import Counter
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graph.model import EpisodeCreate
from graph.retrieval import ItemKind, Window
from graph.service import MemoryService
from graph.stores.sqlite.bm25 import Averages, idf, score, varint
from graph.stores.sqlite.store import SqliteStore
from graph.timeutil import utcnow


def put_varint(value: int) -> bytes:
    """SQLite's sqlite3PutVarint, written from its format: 7 bits a byte, high bit set on
    all but the last; past 56 bits the ninth byte carries 8 bits whole."""
    if value >> 56:
        out = [value & 0xFF]
        value >>= 8
        for _ in range(8):
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        return bytes(reversed(out))
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(reversed(out))


@given(st.lists(st.integers(min_value=0, max_value=2**64 - 1), min_size=1, max_size=5))
def test_varints_decode_what_sqlite_encodes(values: list[int]) -> None:
    data = b"".join(put_varint(v) for v in values)
    pos, out = 0, []
    for _ in values:
        value, pos = varint(data, pos)
        out.append(value)
    assert out == values
    assert pos == len(data)


def test_known_varints() -> None:
    assert varint(b"\x7f") == (127, 1)
    assert varint(b"\x81\x00") == (128, 2)
    assert varint(b"\x00\x05", 1) == (5, 2)
    assert varint(b"\xff" * 9) == (2**64 - 1, 9)


def test_an_empty_averages_record_is_an_empty_index() -> None:
    assert Averages.decode(b"") == Averages(rows=0, tokens=0)
    assert Averages.decode(put_varint(4) + put_varint(10)).mean_length == 2.5


def test_idf_is_never_zero_or_below() -> None:
    assert idf(100, 1) == pytest.approx(math.log(99.5 / 1.5))
    assert idf(100, 50) == 1e-6  # log(50.5 / 50.5) = 0
    assert idf(100, 90) == 1e-6


VOCAB = ["lamp", "moth", "owl", "night", "light", "wing", "dust", "glow"]


def fts_table(docs: list[list[str]]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    conn.executemany(
        "INSERT INTO t (rowid, x) VALUES (?, ?)", [(i + 1, " ".join(d)) for i, d in enumerate(docs)]
    )
    conn.commit()  # FTS5 writes its averages record when the transaction commits
    return conn


def python_bm25(conn: sqlite3.Connection, query: list[str]) -> dict[int, float]:
    """Every row matching any query word, scored by the module from the index's own
    records: the averages record, each row's length and its count of each word."""
    avg = Averages.decode(conn.execute("SELECT block FROM t_data WHERE id = 1").fetchone()[0])
    freqs: dict[int, Counter[str]] = {}
    for doc, term in conn.execute("SELECT doc, term FROM v"):
        freqs.setdefault(doc, Counter())[term] += 1
    lengths = {doc: sum(c.values()) for doc, c in freqs.items()}
    df = {w: sum(1 for c in freqs.values() if c[w]) for w in query}
    weights = [(w, idf(avg.rows, df[w])) for w in query]
    return {
        doc: score(c, weights, lengths[doc], avg.mean_length)
        for doc, c in freqs.items()
        if any(c[w] for w in query)
    }


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(
        st.lists(st.sampled_from(VOCAB), min_size=1, max_size=12), min_size=1, max_size=40
    ),
    query=st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4, unique=True),
)
def test_scores_equal_fts5_bm25(docs: list[list[str]], query: list[str]) -> None:
    conn = fts_table(docs)
    avg = Averages.decode(conn.execute("SELECT block FROM t_data WHERE id = 1").fetchone()[0])
    assert avg.rows == len(docs)
    assert avg.tokens == sum(len(d) for d in docs)
    expected = {
        rowid: -s
        for rowid, s in conn.execute(
            "SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", (" OR ".join(query),)
        )
    }
    got = python_bm25(conn, query)
    assert got.keys() == expected.keys()
    for rowid, s in expected.items():
        assert got[rowid] == s  # the same operations in the same order: equal, not close


T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)


def episode(svc: MemoryService, tenant: str, eid: str, text: str) -> None:
    svc.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id=eid, content=text, occurred_at=T0)
    )


def window(at: datetime | None = None) -> Window:
    t = at or utcnow()
    return Window(as_of=t, known_at=t)


def test_narrowed_fulltext_keeps_the_rare_rows_with_their_full_query_scores(
    sqlite_store: SqliteStore, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "lamp" is common (in 4 or more of the scope's rows, under half of them), "moth"
    # rare: the narrowed search matches "moth" and scores each row over both words.
    monkeypatch.setattr("graph.stores.sqlite.search._COMMON_DF", 4)
    svc = MemoryService(sqlite_store)
    search = sqlite_store.search
    rng = random.Random(7)
    filler = ["wing", "dust", "glow", "night", "owl"]
    for i in range(6):  # lamp only, of varied lengths: they would fill a full query's list
        episode(svc, tenant, f"l{i}", " ".join(["lamp", *rng.choices(filler, k=i)]))
    episode(svc, tenant, "m0", "lamp moth")
    episode(svc, tenant, "m1", "moth moth and a lamp lamp glowing in the night")
    episode(svc, tenant, "m2", "moth wing")
    for i in range(8):
        episode(svc, tenant, f"f{i}", " ".join(rng.choices(filler, k=3)))
    # Another tenant's moth rows, better matches, never reach this tenant.
    for i in range(3):
        episode(svc, tenant + "-b", f"b{i}", "moth lamp moth")
    query = search._query_terms(tenant, ItemKind.EPISODE, ["lamp", "moth"])
    assert query.kept == ["lamp", "moth"]
    assert query.rare() == ["moth"]

    narrowed = search.fulltext(
        tenant_id=tenant, kind=ItemKind.EPISODE, terms=["lamp", "moth"], window=window(), limit=10
    )
    monkeypatch.setattr("graph.stores.sqlite.search._NARROW_ROWS", 0)  # FTS5's own bm25()
    assert search._query_terms(tenant, ItemKind.EPISODE, ["lamp", "moth"]).rare() is None
    full = search.fulltext(
        tenant_id=tenant, kind=ItemKind.EPISODE, terms=["lamp", "moth"], window=window(), limit=10
    )
    assert {h.item_id for h in full} == {"m0", "m1", "m2"} | {f"l{i}" for i in range(6)}
    # The rows holding the rare word, in the full query's order, with its scores.
    assert [(h.item_id, h.score) for h in narrowed] == [
        (h.item_id, h.score) for h in full if h.item_id.startswith("m")
    ]
    assert {h.item_id for h in narrowed} == {"m0", "m1", "m2"}
    assert narrowed[-1].score > 0
    # The limit cuts the best first.
    two = search.fulltext(
        tenant_id=tenant, kind=ItemKind.EPISODE, terms=["lamp", "moth"], window=window(), limit=2
    )
    assert two == narrowed[:2]


def lamps_and_owls(
    store: SqliteStore, tenant: str, monkeypatch: pytest.MonkeyPatch, *, owls: int
) -> MemoryService:
    """Four "lamp" rows (common once a word in 3 rows is) and `owls` filler rows."""
    monkeypatch.setattr("graph.stores.sqlite.search._COMMON_DF", 3)
    svc = MemoryService(store)
    for i in range(4):
        episode(svc, tenant, f"l{i}", f"lamp {i}")
    for i in range(owls):
        episode(svc, tenant, f"f{i}", f"owl {i}")
    return svc


def test_narrowed_fulltext_applies_the_window(
    sqlite_store: SqliteStore, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = lamps_and_owls(sqlite_store, tenant, monkeypatch, owls=5)
    episode(svc, tenant, "early", "moth lamp")
    between = utcnow()
    episode(svc, tenant, "late", "moth")
    search = sqlite_store.search
    assert search._query_terms(tenant, ItemKind.EPISODE, ["lamp", "moth"]).rare() == ["moth"]
    hits = search.fulltext(
        tenant_id=tenant, kind=ItemKind.EPISODE, terms=["lamp", "moth"], window=window(), limit=5
    )
    assert sorted(h.item_id for h in hits) == ["early", "late"]
    # Known at a time before "late" was recorded: it is not visible.
    past = search.fulltext(
        tenant_id=tenant,
        kind=ItemKind.EPISODE,
        terms=["lamp", "moth"],
        window=window(between),
        limit=5,
    )
    assert [h.item_id for h in past] == ["early"]
    # A rare word no visible row holds: nothing, not the common word's rows.
    assert (
        search.fulltext(
            tenant_id=tenant,
            kind=ItemKind.EPISODE,
            terms=["lamp", "moth"],
            window=window(T0),
            limit=5,
        )
        == []
    )


def test_ordinary_fulltext_when_rare_rows_are_many_or_a_word_is_split(
    sqlite_store: SqliteStore, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = lamps_and_owls(sqlite_store, tenant, monkeypatch, owls=7)
    episode(svc, tenant, "m", "moth lamp o'neil")
    search = sqlite_store.search
    assert search._query_terms(tenant, ItemKind.EPISODE, ["lamp", "moth"]).rare() == ["moth"]
    # Only rare words, or only common ones: nothing to narrow.
    assert search._query_terms(tenant, ItemKind.EPISODE, ["moth", "m"]).rare() is None
    assert search._query_terms(tenant, ItemKind.EPISODE, ["lamp", "owl"]).rare() is None
    # A word the index stores as two tokens is a phrase FTS5 must count itself.
    assert search._query_terms(tenant, ItemKind.EPISODE, ["lamp", "o'neil"]).rare() is None
    monkeypatch.setattr("graph.stores.sqlite.search._NARROW_ROWS", 0)
    assert search._query_terms(tenant, ItemKind.EPISODE, ["lamp", "moth"]).rare() is None
