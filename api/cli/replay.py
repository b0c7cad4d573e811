"""``sgam replay FILE``: run a scenario and check its expectations."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from api.cli.core import Exit, Failure, failures, quiet, report


def register(app: typer.Typer) -> None:
    app.command(
        "replay",
        epilog="Exit status: 0 every expectation held; 1 one failed; 2 the file is malformed,"
        " or the store or API cannot be reached.",
    )(replay)


def replay(
    scenario: Annotated[str, typer.Argument(metavar="SCENARIO", help="The scenario file.")],
    store: Annotated[
        str | None, typer.Option("--store", metavar="URL", help="Run in-process on this store.")
    ] = None,
    api: Annotated[
        str | None, typer.Option("--api", metavar="URL", help="Run against a server at this URL.")
    ] = None,
    key: Annotated[str | None, typer.Option("--key", help="API key (with --api).")] = None,
) -> int:
    """Replay a scenario file (its writes, then its expected reads) and report each step."""
    from api.client import SgamClient, SyncClient
    from api.local import LocalClient
    from api.replay import ClientBackend, replay
    from graph import SgamError

    quiet()
    if store is not None and api is not None:
        return report(Failure(Exit.USAGE, "--store and --api exclude each other: choose one"))
    client: SyncClient
    if api is not None:
        client, where = SgamClient(api, key), f"the API at {api}"
    else:
        try:
            client = LocalClient.open(store)
        except SgamError as e:
            print(f"cannot open store: {e}", file=sys.stderr)
            return Exit.USAGE
        where = "the store"
    try:
        with failures(where), client:
            return replay(scenario, ClientBackend(client), sys.stdout)
    except Failure as f:
        return report(f)
