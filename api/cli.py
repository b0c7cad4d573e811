"""The ``sgam`` command: serve, worker, replay, import, export."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from api.transfer.exporter import ExportKind
from graph.model import ConflictPolicy


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sgam", description="Temporal knowledge-graph memory")
    sub = p.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the REST API")
    serve.add_argument("--host", default=None, help="listen address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default 8080)")
    serve.add_argument("--store", default=None, help="store URL (default SGAM_STORE_URL or sqlite)")
    serve.add_argument(
        "--workers", type=int, default=None, help="extraction workers in the server (SGAM_WORKERS)"
    )

    wk = sub.add_parser("worker", help="run extraction queue workers against the store")
    wk.add_argument("--store", default=None, help="store URL (default SGAM_STORE_URL or sqlite)")
    wk.add_argument("--workers", type=int, default=None, help="threads (default SGAM_WORKERS)")

    rp = sub.add_parser("replay", help="replay a scenario file and check its expectations")
    rp.add_argument("scenario")
    where = rp.add_mutually_exclusive_group()
    where.add_argument("--store", default=None, help="run in-process against this store URL")
    where.add_argument("--api", default=None, help="run against a server at this base URL")
    rp.add_argument("--key", default=None, help="API key (with --api)")

    im = sub.add_parser("import", help="import JSON Lines of POST /episodes or /facts bodies")
    im.add_argument("file", help="a JSON Lines file, or - for standard input")
    _where(im)
    im.add_argument("--batch", type=int, default=1000, help="facts per write (default 1000)")
    im.add_argument(
        "--policy",
        choices=[p.value for p in ConflictPolicy],
        default=None,
        help="conflict policy of lines that name none (default reject)",
    )
    im.add_argument("--reject-file", default=None, help="write refused lines' problems here")
    im.add_argument(
        "--restore", action="store_true", help="the file is a ledger export: restore it exactly"
    )

    ex = sub.add_parser("export", help="export current facts, every version or the ledger")
    _where(ex)
    kind = ex.add_mutually_exclusive_group()
    for k in ExportKind:
        kind.add_argument(f"--{k.value}", dest="kind", action="store_const", const=k)
    ex.add_argument("--as-of", default=None, help="valid time of --current (RFC 3339)")
    ex.add_argument("--known-at", default=None, help="system time of --current (RFC 3339)")
    return p


def _where(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument("--store", default=None, help="store URL (default SGAM_STORE_URL or sqlite)")
    where.add_argument("--api", default=None, help="a server's base URL")
    p.add_argument("--key", default=None, help="API key (with --api)")
    p.add_argument("--tenant", default="default", help="tenant id (default: default)")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        from api.server import serve
        from api.settings import Settings

        overrides = {
            k: v
            for k, v in (
                ("host", args.host),
                ("port", args.port),
                ("store_url", args.store),
                ("workers", args.workers),
            )
            if v is not None
        }
        serve(Settings(**overrides))
        return 0
    if args.command == "worker":
        from extraction import ExtractionSettings, run_worker

        return run_worker(ExtractionSettings(), store_url=args.store, count=args.workers)
    if args.command == "replay":
        from api.replay import HttpBackend, ServiceBackend, replay
        from graph.errors import SgamError
        from graph.service import MemoryService
        from graph.stores import open_store

        if args.api:
            backend = HttpBackend(args.api, args.key)
            try:
                return replay(args.scenario, backend, sys.stdout)
            finally:
                backend.close()
        try:
            store = open_store(args.store)
        except SgamError as e:
            print(f"cannot open store: {e}", file=sys.stderr)
            return 2
        try:
            return replay(args.scenario, ServiceBackend(MemoryService(store)), sys.stdout)
        finally:
            store.close()
    if args.command == "import":
        from api.transfer.commands import run_import

        return run_import(
            args.file,
            store_url=args.store,
            api_url=args.api,
            key=args.key,
            tenant=args.tenant,
            batch=args.batch,
            policy=ConflictPolicy(args.policy) if args.policy else None,
            reject_file=args.reject_file,
            restore_ledger=args.restore,
        )
    if args.command == "export":
        from api.transfer.commands import run_export
        from graph.errors import SgamError
        from graph.timeutil import parse_instant

        try:
            as_of = parse_instant(args.as_of, field="as_of") if args.as_of else None
            known_at = parse_instant(args.known_at, field="known_at") if args.known_at else None
        except SgamError as e:
            print(str(e), file=sys.stderr)
            return 2
        return run_export(
            store_url=args.store,
            api_url=args.api,
            key=args.key,
            tenant=args.tenant,
            kind=args.kind or ExportKind.CURRENT,
            as_of=as_of,
            known_at=known_at,
        )
    return 2


if __name__ == "__main__":
    sys.exit(main())
