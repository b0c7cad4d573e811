"""The public surface of ``graph`` is a curated list; this fails when it drifts."""

from __future__ import annotations

import graph


def test_all_names_exist_and_are_sorted_by_kind() -> None:
    missing = [n for n in graph.__all__ if not hasattr(graph, n)]
    assert missing == []
    assert len(set(graph.__all__)) == len(graph.__all__)


def test_every_public_name_is_listed() -> None:
    exported = {n for n in dir(graph) if not n.startswith("_")}
    modules = {n for n in exported if type(getattr(graph, n)).__name__ == "module"}
    assert exported - modules == set(graph.__all__)
