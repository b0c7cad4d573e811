"""``sgam episodes add|get|delete|retry``: what was said, and what it made the memory hold."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Annotated, Any

import typer

from api.cli.core import Cursor, Exit, Failure, Limit, Target, instant, memory_command
from api.schemas import EpisodePublic, EpisodeWritten
from graph.model import DeleteResult, Episode, EpisodeKind, ExtractMode

EpisodeId = Annotated[str, typer.Argument(metavar="EPISODE_ID", help="The episode id.")]

episodes = typer.Typer(help="Episodes: add, get, delete, retry extraction.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(episodes, name="episodes")
    memory_command(episodes, "add", creates=True)(add)
    memory_command(episodes, "get")(get)
    memory_command(episodes, "delete")(delete)
    memory_command(episodes, "retry")(retry)


def _content(text: str, kind: EpisodeKind) -> str | dict[str, Any]:
    if text == "-":
        text = sys.stdin.read()
    if kind != EpisodeKind.EVENT:
        return text
    try:
        event = json.loads(text)
    except ValueError as e:
        raise Failure(Exit.USAGE, f"--content of an event must be a JSON object: {e}") from None
    if not isinstance(event, dict):
        raise Failure(Exit.USAGE, "--content of an event must be a JSON object")
    return event


def add(
    t: Target,
    content: Annotated[
        str, typer.Option("--content", help="The text ('-': stdin); a JSON object for events.")
    ],
    occurred_at: Annotated[
        datetime,
        typer.Option("--occurred-at", parser=instant, metavar="TIME", help="When it happened."),
    ],
    episode_id: Annotated[str | None, typer.Option("--episode-id")] = None,
    kind: Annotated[EpisodeKind, typer.Option("--kind")] = EpisodeKind.MESSAGE,
    source: Annotated[str | None, typer.Option("--source")] = None,
    session_id: Annotated[str | None, typer.Option("--session-id")] = None,
    extract: Annotated[ExtractMode | None, typer.Option("--extract")] = None,
) -> EpisodeWritten:
    """Store an episode; the same id and content again changes nothing.

    POST /v1/tenants/{tenant}/episodes
    """
    body = {
        "episode_id": episode_id,
        "kind": kind.value,
        "source": source,
        "content": _content(content, kind),
        "occurred_at": occurred_at.isoformat(),
        "session_id": session_id,
        "extract": extract.value if extract else None,
    }
    return t.client.create_episode(t.tenant, {k: v for k, v in body.items() if v is not None})


def get(
    t: Target, episode_id: EpisodeId, limit: Limit = None, cursor: Cursor = None
) -> EpisodePublic:
    """An episode, its status and one page of the facts it sourced.

    GET /v1/tenants/{tenant}/episodes/{id}
    """
    return t.client.get_episode(t.tenant, episode_id, limit=limit, cursor=cursor)


def delete(t: Target, episode_id: EpisodeId) -> DeleteResult:
    """Delete an episode and what only it asserted; repair the intervals it cut.

    DELETE /v1/tenants/{tenant}/episodes/{id}
    """
    return t.client.delete_episode(t.tenant, episode_id)


def retry(t: Target, episode_id: EpisodeId) -> Episode:
    """Queue an episode for extraction again (a failed one, typically).

    POST /v1/tenants/{tenant}/episodes/{id}/retry
    """
    return t.client.retry_episode(t.tenant, episode_id)
