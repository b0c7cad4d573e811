"""Ranking a tenant's vectors on the embedded store: exact up to EXACT_UP_TO rows, a sign-bit
prefilter with exact rescoring past it, and nothing lost when the pool runs out."""

from __future__ import annotations

import numpy as np
import pytest

from graph.stores.sqlite.vectors import (
    EXACT_UP_TO,
    TenantVectors,
    best_rows,
    closest,
    cosines,
    distances,
    pool_size,
    sign_bits,
)

DIM = 384


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def tenant(matrix: np.ndarray) -> TenantVectors:
    ids = [f"i{n}" for n in range(matrix.shape[0])]
    return TenantVectors(max_id=1, deleted=0, item_ids=ids, matrix=matrix, bits=sign_bits(matrix))


@pytest.fixture(scope="module")
def big() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """40,000 random rows (past the exact size) with 64 planted near a query."""
    rng = np.random.default_rng(7)
    n = EXACT_UP_TO + 7_232
    matrix = unit(rng.standard_normal((n, DIM)))
    query = unit(rng.standard_normal(DIM))
    planted = rng.choice(n, size=64, replace=False)
    matrix[planted] = unit(query + 0.5 * unit(rng.standard_normal((64, DIM))))
    return matrix, query, planted


def test_the_closest_rows_come_first_with_exact_cosines_past_the_exact_size(
    big: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    matrix, query, planted = big
    assert matrix.shape[0] > EXACT_UP_TO
    assert pool_size(matrix.shape[0], 64) < matrix.shape[0]
    first = next(best_rows(tenant(matrix), query, 64))
    exact = matrix @ query
    want = sorted(planted.tolist(), key=lambda r: (-exact[r], r))
    assert [row for row, _ in first] == want
    assert np.allclose([score for _, score in first], exact[want], atol=1e-6)


def test_every_row_comes_once_with_its_cosine_when_the_caller_keeps_asking(
    big: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    matrix, query, _ = big
    exact = matrix @ query
    seen: list[int] = []
    for batch in best_rows(tenant(matrix), query, 64):
        scores = [score for _, score in batch]
        assert scores == sorted(scores, reverse=True)  # best first within a batch
        assert np.allclose(scores, exact[[row for row, _ in batch]], atol=1e-6)
        seen.extend(row for row, _ in batch)
    # the pool first, then the rest exactly: each row once
    assert sorted(seen) == list(range(matrix.shape[0]))


def test_small_tenants_are_ranked_exactly_ties_in_row_order() -> None:
    rng = np.random.default_rng(3)
    matrix = unit(rng.standard_normal((300, DIM)))
    matrix[[10, 20, 30]] = matrix[5]  # ties at the top
    query = matrix[5]
    rows = [row for batch in best_rows(tenant(matrix), query, 8) for row, _ in batch]
    exact = matrix @ query
    assert sorted(rows[:4]) == [5, 10, 20, 30]
    assert rows == sorted(range(300), key=lambda r: (-exact[r], r))


def test_sign_bits_pack_any_dimension_into_whole_words() -> None:
    rows = np.array([[1.0, -1.0, 0.5] * 4, [-1.0, 1.0, -0.5] * 4], dtype=np.float32)  # 12 dims
    bits = sign_bits(rows)
    assert bits.shape == (1, 2)  # one word, a column per row
    assert bits.dtype == np.uint64
    # opposite rows differ in every one of their 12 signs, and in no padding bit
    assert distances(bits, rows[0]).tolist() == [0, 12]
    wide = np.random.default_rng(1).standard_normal((5, DIM)).astype(np.float32)
    want = [int(np.sum((wide[i] > 0) != (wide[0] > 0))) for i in range(5)]
    assert distances(sign_bits(wide), wide[0]).tolist() == want


def test_the_pool_is_the_closest_rows_ties_by_row_and_in_row_order() -> None:
    rng = np.random.default_rng(5)
    distance = rng.integers(0, 40, size=5_000).astype(np.uint16)  # many ties
    for size in (1, 7, 100, 2_500, 4_999, 5_000):
        want = sorted(sorted(range(5_000), key=lambda r: (distance[r], r))[:size])
        assert closest(distance, size).tolist() == want


def test_cosines_of_a_pool_are_its_rows_products() -> None:
    rng = np.random.default_rng(9)
    matrix = unit(rng.standard_normal((3_000, DIM)))
    query = unit(rng.standard_normal(DIM))
    rows = np.sort(rng.choice(3_000, size=1_234, replace=False))
    got = cosines(matrix, rows, query, chunk=100)  # a last chunk shorter than the others
    assert np.allclose(got, matrix[rows] @ query, atol=1e-6)
