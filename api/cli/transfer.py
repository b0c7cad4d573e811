"""``sgam import`` and ``sgam export``: memory in bulk, as JSON Lines (docs/import-export.md).

The work is done by :mod:`api.transfer.commands`; these are the typer faces of it. Exit
status of import: 0 every line written, 1 some refused (see the reject file), 2 unreadable
input or an unreachable store or API.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from api.transfer.exporter import ExportKind
from graph.model import ConflictPolicy

StoreOpt = Annotated[
    str | None,
    typer.Option("--store", metavar="URL", envvar="SGAM_STORE_URL", help="Store URL."),
]
ApiOpt = Annotated[
    str | None,
    typer.Option("--api", metavar="URL", envvar="SGAM_API_URL", help="A server's base URL."),
]
KeyOpt = Annotated[
    str | None,
    typer.Option("--key", metavar="KEY", envvar="SGAM_API_KEY", help="API key, with --api."),
]
TenantOpt = Annotated[
    str, typer.Option("--tenant", metavar="T", envvar="SGAM_TENANT", help="The tenant.")
]


def register(app: typer.Typer) -> None:
    app.command("import")(import_)
    app.command("export")(export)


def import_(
    file: Annotated[str, typer.Argument(metavar="FILE", help="JSON Lines; '-': stdin.")],
    store: StoreOpt = None,
    api: ApiOpt = None,
    key: KeyOpt = None,
    tenant: TenantOpt = "default",
    batch: Annotated[int, typer.Option("--batch", min=1, help="Facts per write.")] = 1000,
    policy: Annotated[
        ConflictPolicy | None,
        typer.Option("--policy", help="Conflict policy of lines that name none (reject)."),
    ] = None,
    reject_file: Annotated[
        str | None, typer.Option("--reject-file", help="Where refused lines' problems go.")
    ] = None,
    restore: Annotated[
        bool, typer.Option("--restore", help="FILE is a ledger export: restore it exactly.")
    ] = False,
) -> int:
    """Import POST /episodes and POST /facts bodies, one per line; idempotent, resumable."""
    from api.transfer.commands import run_import

    if store and api:
        print("sgam import: give --store or --api, not both", file=sys.stderr)
        return 2
    return run_import(
        file,
        store_url=store,
        api_url=api,
        key=key,
        tenant=tenant,
        batch=batch,
        policy=policy,
        reject_file=reject_file,
        restore_ledger=restore,
    )


def export(
    store: StoreOpt = None,
    api: ApiOpt = None,
    key: KeyOpt = None,
    tenant: TenantOpt = "default",
    current: Annotated[bool, typer.Option("--current", help="Facts valid at --as-of.")] = False,
    history: Annotated[bool, typer.Option("--history", help="Every version.")] = False,
    ledger: Annotated[
        bool, typer.Option("--ledger", help="The whole ledger, for import --restore.")
    ] = False,
    as_of: Annotated[str | None, typer.Option("--as-of", help="RFC 3339.")] = None,
    known_at: Annotated[str | None, typer.Option("--known-at", help="RFC 3339.")] = None,
) -> int:
    """Export a tenant as JSON Lines on stdout: current facts (default), history or ledger."""
    from api.transfer.commands import run_export
    from graph.errors import SgamError
    from graph.timeutil import parse_instant

    chosen = [
        k
        for k, on in (
            (ExportKind.CURRENT, current),
            (ExportKind.HISTORY, history),
            (ExportKind.LEDGER, ledger),
        )
        if on
    ]
    if len(chosen) > 1 or (store and api):
        print(
            "sgam export: one of --current, --history, --ledger; --store or --api", file=sys.stderr
        )
        return 2
    try:
        when = parse_instant(as_of, field="as_of") if as_of else None
        known = parse_instant(known_at, field="known_at") if known_at else None
    except SgamError as e:
        print(f"sgam export: {e}", file=sys.stderr)
        return 2
    return run_export(
        store_url=store,
        api_url=api,
        key=key,
        tenant=tenant,
        kind=chosen[0] if chosen else ExportKind.CURRENT,
        as_of=when,
        known_at=known,
    )
