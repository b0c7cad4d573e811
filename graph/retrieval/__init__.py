"""The read path: hybrid search with graph expansion, and the smallest cited context.

    Retriever(store).search(tenant_id=..., query=...)          → [SearchResult, ...]
    ContextBuilder(Retriever(store)).build(tenant_id=..., question=...) → Context

The store must hold a :class:`SearchPort` as ``store.search`` beside the state reads of
:class:`graph.port.Store` (both stores do). See ARCHITECTURE.md, "Retrieval".
"""

from graph.retrieval.context import Context, ContextBuilder, Resolution
from graph.retrieval.port import Hit, ItemKind, SearchableStore, SearchPort, Window
from graph.retrieval.rank import RankConfig
from graph.retrieval.search import (
    ALL_KINDS,
    Candidates,
    Retriever,
    SearchAnswer,
    SearchFilters,
    SearchResult,
)

__all__ = [
    "ALL_KINDS",
    "Candidates",
    "Context",
    "ContextBuilder",
    "Hit",
    "ItemKind",
    "RankConfig",
    "Resolution",
    "Retriever",
    "SearchAnswer",
    "SearchFilters",
    "SearchPort",
    "SearchResult",
    "SearchableStore",
    "Window",
]
