"""``sgam forget``, ``sgam tenant delete`` and ``sgam purge``: erasure and retention.

``forget`` and ``tenant delete`` are operations of the API (in-process with ``--store``,
or through a server with ``--api``); ``purge`` runs the retention pass on a store
directly, as the server's purger does.
"""

from __future__ import annotations

import inspect
import json
import sys
from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from api.cli.core import (
    _JSON,
    _WHERE,
    EXIT_STATUS,
    Exit,
    Failure,
    StoreOpt,
    Target,
    _sqlite_file,
    failures,
    memory_command,
    quiet,
    report,
    run,
)
from api.routes.tenants import TenantErased
from graph.erasure import ForgetResult

tenant_app = typer.Typer(help="Tenants: erase one whole.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    memory_command(app, "forget")(forget)
    app.add_typer(tenant_app, name="tenant")
    _tenant_command(tenant_app, "delete")(delete)
    app.command("purge", epilog=EXIT_STATUS)(purge)


def forget(
    t: Target,
    entity_id: Annotated[str, typer.Argument(metavar="ENTITY", help="The entity id.")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count what would go; delete nothing.")
    ] = False,
) -> ForgetResult:
    """Erase an entity, every fact about it and every episode that mentions it.

    POST /v1/tenants/{tenant}/entities/{id}/forget
    """
    return t.client.forget_entity(t.tenant, entity_id, dry_run=dry_run)


def delete(
    t: Target,
    yes: Annotated[
        bool, typer.Option("--yes", help="Confirm: the tenant's memory cannot be recovered.")
    ] = False,
) -> TenantErased:
    """Erase a whole tenant: every entity, fact, episode, schema and review candidate.

    DELETE /v1/tenants/{tenant} (admin key)
    """
    if not yes:
        raise Failure(Exit.USAGE, f"erasing tenant {t.tenant!r} cannot be undone: pass --yes")
    return t.client.delete_tenant(t.tenant)


def _tenant_command(parent: typer.Typer, name: str) -> Any:
    """Like :func:`memory_command`, with the tenant as the first argument (``sgam tenant
    delete T``) instead of ``--tenant``."""

    def register(fn: Any) -> Any:
        own = list(inspect.signature(fn, eval_str=True).parameters.values())[1:]
        params = [
            inspect.Parameter(
                "tenant_id",
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                annotation=Annotated[str, typer.Argument(metavar="TENANT", help="Tenant id.")],
            ),
            *own,
            *(p for p in _WHERE if p.name != "tenant"),
            _JSON,
        ]

        def command(**options: Any) -> int:
            where = {k: options.pop(k) for k in ("ctx", "store", "api", "key")}
            tenant = options.pop("tenant_id")
            as_json = bool(options.pop(_JSON.name, False))
            return run(fn, options, creates=False, as_json=as_json, tenant=tenant, **where)

        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        command.__name__ = fn.__name__
        command.__doc__ = fn.__doc__
        parent.command(name, epilog=EXIT_STATUS)(command)
        return fn

    return register


def purge(
    store: StoreOpt = None,
    tenant: Annotated[
        str | None, typer.Option("--tenant", help="Only this tenant (default: every tenant).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count what would go; delete nothing.")
    ] = False,
) -> int:
    """Run the retention pass now: delete fact versions and episodes older than the
    schema's retentions allow (as the server's purger does periodically). One JSON line
    per tenant on stdout."""
    from graph.erasure import erasable
    from graph.retention import purge as purge_pass
    from graph.stores import DEFAULT_STORE_URL, open_store

    quiet()
    url = store or DEFAULT_STORE_URL
    try:
        path = _sqlite_file(url)
        if path is not None and not path.exists():
            raise Failure(Exit.USAGE, f"no store at {url}: {path} does not exist (pass --store)")
        with failures(f"the store {url}"):
            the_store = open_store(url)
            try:
                results = purge_pass(
                    erasable(the_store),
                    schema_of=lambda t: the_store.get_schema(tenant_id=t),
                    now=datetime.now(UTC),
                    tenant_id=tenant,
                    dry_run=dry_run,
                )
            finally:
                the_store.close()
    except Failure as f:
        return report(f)
    for r in results:
        print(json.dumps(r.model_dump(mode="json")), file=sys.stdout)
    return int(Exit.OK)


__all__ = ["register"]
