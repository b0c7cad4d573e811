"""What every command that reads or writes memory shares.

A command is a function that takes a :class:`Target` (a client and a tenant) and its own
options, and returns the API's answer (a response model). :func:`memory_command` registers
it with the options every such command has — where the memory is (``--store URL``
in-process, or ``--api URL --key KEY``), ``--tenant`` and ``--json`` — opens the client,
prints the answer (:mod:`api.cli.output`) and turns every error into one line on stderr
and an exit status (:data:`EXIT_STATUS`). The options common to several commands, named
as the REST parameters they fill, are the ``Annotated`` aliases below.
"""

from __future__ import annotations

import inspect
import logging
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from enum import IntEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import httpx
import pydantic
import typer
from pydantic import BaseModel

from api.cli.output import json_document, view, write
from api.client import SgamAPIError, SgamClient, SyncClient
from graph import DEFAULT_STORE_URL, SgamError, ValidationError
from graph.timeutil import parse_instant


class Exit(IntEnum):
    OK = 0
    REFUSED = 1  # the service answered with a problem: not found, conflict, invalid input
    USAGE = 2  # the command line is wrong, or the store or API cannot be reached


# A person waits longer than a program would: the first search of a server loads its
# embedding model.
API_TIMEOUT = 120.0

EXIT_STATUS = (
    "Exit status: 0 ok; 1 not found or refused by the service (404, 409, 422 ...); "
    "2 usage error, unreadable input, or the store or API cannot be reached."
)


class Failure(Exception):
    """Ends a command with one line on stderr and an exit status."""

    def __init__(self, status: Exit, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = " ".join(message.split())  # one line, whatever the detail held


def instant(text: str) -> datetime:
    """An RFC 3339 timestamp with an offset, as the API takes it."""
    try:
        return parse_instant(text, field="time")
    except ValidationError as e:
        raise typer.BadParameter("; ".join(item.reason for item in e.errors)) from None


# -- options named as the REST parameters they fill ------------------------------------
WHERE = "Where the memory is"

StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        envvar="SGAM_STORE_URL",
        metavar="URL",
        rich_help_panel=WHERE,
        help="Work in-process on this store: sqlite:///path.db, neo4j://host:7687.",
    ),
]
ApiOpt = Annotated[
    str | None,
    typer.Option(
        "--api",
        envvar="SGAM_API_URL",
        metavar="URL",
        rich_help_panel=WHERE,
        help="Work through a running server at this base URL (wins over SGAM_STORE_URL).",
    ),
]
KeyOpt = Annotated[
    str | None,
    typer.Option("--key", envvar="SGAM_API_KEY", rich_help_panel=WHERE, help="API key (--api)."),
]
TenantOpt = Annotated[
    str | None,
    typer.Option("--tenant", envvar="SGAM_TENANT", rich_help_panel=WHERE, help="Tenant id."),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print the JSON document the REST API returns.")
]
AsOf = Annotated[
    datetime | None,
    typer.Option(
        "--as-of", parser=instant, metavar="TIME", help="Valid time (RFC 3339); default now."
    ),
]
KnownAt = Annotated[
    datetime | None,
    typer.Option(
        "--known-at",
        parser=instant,
        metavar="TIME",
        help="System time: what was believed then (RFC 3339); default now.",
    ),
]
Subject = Annotated[str | None, typer.Option("--subject", help="Subject entity id.")]
Predicate = Annotated[str | None, typer.Option("--predicate", help="Predicate name.")]
Object = Annotated[str | None, typer.Option("--object", help="Object entity id.")]
Limit = Annotated[int | None, typer.Option("--limit", help="At most this many.")]
Cursor = Annotated[str | None, typer.Option("--cursor", help="next_cursor of the previous page.")]


# -- the memory a command works on -----------------------------------------------------
@dataclass(frozen=True)
class Target:
    client: SyncClient
    tenant: str


