"""Fact ingest over HTTP against in-process, on one workload (not part of the test run).

The workload of ``bench/ingest_three_way.py`` (``--facts`` deltas over ``--facts / 5``
subjects x 5 attributes, 10% late, one source episode per 100 deltas), written twice per
run, each into a fresh SQLite file:

- ``http``: ``POST /v1/tenants/{t}/facts`` with ``--batch`` facts per request (1,000 by
  default), one request at a time, against a real ``sgam serve`` (one uvicorn process on
  127.0.0.1, no API keys, access log off, ``--workers`` queue workers: 0 by default, so
  the server runs no indexer, as the in-process side runs none); the client sends the
  bodies as JSON and reads every response;
- ``in-process``: ``MemoryService.write_facts`` on the same batches in this process.

Besides wall-clock rates it reports CPU: the client's and the server's (from
``/proc/PID/stat``, Linux) against the in-process run's. On a shared machine the CPU ratio
is the steadier figure: it counts the work each side does, not the wait for a core.

The source episodes are stored (``POST /episodes``, or ``add_episode``) before the clock
starts, and the server's embedding model has finished loading (it loads in a background
thread at startup: seconds of CPU that are no request's cost). The two run one after the
other in an order rotated run by run, so both see the same machine load; rates are
medians of ``--runs``.

    .venv/bin/python bench/http_ingest.py [--facts 20000] [--batch 1000] [--runs 3] [--workers 0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from http_bench import free_port, start_server, wait_model, wait_ready  # noqa: E402
from ingest_three_way import (  # noqa: E402
    FACTS_PER_EPISODE,
    T0,
    TENANT,
    Delta,
    Stopwatch,
    Took,
    chunks,
    run_sgam,
    sgam_deltas,
    store_episodes,
    workload,
)

from graph import MemoryService, open_store  # noqa: E402


def iso(d: Delta) -> str:
    return d.valid_from.astimezone(UTC).isoformat().replace("+00:00", "Z")


def bodies(deltas: Sequence[Delta], batch: int) -> list[dict[str, Any]]:
    """The request bodies, built before the clock starts (as a client holds its data)."""
    return [
        {
            "facts": [
                {
                    "subject": d.subject,
                    "predicate": d.attribute,
                    "value": d.value,
                    "valid_from": iso(d),
                    "source_episode_id": d.episode_id,
                }
                for d in chunk
            ]
        }
        for chunk in chunks(deltas, batch)
    ]


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a running process so far; NaN off Linux."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_http(tmp: Path, deltas: Sequence[Delta], batch: int, workers: int) -> Took:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = start_server(tmp / "http.db", port, workers=workers)
    try:
        wait_ready(base, proc)
        wait_model(base)
        with httpx.Client(base_url=base, timeout=120) as c:
            seen: set[str] = set()
            for d in deltas:
                if d.episode_id not in seen:
                    seen.add(d.episode_id)
                    at = T0 + timedelta(seconds=(len(seen) - 1) * FACTS_PER_EPISODE)
                    c.post(
                        f"/v1/tenants/{TENANT}/episodes",
                        json={
                            "episode_id": d.episode_id,
                            "kind": "event",
                            "content": f"sync {d.episode_id}",
                            "occurred_at": at.isoformat().replace("+00:00", "Z"),
                        },
                    ).raise_for_status()
            payloads = bodies(deltas, batch)
            server_cpu = process_cpu(proc.pid)
            clock = Stopwatch()
            for body in payloads:
                r = c.post(f"/v1/tenants/{TENANT}/facts", json=body)
                if r.status_code != 201:
                    raise SystemExit(f"POST /facts answered {r.status_code}: {r.text[:300]}")
                r.json()
            took = clock.stop()
            return Took(took.wall, took.cpu + process_cpu(proc.pid) - server_cpu)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:  # a server that will not stop is killed
            proc.kill()


def run_inprocess(tmp: Path, deltas: Sequence[Delta], batch: int, workers: int) -> Took:
    del workers  # the server's only
    store = open_store(f"sqlite:///{tmp / 'inproc.db'}")
    try:
        store_episodes(MemoryService(store), TENANT, deltas)
        return run_sgam(store, sgam_deltas(deltas), TENANT, batch=batch)
    finally:
        store.close()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--facts", type=int, default=20_000)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument(
        "--workers",
        type=int,
        default=0,
        help="SGAM_WORKERS of the server (with workers it also embeds what is written)",
    )
    args = p.parse_args(argv)
    deltas = workload(args.facts)
    n = len(deltas)
    rates: dict[str, list[float]] = {"http": [], "in-process": []}
    cpu: dict[str, list[float]] = {"http": [], "in-process": []}  # CPU ms per batch
    steps: list[tuple[str, Callable[[Path, Sequence[Delta], int, int], Took]]] = [
        ("http", run_http),
        ("in-process", run_inprocess),
    ]
    requests = -(-n // args.batch)
    for run in range(args.runs):
        order = steps[run % 2 :] + steps[: run % 2]
        with tempfile.TemporaryDirectory(prefix="sgam-http-ingest-") as tmp:
            for name, step in order:
                took = step(Path(tmp), deltas, args.batch, args.workers)
                rates[name].append(n / took.wall)
                cpu[name].append(took.cpu * 1000 / requests)
        print(
            f"run {run + 1}: "
            + ", ".join(f"{k} {v[-1]:,.0f} facts/s" for k, v in rates.items())
            + f", ratio {rates['http'][-1] / rates['in-process'][-1]:.2f};"
            + " CPU ms per batch: "
            + ", ".join(f"{k} {v[-1]:,.0f}" for k, v in cpu.items())
            + f", ratio {cpu['in-process'][-1] / cpu['http'][-1]:.2f}"
        )
    http, inproc = (statistics.median(rates[k]) for k in ("http", "in-process"))
    ratios = [h / i for h, i in zip(rates["http"], rates["in-process"], strict=True)]
    cpu_ratios = [i / h for h, i in zip(cpu["http"], cpu["in-process"], strict=True)]
    print(
        f"\nmedian of {args.runs}: {n:,} facts in batches of {args.batch}:"
        f" http {http:,.0f} facts/s, in-process {inproc:,.0f} facts/s,"
        f" http/in-process {statistics.median(ratios):.2f}"
        f" (runs {', '.join(f'{r:.2f}' for r in ratios)});"
        f" CPU ms per batch: http (client + server) {statistics.median(cpu['http']):,.0f},"
        f" in-process {statistics.median(cpu['in-process']):,.0f},"
        f" in-process/http {statistics.median(cpu_ratios):.2f}"
        f" (runs {', '.join(f'{r:.2f}' for r in cpu_ratios)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
