"""``sgam entity`` and ``sgam neighbors``: one entity, and the subgraph around it."""

from __future__ import annotations

from typing import Annotated

import typer

from api.cli.core import AsOf, Cursor, KnownAt, Limit, Target, memory_command
from api.schemas import EntityPublic
from graph.model import Direction, Neighborhood
from graph.service import MAX_DEPTH

EntityId = Annotated[str, typer.Argument(metavar="ENTITY_ID", help="The entity id.")]


def register(app: typer.Typer) -> None:
    memory_command(app, "entity")(entity)
    memory_command(app, "neighbors")(neighbors)


def entity(
    t: Target,
    entity_id: EntityId,
    as_of: AsOf = None,
    known_at: KnownAt = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> EntityPublic:
    """The entity and one page of its facts, as subject or object, valid at --as-of.

    GET /v1/tenants/{tenant}/entities/{id}
    """
    return t.client.entity(
        t.tenant, entity_id, as_of=as_of, known_at=known_at, limit=limit, cursor=cursor
    )


def neighbors(
    t: Target,
    entity_id: EntityId,
    depth: Annotated[int, typer.Option("--depth", help=f"Hops, 1 to {MAX_DEPTH}.")] = 1,
    predicates: Annotated[
        list[str] | None,
        typer.Option("--predicates", help="Only these predicates (repeat, or a,b)."),
    ] = None,
    direction: Annotated[Direction, typer.Option("--direction")] = Direction.BOTH,
    as_of: AsOf = None,
    known_at: KnownAt = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", help="At most this many facts; a larger subgraph is refused."),
    ] = None,
) -> Neighborhood:
    """The subgraph within --depth hops, over facts valid at --as-of.

    GET /v1/tenants/{tenant}/entities/{id}/neighbors
    """
    return t.client.neighbors(
        t.tenant,
        entity_id,
        depth=depth,
        predicates=predicates,
        direction=direction,
        as_of=as_of,
        known_at=known_at,
        limit=limit,
    )