def _explicit(ctx: typer.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def _sqlite_file(url: str) -> Path | None:
    return Path(url[len("sqlite:///") :]) if url.startswith("sqlite:///") else None


def open_client(
    ctx: typer.Context, *, store: str | None, api: str | None, key: str | None, creates: bool
) -> tuple[SyncClient, str]:
    """The client for the options, and what it reaches (for messages). An explicit flag
    wins over the environment, and SGAM_API_URL over SGAM_STORE_URL (a shell that runs
    the server often sets the latter)."""
    if _explicit(ctx, "store") and _explicit(ctx, "api"):
        raise Failure(Exit.USAGE, "--store and --api exclude each other: choose one")
    if api is not None and not _explicit(ctx, "store"):
        return SgamClient(api, key, timeout=API_TIMEOUT), f"the API at {api}"
    if key is not None and _explicit(ctx, "key"):
        raise Failure(Exit.USAGE, "--key goes with --api, not with --store")
    from api.local import LocalClient  # the in-process stack loads only when used

    url = store or DEFAULT_STORE_URL
    path = _sqlite_file(url)
    if path is not None and not creates and not path.exists():
        raise Failure(
            Exit.USAGE, f"no store at {url}: {path} does not exist (pass --store or --api)"
        )
    try:
        return LocalClient.open(url), f"the store {url}"
    except SgamError as e:
        raise Failure(Exit.USAGE, f"cannot open the store {url}: {e}") from e
    except pydantic.ValidationError as e:  # SGAM_* settings read for extraction
        raise Failure(Exit.USAGE, f"invalid settings in the environment: {e}") from e


@contextmanager
def failures(where: str) -> Iterator[None]:
    """Every error of a command, as a :class:`Failure` (one line, an exit status)."""
    try:
        yield
    except Failure:
        raise
    except SgamAPIError as e:
        status = Exit.USAGE if e.status == 503 else Exit.REFUSED
        detail = e.problem.detail or ""
        raise Failure(status, f"{e.problem.title}: {detail}".rstrip(": ")) from e
    except httpx.TransportError as e:  # never answered: refused, timed out, bad URL
        raise Failure(Exit.USAGE, f"cannot reach {where}: {e or type(e).__name__}") from e
    except httpx.InvalidURL as e:
        raise Failure(Exit.USAGE, f"not a URL: {where}: {e}") from e
    except SgamError as e:  # the in-process store failed underneath (lost connection)
        raise Failure(Exit.USAGE, f"store error: {e}") from e
    except Exception as e:
        if os.environ.get("SGAM_DEBUG"):
            traceback.print_exc()
        raise Failure(Exit.REFUSED, f"internal error: {type(e).__name__}: {e}") from e


def quiet() -> None:
    """Keep stderr to the one line of an error: no progress bars from the embedding model's
    loader, and no library log records through logging's last resort (such as a driver
    saying it retries), unless the program configured logging itself."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # read when imported
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.NullHandler())


def report(failure: Failure) -> int:
    print(f"sgam: {failure.message}", file=sys.stderr)
    return int(failure.status)


Command = TypeVar("Command", bound=Callable[..., BaseModel | int])

_WHERE = [
    inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context),
    inspect.Parameter("store", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=StoreOpt),
    inspect.Parameter("api", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ApiOpt),
    inspect.Parameter("key", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=KeyOpt),
    inspect.Parameter("tenant", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=TenantOpt),
]
_JSON = inspect.Parameter(
    "as_json", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=JsonOpt
)


def memory_command(
    parent: typer.Typer, name: str, *, creates: bool = False, epilog: str = EXIT_STATUS
) -> Callable[[Command], Command]:
    """Register ``fn(target, **options)`` as the command ``name`` of ``parent``, with the
    options of :data:`_WHERE` added.

    ``fn`` returns the API's answer, which is printed (``--json`` is added for it), or
    prints what it has to say itself and returns an exit status (a command that streams,
    such as an import with a progress bar). ``creates``: the command may create a new
    SQLite store (it writes); the others refuse a store file that does not exist.
    """

    def register(fn: Command) -> Command:
        signature = inspect.signature(fn, eval_str=True)
        answers = signature.return_annotation is not int
        own = list(signature.parameters.values())[1:]
        params = [*own, *_WHERE, *([_JSON] if answers else [])]

        def command(**options: Any) -> int:
            where = {p.name: options.pop(p.name) for p in _WHERE}
            as_json = bool(options.pop(_JSON.name, False))
            return run(fn, options, creates=creates, as_json=as_json, **where)

        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        command.__name__ = fn.__name__
        command.__doc__ = fn.__doc__
        parent.command(name, epilog=epilog)(command)
        return fn

    return register


def run(
    fn: Callable[..., BaseModel | int],
    options: dict[str, Any],
    *,
    ctx: typer.Context,
    creates: bool,
    store: str | None,
    api: str | None,
    key: str | None,
    tenant: str | None,
    as_json: bool,
) -> int:
    quiet()
    try:
        if tenant is None:
            raise Failure(Exit.USAGE, "no tenant: pass --tenant T or set SGAM_TENANT")
        with failures("the store or API"):
            client, where = open_client(ctx, store=store, api=api, key=key, creates=creates)
        with failures(where), client:
            answer = fn(Target(client, tenant), **options)
    except Failure as f:
        return report(f)
    if isinstance(answer, int):  # the command printed its own output
        return answer
    if as_json:
        print(json_document(answer))
    else:
        write(view(answer), sys.stdout, sys.stderr, terminal=sys.stdout.isatty())
    return Exit.OK
