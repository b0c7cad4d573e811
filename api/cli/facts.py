"""``sgam facts``, ``sgam history``, ``sgam retract``: the fact reads and retraction."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import typer

from api.cli.core import (
    AsOf,
    Cursor,
    KnownAt,
    Limit,
    Object,
    Predicate,
    Subject,
    Target,
    instant,
    memory_command,
)
from api.schemas import FactHistory, FactsPublic
from graph.model import Fact

MemoryType = Annotated[str | None, typer.Option("--memory-type", help="Memory type.")]


def register(app: typer.Typer) -> None:
    memory_command(app, "facts")(facts)
    memory_command(app, "history")(history)
    memory_command(app, "retract")(retract)


def facts(
    t: Target,
    subject: Subject = None,
    predicate: Predicate = None,
    object: Object = None,
    memory_type: MemoryType = None,
    as_of: AsOf = None,
    known_at: KnownAt = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> FactsPublic:
    """Facts valid at --as-of as known at --known-at, one page.

    GET /v1/tenants/{tenant}/facts
    """
    return t.client.facts(
        t.tenant,
        subject=subject,
        predicate=predicate,
        object=object,
        memory_type=memory_type,
        as_of=as_of,
        known_at=known_at,
        limit=limit,
        cursor=cursor,
    )


def history(
    t: Target,
    subject: Annotated[str, typer.Option("--subject", help="Subject entity id.")],
    predicate: Annotated[str, typer.Option("--predicate", help="Predicate name.")],
    object: Object = None,
    known_at: KnownAt = None,
    limit: Limit = None,
    cursor: Cursor = None,
) -> FactHistory:
    """Every version of one timeline as known at --known-at, one page.

    GET /v1/tenants/{tenant}/facts/history
    """
    return t.client.history(
        t.tenant,
        subject=subject,
        predicate=predicate,
        object=object,
        known_at=known_at,
        limit=limit,
        cursor=cursor,
    )


def retract(
    t: Target,
    fact_id: Annotated[str, typer.Argument(help="The fact to end.")],
    valid_to: Annotated[
        datetime | None,
        typer.Option("--valid-to", parser=instant, metavar="TIME", help="End; default now."),
    ] = None,
) -> Fact:
    """End a fact's validity at --valid-to (default now) without a replacement.

    POST /v1/tenants/{tenant}/facts/{fact_id}/retract
    """
    return t.client.retract_fact(t.tenant, fact_id, valid_to=valid_to)
