"""The ``sgam`` command line (typer + rich).

One module per command group; each has ``register(app)``, and :data:`COMMANDS` lists them
in the order ``sgam --help`` shows them. A new command is one module with a
``register`` function, added to that list. Commands that read or write memory are
written once against :class:`~api.client.SyncClient` (:mod:`api.cli.core`) and work
in-process (``--store URL``) or through a server (``--api URL --key KEY``) alike.

Exit status: 0 ok; 1 not found or refused by the service (404, 409, 422 ...); 2 usage
error, unreadable input, or the store or API cannot be reached. ``sgam replay`` keeps its
own: 0 every expectation held, 1 one failed, 2 malformed.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from api.cli import (
    entities,
    episodes,
    erase,
    facts,
    replay,
    retrieval,
    schema,
    service,
    transfer,
)
from api.cli.core import EXIT_STATUS, Exit

COMMANDS = (service, replay, facts, entities, retrieval, episodes, schema, transfer, erase)


def build() -> typer.Typer:
    app = typer.Typer(
        name="sgam",
        help="Temporal knowledge-graph memory: serve it, replay scenarios, ask it and write it.",
        epilog=EXIT_STATUS,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    for module in COMMANDS:
        module.register(app)
    return app


app = build()


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``sgam`` with ``argv`` (default: the process's arguments); the exit status."""
    command = typer.main.get_command(app)
    try:
        result = command.main(
            args=list(argv) if argv is not None else None,
            prog_name="sgam",
            standalone_mode=False,
        )
    except typer.TyperException as e:  # the command line is wrong: one line, and where to look
        where = getattr(getattr(e, "ctx", None), "command_path", None) or "sgam"
        if e.format_message():  # empty: a bare group, whose help is already shown
            print(f"{where}: {e.format_message()} (see {where} --help)", file=sys.stderr)
        return Exit.USAGE
    except SystemExit as e:  # typer's completion options exit from inside the parser
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
        return e.code if isinstance(e.code, int) else int(e.code is not None)
    except typer.Abort:
        print("sgam: aborted", file=sys.stderr)
        return 130
    return result if isinstance(result, int) else Exit.OK


__all__ = ["COMMANDS", "app", "main"]
