"""FTS5's ``bm25()``, computed in Python for rows the index has already found.

Why: FTS5 scores a query by visiting every row that holds any of its terms, and for
each row looks up its length; a query word held by ten thousand of a tenant's facts
("phone", "live") costs 8-11 ms per search at 100k facts even when one rare word
("1234", a name) decides what ranks first. The store's narrowed search
(``SqliteSearch.fulltext``) asks FTS5 only for the rows holding a rare word and scores
them here over every query word, with the same formula and inputs as FTS5's own
function (sqlite3's ``ext/fts5/fts5_aux.c``: k1 = 1.2, b = 0.75, one column, weight 1),
so a row's score is the one ``bm25(search_fts)`` gives it (tests/unit/test_sqlite_bm25.py
compares them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

K1 = 1.2
B = 0.75


def varint(data: bytes, pos: int = 0) -> tuple[int, int]:
    """SQLite's varint at ``pos`` (big-endian, 7 bits a byte, the ninth byte whole), and
    the position after it: how FTS5 stores counts in its records."""
    value = 0
    for i in range(8):
        byte = data[pos + i]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, pos + i + 1
    return (value << 8) | data[pos + 8], pos + 9


@dataclass(frozen=True)
class Averages:
    """The index's row count and token count over every row (FTS5's "averages record",
    rowid 1 of ``<table>_data``): what ``bm25()`` takes N and the mean length from."""

    rows: int
    tokens: int

    @classmethod
    def decode(cls, record: bytes) -> Averages:
        if not record:  # an index that has never committed a row
            return cls(rows=0, tokens=0)
        rows, pos = varint(record)
        tokens, _ = varint(record, pos)
        return cls(rows=rows, tokens=tokens)

    @property
    def mean_length(self) -> float:
        return self.tokens / self.rows if self.rows else 0.0


def idf(rows: int, hits: int) -> float:
    """FTS5's inverse document frequency of a phrase held by ``hits`` of ``rows`` rows;
    never zero or below (a word in most rows still counts a little, as in FTS5)."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0.0 else 1e-6


def score(
    freqs: Mapping[str, int], weights: Sequence[tuple[str, float]], length: int, mean: float
) -> float:
    """BM25 of one row of ``length`` tokens holding each token ``freqs[t]`` times, over
    the query's tokens and their IDFs in query order (``weights``); positive, higher is
    better (FTS5 returns it negated, so that ascending order is best first)."""
    norm = K1 * (1 - B + B * length / mean) if mean else K1
    total = 0.0
    for token, weight in weights:
        f = float(freqs.get(token, 0))
        total += weight * ((f * (K1 + 1.0)) / (f + norm))  # FTS5's order of operations
    return total


__all__ = ["Averages", "idf", "score", "varint"]
