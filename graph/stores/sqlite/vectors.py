"""A tenant's vectors in memory, and their ranking against a query.

The embedded store keeps no vector index: each tenant's vectors of one kind and model are
one float32 matrix, cached per process (:class:`VectorCache`). Up to :data:`EXACT_UP_TO`
rows a query is scored against every row. Past it, reading the whole matrix for every
search is what costs (the product over 100k facts, 150 MB, took 7.5 ms on two cores, and
84 ms at 1M; bench/vector_prefilter.py), so rows are first ranked by the Hamming distance
between their sign bits and the query's (48 bytes a row for 384 dimensions), and exact
cosines are computed for the closest :func:`pool_size` rows only (:func:`closest`,
:func:`cosines`). Sign bits estimate the angle (two unit vectors differ in a bit with
probability angle / π), and rescoring makes the order within the pool exact; what can be
missed is a row whose bits look far but whose cosine is among the best, which the pool's
size keeps rare (on 100,000 real MiniLM vectors of the bench's facts, a pool of n/12 kept
all of the exact top 64 on average and 98.4 % at worst over 50 questions). A pool used
up without enough visible rows goes on exactly over the rest.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from graph.embeddings import Vectors

# Rows per tenant and kind scored exactly against every query.
EXACT_UP_TO = 32_768

Bits = npt.NDArray[np.uint64]
Rows = npt.NDArray[np.intp]


@dataclass
class TenantVectors:
    """One tenant's vectors of one kind and model, as loaded from ``search_vectors``."""

    max_id: int
    deleted: int
    item_ids: list[str]
    matrix: Vectors
    bits: Bits  # sign bits of ``matrix``, a column each (:func:`sign_bits`)


class VectorCache:
    """Per-store LRU of tenant matrices; a few tenants' vectors at most stay in memory."""

    def __init__(self, capacity: int = 16) -> None:
        self.capacity = capacity
        self.lock = threading.Lock()
        self.items: OrderedDict[tuple[str, str, str], TenantVectors] = OrderedDict()

    def get(self, key: tuple[str, str, str]) -> TenantVectors | None:
        with self.lock:
            m = self.items.get(key)
            if m is not None:
                self.items.move_to_end(key)
            return m

    def put(self, key: tuple[str, str, str], m: TenantVectors) -> None:
        with self.lock:
            self.items[key] = m
            self.items.move_to_end(key)
            while len(self.items) > self.capacity:
                self.items.popitem(last=False)


def sign_bits(matrix: Vectors) -> Bits:
    """The rows' signs packed into 64-bit words, one row of the result per word and one
    column per row of ``matrix``: a query's distance to every row is then a few
    operations over contiguous arrays (0.5-0.9 ms for 100k rows, bench/vector_prefilter.py)."""
    packed = np.packbits(matrix > 0, axis=1)
    pad = -packed.shape[1] % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(np.ascontiguousarray(packed).view(np.uint64).T)


def distances(bits: Bits, query: Vectors) -> npt.NDArray[np.uint16]:
    """Hamming distance between each column of ``bits`` and the query's signs."""
    q = sign_bits(np.asarray(query, dtype=np.float32)[None, :])[:, 0]
    out = np.zeros(bits.shape[1], dtype=np.uint16)
    for word, mask in zip(bits, q, strict=True):
        out += np.bitwise_count(word ^ mask)
    return out


def pool_size(n: int, first: int) -> int:
    """Rows rescored exactly after the Hamming ranking, of ``n``, for ``first`` wanted."""
    return min(n, max(16 * first, 4096, n // 12))


def closest(distance: npt.NDArray[np.uint16], size: int) -> Rows:
    """The ``size`` rows of smallest distance, in row order; among rows at the cut-off
    distance, the first ones. Distances are small integers, so a histogram finds the
    cut-off in one pass (for a million rows 5.4 ms, a partial sort 11.5)."""
    counts = np.cumsum(np.bincount(distance))
    cut = int(np.searchsorted(counts, size))  # the distance at which the pool fills up
    chosen = distance < cut
    below = int(counts[cut - 1]) if cut > 0 else 0
    chosen[np.flatnonzero(distance == cut)[: size - below]] = True
    return np.flatnonzero(chosen)


def cosines(matrix: Vectors, rows: Rows, query: Vectors, chunk: int = 512) -> Vectors:
    """``matrix[rows] @ query``, a chunk of rows at a time: the rows copied stay in the
    CPU's cache for the product instead of going out to memory and back (85,000 rows of
    a million: 43.6 -> 28.9 ms)."""
    out = np.empty(rows.shape[0], dtype=np.float32)
    for start in range(0, rows.shape[0], chunk):
        np.matmul(matrix[rows[start : start + chunk]], query, out=out[start : start + chunk])
    return out


def top(scores: Vectors, k: int) -> Rows:
    """Indices of the ``k`` highest scores, best first (ties in index order)."""
    if k >= scores.shape[0]:
        return np.argsort(-scores, kind="stable")
    part = np.sort(np.argpartition(-scores, k - 1)[:k])  # row order, for the stable sort
    return part[np.argsort(-scores[part], kind="stable")]


def best_rows(m: TenantVectors, query: Vectors, first: int) -> Iterator[list[tuple[int, float]]]:
    """The rows of ``m`` with their cosine to ``query``, best first, in batches: ``first``
    rows, then four times as many as so far each time, until every row has come."""
    n = len(m.item_ids)
    q = np.asarray(query, dtype=np.float32)
    seen: set[int] = set()
    if n > EXACT_UP_TO:
        pool = closest(distances(m.bits, q), pool_size(n, first))
        for batch in _batches(cosines(m.matrix, pool, q), pool, first):
            seen.update(row for row, _ in batch)
            yield batch
        first = max(first, len(seen))
    for batch in _batches(m.matrix @ q, None, first):
        rest = [(row, score) for row, score in batch if row not in seen]
        if rest:
            yield rest


def _batches(scores: Vectors, rows: Rows | None, first: int) -> Iterator[list[tuple[int, float]]]:
    n = scores.shape[0]
    start, want = 0, min(n, first)
    while start < n:
        ranked = top(scores, want)[start:want]
        yield [(int(rows[i]) if rows is not None else int(i), float(scores[i])) for i in ranked]
        start, want = want, min(n, want * 4)


__all__ = [
    "EXACT_UP_TO",
    "TenantVectors",
    "VectorCache",
    "best_rows",
    "closest",
    "cosines",
    "distances",
    "pool_size",
    "sign_bits",
    "top",
]
