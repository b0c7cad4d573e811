"""The SQLite fulltext index's terms (graph.stores.sqlite.terms): per-tenant prefixes that
leave the porter stemmer's work on each word as it was."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from graph.retrieval.text import words
from graph.stores.sqlite.search import SEARCH_SQL
from graph.stores.sqlite.terms import index_terms, register, term_prefix

ROOT = Path(__file__).resolve().parents[2]


def test_terms_are_pinned() -> None:
    """The index's deletes recompute a doc's terms: a change here needs a layout version
    that re-indexes (graph.stores.sqlite.store.MIGRATIONS), so it must not pass unnoticed."""
    p = term_prefix("acme", "fact")
    assert p == "bkqgsqjtcdkdtbmt"
    assert index_terms(p, "Mira's café, 2026!") == (
        "bkqgsqjtcdkdtbmt_mira bkqgsqjtcdkdtbmt_s bkqgsqjtcdkdtbmt_café bkqgsqjtcdkdtbmt_2026"
    )
    assert index_terms(p, " ,; ") == ""


def test_prefixes_are_short_vowel_free_and_differ_per_tenant_and_kind() -> None:
    prefixes = {
        term_prefix(t, k)
        for t in ("a", "b", "acme", "x" * 64, "a-b", "a_b")
        for k in ("fact", "entity", "episode")
    }
    assert len(prefixes) == 18
    assert all(re.fullmatch(r"[bcdfghjklmnpqrst]{16}", p) for p in prefixes)


def _tokenizer() -> sqlite3.Connection:
    """A scratch FTS5 table with the index's own tokenizer (read from SEARCH_SQL)."""
    found = re.search(r"tokenize = (\"[^\"]+\")", SEARCH_SQL)
    assert found is not None
    c = sqlite3.connect(":memory:")
    c.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize = {found.group(1)})")
    c.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    return c


def _tokens(c: sqlite3.Connection, texts: list[str]) -> list[list[str]]:
    c.execute("DELETE FROM t")
    c.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", enumerate(texts, 1))
    out: list[list[str]] = [[] for _ in texts]
    for doc, term in c.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
        out[doc - 1].append(term)
    return out


def test_a_prefixed_word_is_stemmed_as_the_word_alone() -> None:
    """Every word of the docs: under a prefix, the index's tokenizer (porter) makes of it
    one token, the prefix and what it makes of the word alone — except for words of one
    or two letters (left alone bare, stemmed under a prefix), words starting with "y" (a
    vowel after a consonant) and words whose bare stem is a vowel and a consonant (the
    rule for a final e then sees the prefix: "use" stays "use", bare it is "us"). All
    are the same at index and query time."""
    text = " ".join(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")))
    vocab = sorted(set(words(text)) | {"café", "naïve", "école", "feeds", "hopping"})
    vocab = [w for w in vocab if len(w) >= 3 and not w.startswith("y") and len(w) <= 40]
    assert len(vocab) > 1000
    prefix = term_prefix("a-tenant-with-a-long-id-" + "x" * 40, "episode")
    c = _tokenizer()
    bare = _tokens(c, vocab)
    prefixed = _tokens(c, [index_terms(prefix, w) for w in vocab])
    differ = [
        (w, b, p)
        for w, b, p in zip(vocab, bare, prefixed, strict=True)
        if [f"{prefix}_{t}" for t in b] != p
    ]
    assert len(differ) < len(vocab) // 100
    assert all(re.fullmatch(r"[aeiou][^aeiouy]", b[0]) for _, b, _ in differ), differ


def test_the_sql_functions_match_the_python_ones() -> None:
    c = sqlite3.connect(":memory:")
    register(c)
    row = c.execute(
        "SELECT sgam_prefix('acme', 'fact'), sgam_terms(sgam_prefix('acme', 'fact'), ?),"
        " sgam_terms(NULL, 'x'), sgam_prefix(1, 'fact')",
        ("Mira lives in Porto",),
    ).fetchone()
    p = term_prefix("acme", "fact")
    assert row == (p, index_terms(p, "Mira lives in Porto"), None, None)
