"""``sgam search`` and ``sgam context``: the read path for questions in words."""

from __future__ import annotations

from typing import Annotated, cast

import typer

from api.cli.core import AsOf, KnownAt, Limit, Target, memory_command
from api.routes.search import ContextResponse, Scope, SearchResponse
from graph.retrieval import SearchFilters


def _names(values: list[str] | None) -> list[str] | None:
    """Repeated options and comma-separated lists alike."""
    if values is None:
        return None
    return [v.strip() for raw in values for v in raw.split(",") if v.strip()]


def register(app: typer.Typer) -> None:
    memory_command(app, "search")(search)
    memory_command(app, "context")(context)


def search(
    t: Target,
    query: Annotated[str, typer.Argument(help="What to look for, in words.")],
    as_of: AsOf = None,
    known_at: KnownAt = None,
    limit: Limit = None,
    scopes: Annotated[
        list[str] | None,
        typer.Option("--scopes", help="facts, entities, episodes (repeat, or a,b)."),
    ] = None,
    entity_types: Annotated[
        list[str] | None, typer.Option("--entity-types", help="Filter: entity types.")
    ] = None,
    predicates: Annotated[
        list[str] | None, typer.Option("--predicates", help="Filter: predicates.")
    ] = None,
    memory_types: Annotated[
        list[str] | None, typer.Option("--memory-types", help="Filter: memory types.")
    ] = None,
) -> SearchResponse:
    """Hybrid search (fulltext, vector, graph) over what is valid at --as-of.

    POST /v1/tenants/{tenant}/search
    """
    filters = SearchFilters(
        entity_types=_names(entity_types),
        predicates=_names(predicates),
        memory_types=_names(memory_types),
    )
    given = filters.model_dump(exclude_none=True)
    return t.client.search(
        t.tenant,
        query,
        as_of=as_of,
        known_at=known_at,
        limit=limit,
        scopes=cast(list[Scope] | None, _names(scopes)),  # the service checks the names
        filters=given or None,
    )


def context(
    t: Target,
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    as_of: AsOf = None,
    known_at: KnownAt = None,
    max_facts: Annotated[int | None, typer.Option("--max-facts")] = None,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens")] = None,
) -> ContextResponse:
    """The smallest cited context for a question: exact state first, then search.

    POST /v1/tenants/{tenant}/context
    """
    return t.client.context(
        t.tenant,
        question,
        as_of=as_of,
        known_at=known_at,
        max_facts=max_facts,
        max_tokens=max_tokens,
    )
