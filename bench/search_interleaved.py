"""This stop's two search changes against the code before them, interleaved question by
question in one process (so every variant sees the same machine load):

- ``before``: ``SentenceTransformer.encode`` on the query, then the search with every
  vector of the tenant scored exactly (what search did before both changes);
- ``traced query``: the traced single-text path (graph/embeddings.py), exact vectors;
- ``now``: the traced query and, on the embedded store, the sign-bit prefilter past
  ``EXACT_UP_TO`` rows (graph/stores/sqlite/vectors.py). On Neo4j the vector index
  ranks, so ``now`` and ``traced query`` are the same there and only ``now`` is run.

Each question runs through every variant in turn (the order rotating per question);
figures are p50/p95 over ``--rounds`` passes of the questions of bench/search_latency.py,
with each variant's ratio to ``before``. Needs the tenant that search_latency.py loads
(``--load-only`` first):

    HF_HUB_OFFLINE=1 .venv/bin/python bench/search_interleaved.py --facts 100000 [--store URL]
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from search_latency import bench_questions, interleaved, print_against_first  # noqa: E402

from graph.embeddings import SentenceEmbedder, Vectors  # noqa: E402
from graph.retrieval import Retriever, SearchableStore  # noqa: E402
from graph.stores import open_store  # noqa: E402
from graph.stores.sqlite import vectors  # noqa: E402


class Prepaid:
    """An embedder answering from vectors computed (and timed) just before the search."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim
        self.next: Vectors | None = None

    def encode(self, texts: Sequence[str]) -> Vectors:
        assert self.next is not None
        assert len(texts) == 1
        out, self.next = self.next, None
        return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--store", default=None, help="default: sqlite under .sgam/bench")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)

    url = args.store or f"sqlite:///{ROOT}/.sgam/bench/latency-{args.facts}.db"
    store = open_store(url)
    assert isinstance(store, SearchableStore)
    tenant = f"lat-{args.facts}"
    if store.get_episode(tenant_id=tenant, episode_id="ep-0") is None:
        sys.exit(f"no tenant {tenant} in {store.url}: run bench/search_latency.py --load-only")
    traced = SentenceEmbedder()
    plain = SentenceEmbedder(trace=False)
    traced.encode(["load"])
    plain.encode(["load"])
    if not traced.traced:
        sys.exit("the traced query path is not available for this model")
    gc.collect()
    gc.freeze()
    prepaid = Prepaid(traced.name, traced.dim)
    prepaid_search = Retriever(store, embedder=prepaid)
    now = Retriever(store, embedder=traced)

    @contextmanager
    def exact_vectors() -> Iterator[None]:
        """Every vector scored exactly, as before the prefilter (SQLite only)."""
        exact_up_to = vectors.EXACT_UP_TO
        vectors.EXACT_UP_TO = 1 << 62
        try:
            yield
        finally:
            vectors.EXACT_UP_TO = exact_up_to

    def before_(q: str) -> object:
        with exact_vectors():
            prepaid.next = plain.encode([q])
            return prepaid_search.search(tenant_id=tenant, query=q)

    def traced_exact(q: str) -> object:
        with exact_vectors():
            return now.search(tenant_id=tenant, query=q)

    variants: dict[str, Callable[[str], object]] = {"before": before_}
    if store.url.startswith("sqlite"):
        variants["traced query"] = traced_exact
    variants["now"] = lambda q: now.search(tenant_id=tenant, query=q)
    queries = bench_questions(args.facts // 10, args.queries)
    print(f"store {store.url}, tenant {tenant}")
    print_against_first("variant", interleaved(variants, queries, args.rounds))
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
