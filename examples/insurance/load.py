"""Load the example into sgam: its schema, then every line of episodes.jsonl in order.

``sgam import`` is the way to load the whole file (batched, with progress); this loader
posts one request at a time, so a caller can act between lines (the tests take known_at
marks there), and ``--tour`` picks the README tour's lines. In-process, each line goes
through ``MemoryService`` exactly as the API handles the body; with ``--api``
it is posted to a running server with the typed client. Re-running writes nothing new.
``--tour`` loads only the lines of the README's tour (see :func:`tour_lines`).

    python examples/insurance/load.py --store sqlite:///.sgam/insurance.db [--tenant insurance]
    python examples/insurance/load.py --api http://127.0.0.1:8080 [--key KEY] [--tour]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from api.client import SgamAPIError, SgamClient  # noqa: E402
from api.schemas import FactsCreate  # noqa: E402
from graph import (  # noqa: E402
    ConflictPolicy,
    EpisodeCreate,
    MemorySchema,
    MemoryService,
    SgamError,
    WriteStatus,
    load_schema,
    open_store,
)

SCHEMA = HERE / "schema.json"
EPISODES = HERE / "episodes.jsonl"
Body = dict[str, Any]
GENERATED_ID = re.compile(r"^ep-\d{5}$")  # the crowd's episodes; the tour's have names


def post_in_process(service: MemoryService, tenant: str, body: Body) -> int:
    """Do what POST /episodes or POST /facts does with ``body``; return the facts it
    created, corroborated or corrected (an unchanged redelivery counts none)."""
    if "content" not in body:  # a POST /facts body
        req = FactsCreate.model_validate(body)
        result = service.write_facts(tenant_id=tenant, deltas=req.facts, policy=req.conflict_policy)
        return sum(o != WriteStatus.UNCHANGED for o in result.outcomes)
    ep = EpisodeCreate.model_validate(body)
    if ep.extract not in (None, "none"):
        raise ValueError("this loader extracts nothing: use extract 'none' and give facts")
    episode, created = service.add_episode(tenant_id=tenant, body=ep)
    if not created or not ep.facts:
        return 0  # an episode stored before writes nothing again
    deltas = [
        d.model_copy(
            update={
                "source_episode_id": d.source_episode_id or episode.episode_id,
                "valid_from": d.valid_from or episode.occurred_at,
            }
        )
        for d in ep.facts
    ]
    try:
        return len(service.write_facts(tenant_id=tenant, deltas=deltas).facts)
    except SgamError:  # as the API does: a refused request leaves nothing behind
        service.delete_episode(tenant_id=tenant, episode_id=episode.episode_id)
        raise


def post_http(client: SgamClient, tenant: str, body: Body) -> int:
    if "content" not in body:
        policy = ConflictPolicy(body.get("conflict_policy", "reject"))
        result = client.write_facts(tenant, body["facts"], conflict_policy=policy)
        return sum(o != WriteStatus.UNCHANGED for o in result.outcomes)
    written = client.create_episode(tenant, body)
    return len(written.facts) if written.created else 0


def same_schema(a: MemorySchema, b: MemorySchema) -> bool:
    """Equal but for the version the server assigned: a re-run puts no new version."""
    return a.model_dump(exclude={"version"}) == b.model_dump(exclude={"version"})


def read_lines(path: Path = EPISODES) -> Iterable[Body]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)


def tour_lines(bodies: Iterable[Body]) -> list[Body]:
    """The README's lines: the named episodes (ep-ada-..., ep-ben-..., the advisors') and
    the POST /facts lines that cite them. Nothing else touches the tour's entities."""
    out: list[Body] = []
    for body in bodies:
        if "content" in body:
            keep = not GENERATED_ID.match(body["episode_id"])
        else:
            keep = not GENERATED_ID.match(body["facts"][0]["source_episode_id"])
        if keep:
            out.append(body)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Load the insurance example into sgam")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--store", default=None, help="store URL (default SGAM_STORE_URL)")
    where.add_argument("--api", default=None, help="base URL of a running server")
    p.add_argument("--key", default=None, help="API key (with --api)")
    p.add_argument("--tenant", default="insurance")
    p.add_argument("--file", type=Path, default=EPISODES)
    p.add_argument("--tour", action="store_true", help="only the lines of the README's tour")
    args = p.parse_args(argv)
    bodies = tour_lines(read_lines(args.file)) if args.tour else read_lines(args.file)
    schema = load_schema(SCHEMA)
    start = time.perf_counter()
    n = facts = 0
    post: Callable[[Body], int]
    with ExitStack() as stack:
        try:
            if args.api:
                client = stack.enter_context(SgamClient(args.api, args.key))
                if not same_schema(client.get_schema(args.tenant), schema):
                    client.put_schema(args.tenant, schema)
                post = partial(post_http, client, args.tenant)
            else:
                store = open_store(args.store)
                stack.callback(store.close)
                service = MemoryService(store)
                if not same_schema(service.schema(tenant_id=args.tenant), schema):
                    service.put_schema(tenant_id=args.tenant, schema=schema)
                post = partial(post_in_process, service, args.tenant)
            for body in bodies:
                n += 1
                facts += post(body)
        except (SgamError, SgamAPIError, ValueError) as e:
            print(f"line {n}: {e}" if n else f"schema: {e}", file=sys.stderr)
            return 1
    print(f"{n} lines, {facts} facts written in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
