"""Breadth-first expansion over relations, shared by both stores.

Each store supplies one *hop*: the relation facts valid at the query's time that touch a
frontier of entities (one SQL query, one ``graph.hop`` template). Validity is filtered on
every hop, so an expired relation never leads further.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from graph.errors import invalid
from graph.model import Fact


def breadth_first(
    start: str,
    depth: int,
    hop: Callable[[list[str], int | None], Iterable[Fact]],
    limit: int | None = None,
) -> tuple[set[str], list[Fact]]:
    """Entity ids reachable from ``start`` within ``depth`` hops, and the facts crossed,
    ordered by (subject, predicate, fact_id).

    With ``limit``, each hop reads at most ``limit + 1`` rows (distinct facts), so the
    work is bounded, and a subgraph with more than ``limit`` facts is refused (422)
    rather than cut.
    """
    seen = {start}
    frontier = {start}
    facts: dict[str, Fact] = {}
    cap = None if limit is None else limit + 1
    for _ in range(depth):
        if not frontier:
            break
        nxt: set[str] = set()
        for f in hop(sorted(frontier), cap):
            facts[f.version_id] = f
            if limit is not None and len(facts) > limit:
                raise invalid(
                    f"the neighbourhood within depth {depth} holds more than {limit} facts"
                    " (the limit); lower depth, or filter by predicates or direction",
                    field="limit",
                )
            for end in (f.subject, f.object):
                if end is not None and end not in seen:
                    seen.add(end)
                    nxt.add(end)
        frontier = nxt
    return seen, sorted(facts.values(), key=lambda f: (f.subject, f.predicate, f.fact_id))
