"""Fusion and graph re-ranking: reciprocal rank fusion, then personalised PageRank and
distance from the query's entities on the expanded subgraph (networkx).

Nodes are ``(kind, id)`` pairs. Scores are kept in [0, 1] so that callers can compare
them across queries: a candidate first in every list has fused score 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np

from graph.retrieval.port import ItemKind

Node = tuple[ItemKind, str]


@dataclass(frozen=True)
class RankConfig:
    """Knobs of the pipeline. Defaults were chosen on the LoCoMo development split, where
    recall is flat around them (bench/README.md shows the neighbourhood); none names
    anything specific to one data set."""

    rrf_k: int = 60  # reciprocal rank fusion constant (Cormack et al.)
    candidates: int = 50  # per index and kind
    depth: int = 1  # hops of fact expansion from the query's entities
    seed_entities: int = 5  # entity candidates taken as the query's entities
    entity_min_cosine: float = 0.7  # a vector-only entity match must be this close:
    # short names embed noisily ("cust-7" and "acct-1" are 0.55 apart)
    context_radius: int = 2  # turns before/after a candidate episode in its session
    context_episodes: int = 20  # best fused episodes whose session context is added
    max_expanded_facts: int = 200  # per hop
    max_mentions: int = 50  # episodes mentioning the query's entities
    alpha: float = 0.85  # PageRank damping: chance of following an edge
    bm25_share: float = 0.6  # BM25's part of a node's own relevance (cosine has the rest)
    w_fused: float = 0.1  # RRF rank agreement
    w_relevance: float = 1.0  # the node's own scores in both indexes
    w_context: float = 0.5  # the best relevance within context_radius of the node
    w_ppr: float = 0.2  # personalised PageRank on the subgraph
    w_distance: float = 0.5  # proximity to the query's entities (when it names any)


def rrf(ranked: Iterable[Sequence[str]], *, k: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion: sum over lists of 1 / (k + rank), rank from 1."""
    out: dict[str, float] = {}
    for items in ranked:
        for rank, item in enumerate(items, start=1):
            out[item] = out.get(item, 0.0) + 1.0 / (k + rank)
    return out


def normalise_rrf(scores: Mapping[str, float], *, lists: int, k: int = 60) -> dict[str, float]:
    """Divide by the best possible fused score, first in all ``lists``."""
    best = lists / (k + 1) if lists else 1.0
    return {i: s / best for i, s in scores.items()}


def personalised_pagerank(
    g: nx.Graph, personalization: Mapping[Node, float], *, alpha: float
) -> dict[Node, float]:
    """PageRank restarting at the fused candidates (and the query's entities), so that
    what many good candidates point to rises; falls back to the restart weights when the
    power iteration does not converge.

    The same iteration as ``networkx.pagerank`` (edge weight 1 unless an edge says
    otherwise, dangling nodes jump by the restart weights, stop when the L1 change is
    below N * 1e-8, at most 200 rounds), run over flat numpy arrays: on the few hundred
    nodes of a search's subgraph, building networkx's scipy matrix cost more than the
    iteration itself."""
    weights = {n: w for n, w in personalization.items() if w > 0 and n in g}
    if g.number_of_nodes() == 0 or not weights:
        return {}
    pr = _power_iteration(g, weights, alpha=alpha, max_iter=200, tol=1e-8)
    if pr is None:
        total = sum(weights.values())
        return {n: w / total for n, w in weights.items()}
    return pr


def _power_iteration(
    g: nx.Graph, weights: Mapping[Node, float], *, alpha: float, max_iter: int, tol: float
) -> dict[Node, float] | None:
    nodes = list(g)
    n = len(nodes)
    index = {node: i for i, node in enumerate(nodes)}
    src: list[int] = []
    dst: list[int] = []
    w: list[float] = []
    for u, nbrs in g.adjacency():
        i = index[u]
        for v, data in nbrs.items():
            src.append(i)
            dst.append(index[v])
            w.append(data.get("weight", 1.0))
    src_a = np.asarray(src, dtype=np.intp)
    dst_a = np.asarray(dst, dtype=np.intp)
    w_a = np.asarray(w, dtype=float)
    out_weight = np.bincount(src_a, weights=w_a, minlength=n)
    dangling = np.flatnonzero(out_weight == 0)
    step = w_a / out_weight[src_a] if len(w_a) else w_a  # row-normalised edge weights
    p = np.array([weights.get(node, 0.0) for node in nodes], dtype=float)
    p /= p.sum()
    x = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        last = x
        x = (
            alpha
            * (
                np.bincount(dst_a, weights=last[src_a] * step, minlength=n)
                + last[dangling].sum() * p
            )
            + (1 - alpha) * p
        )
        if np.abs(x - last).sum() < n * tol:
            return dict(zip(nodes, x.tolist(), strict=True))
    return None


def distances(g: nx.Graph, seeds: Iterable[Node]) -> dict[Node, int]:
    """Hops from the nearest seed, for nodes reachable from one."""
    present = [s for s in seeds if s in g]
    if not present:
        return {}
    out: dict[Node, int] = dict(nx.multi_source_dijkstra_path_length(g, present, weight=None))
    return out


def combine(
    nodes: Iterable[Node],
    *,
    fused: Mapping[Node, float],
    relevance: Mapping[Node, float],
    context: Mapping[Node, float],
    ppr: Mapping[Node, float],
    dist: Mapping[Node, int],
    has_seeds: bool,
    cfg: RankConfig,
) -> dict[Node, float]:
    """The final score in [0, 1]: a weighted mean of rank agreement (RRF), the node's own
    relevance, the best relevance in its context, PageRank (relative to the best node) and
    proximity 1 / (1 + hops) to the query's entities. Entities get no proximity: being
    named by the query is already in their own scores, and the facts about them are what
    answers it."""
    top_ppr = max(ppr.values(), default=0.0) or 1.0
    w_dist = cfg.w_distance if has_seeds else 0.0
    total = cfg.w_fused + cfg.w_relevance + cfg.w_context + cfg.w_ppr + w_dist
    out: dict[Node, float] = {}
    for n in nodes:
        s = (
            cfg.w_fused * min(1.0, fused.get(n, 0.0))
            + cfg.w_relevance * relevance.get(n, 0.0)
            + cfg.w_context * context.get(n, 0.0)
            + cfg.w_ppr * ppr.get(n, 0.0) / top_ppr
        )
        if w_dist and n in dist and n[0] != ItemKind.ENTITY:
            s += w_dist / (1.0 + dist[n])
        out[n] = s / total
    return out


__all__ = [
    "Node",
    "RankConfig",
    "combine",
    "distances",
    "normalise_rrf",
    "personalised_pagerank",
    "rrf",
]
