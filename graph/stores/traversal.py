"""Breadth-first expansion over relations, shared by both stores.

Each store supplies one *hop*: the relation facts valid at the query's time that touch a
frontier of entities (one SQL query, one ``graph.hop`` template). Validity is filtered on
every hop, so an expired relation never leads further.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from graph.model import Fact


def breadth_first(
    start: str, depth: int, hop: Callable[[list[str]], Iterable[Fact]]
) -> tuple[set[str], list[Fact]]:
    """Entity ids reachable from ``start`` within ``depth`` hops, and the facts crossed,
    ordered by (subject, predicate, fact_id)."""
    seen = {start}
    frontier = {start}
    facts: dict[str, Fact] = {}
    for _ in range(depth):
        if not frontier:
            break
        nxt: set[str] = set()
        for f in hop(sorted(frontier)):
            facts[f.version_id] = f
            for end in (f.subject, f.object):
                if end is not None and end not in seen:
                    seen.add(end)
                    nxt.add(end)
        frontier = nxt
    return seen, sorted(facts.values(), key=lambda f: (f.subject, f.predicate, f.fact_id))
