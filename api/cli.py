"""The ``sgam`` command: serve, worker, replay."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


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
    return p


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
    return 2


if __name__ == "__main__":
    sys.exit(main())
