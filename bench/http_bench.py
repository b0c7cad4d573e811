"""HTTP benchmark of REST API v1 on the SQLite store (not part of the test run).

Starts ``sgam serve`` (one uvicorn process) on 127.0.0.1 with a temporary SQLite store,
waits for its embedding model to load (a startup cost, not a request's), seeds it, then
drives a bounded load generator on loopback (threads, one httpx client each, a fixed
request count and a time cap) and reports requests/s and p50/p99 latency:

- baseline  GET /healthz (no store, no auth): the server's floor, measured in the same run
- read      GET /v1/tenants/{t}/facts?subject=&predicate=   (a current-state read)
- write     POST /v1/tenants/{t}/facts with 100 new facts     (one transaction per request)

Each figure is the median over ``--runs`` runs; ``vs healthz`` is the workload's rate
as a fraction of the baseline's.

    .venv/bin/python bench/http_bench.py [--runs 3] [--concurrency 8] [--reads 3000]
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
TENANT = "bench"
EPISODE = "bench-ep"
SUBJECTS = 1000
BATCH = 100

Request = Callable[[httpx.Client, int], httpx.Response]


@dataclass
class Result:
    name: str
    ok: int
    errors: int
    seconds: float
    latencies: list[float]

    @property
    def rps(self) -> float:
        return self.ok / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_server(db: Path, port: int, *, workers: int | None = None) -> subprocess.Popen[bytes]:
    """``sgam serve`` on ``db``; ``workers`` sets SGAM_WORKERS (None: the environment's)."""
    env = {
        **os.environ,
        "SGAM_STORE_URL": f"sqlite:///{db}",  # absolute path: sqlite:////tmp/...
        "SGAM_LOG_LEVEL": "warning",  # no access log: measure the API, not the terminal
        "SGAM_API_KEYS": "",
    }
    if workers is not None:
        env["SGAM_WORKERS"] = str(workers)
    cmd = [sys.executable, "-m", "api.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL)


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with status {proc.returncode}")
        try:
            if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit("the server did not become ready")


def wait_model(base: str, timeout: float = 180.0) -> None:
    """Wait until the server's embedding model has loaded (or failed to). /readyz answers
    200 while the model still loads in a background thread of the server, and that load
    (seconds of CPU, much of it holding the GIL) would be timed as request cost."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        detail = httpx.get(f"{base}/readyz", timeout=10).json().get("embeddings")
        if detail is None or detail["model_state"] in ("ready", "failed"):
            return
        time.sleep(0.2)
    raise SystemExit("the server's embedding model did not finish loading")


def seed(base: str) -> None:
    with httpx.Client(base_url=base, timeout=60) as c:
        r = c.post(
            f"/v1/tenants/{TENANT}/episodes",
            json={"episode_id": EPISODE, "content": "bench", "occurred_at": "2026-01-01T00:00:00Z"},
        )
        r.raise_for_status()
        for start in range(0, SUBJECTS, BATCH):
            facts = [
                {"subject": f"s{i}", "predicate": "score", "value": i, "source_episode_id": EPISODE}
                for i in range(start, start + BATCH)
            ]
            c.post(f"/v1/tenants/{TENANT}/facts", json={"facts": facts}).raise_for_status()


def load(
    base: str, name: str, request: Request, *, total: int, concurrency: int, cap: float
) -> Result:
    """``total`` requests over ``concurrency`` threads, stopping early at ``cap`` seconds."""
    counter = itertools.count()
    lock = threading.Lock()
    latencies: list[float] = []
    errors = 0
    stop_at = time.perf_counter() + cap

    def worker() -> None:
        nonlocal errors
        mine: list[float] = []
        bad = 0
        with httpx.Client(base_url=base, timeout=60) as client:
            while time.perf_counter() < stop_at:
                with lock:
                    n = next(counter)
                if n >= total:
                    break
                t0 = time.perf_counter()
                try:
                    ok = request(client, n).is_success
                except httpx.HTTPError:
                    ok = False
                if ok:
                    mine.append(time.perf_counter() - t0)
                else:
                    bad += 1
        with lock:
            latencies.extend(mine)
            errors += bad

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return Result(name, len(latencies), errors, time.perf_counter() - start, latencies)


def healthz(client: httpx.Client, n: int) -> httpx.Response:
    return client.get("/healthz")


def read(client: httpx.Client, n: int) -> httpx.Response:
    subject = f"s{random.randrange(SUBJECTS)}"
    return client.get(
        f"/v1/tenants/{TENANT}/facts", params={"subject": subject, "predicate": "score"}
    )


def make_write(run: int) -> Request:
    def write(client: httpx.Client, n: int) -> httpx.Response:
        facts = [
            {
                "subject": f"w{run}-{n}-{j}",
                "predicate": "score",
                "value": j,
                "source_episode_id": EPISODE,
            }
            for j in range(BATCH)
        ]
        return client.post(f"/v1/tenants/{TENANT}/facts", json={"facts": facts})

    return write


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--reads", type=int, default=3000, help="requests per read/healthz run")
    ap.add_argument("--writes", type=int, default=150, help="100-fact batches per write run")
    ap.add_argument("--time-cap", type=float, default=30.0, help="seconds per run at most")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="sgam-bench-") as tmp:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        proc = start_server(Path(tmp) / "bench.db", port)
        try:
            wait_ready(base, proc)
            wait_model(base)
            seed(base)
            runs: dict[str, list[Result]] = {"healthz": [], "read": [], "write": []}
            for run in range(args.runs):
                plan: list[tuple[str, Request, int]] = [
                    ("healthz", healthz, args.reads),
                    ("read", read, args.reads),
                    ("write", make_write(run), args.writes),
                ]
                for name, request, total in plan:
                    r = load(
                        base,
                        name,
                        request,
                        total=total,
                        concurrency=args.concurrency,
                        cap=args.time_cap,
                    )
                    runs[name].append(r)
                    print(
                        f"run {run + 1}/{args.runs} {name:8s} {r.ok:6d} ok {r.errors:3d} err "
                        f"{r.rps:9.1f} req/s",
                        file=sys.stderr,
                    )
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()

    report(runs, args)
    return 0 if all(r.errors == 0 for rs in runs.values() for r in rs) else 1


def report(runs: dict[str, list[Result]], args: Any) -> None:
    def med(name: str, f: Callable[[Result], float]) -> float:
        return statistics.median(f(r) for r in runs[name])

    base_rps = med("healthz", lambda r: r.rps)
    labels = {
        "healthz": "GET /healthz (baseline)",
        "read": "GET /facts?subject=&predicate=",
        "write": f"POST /facts ({BATCH} facts)",
    }
    print(
        f"\nsgam HTTP bench: SQLite store, 1 uvicorn process, 127.0.0.1, "
        f"{args.concurrency} client threads, median of {args.runs} runs, "
        f"{os.cpu_count()} CPUs\n"
    )
    head = (
        f"{'workload':34s} {'requests':>8s} {'req/s':>9s} {'p50 ms':>8s} {'p99 ms':>8s} "
        f"{'vs healthz':>10s} {'errors':>6s}"
    )
    print(head)
    print("-" * len(head))
    for name in ("healthz", "read", "write"):
        rps = med(name, lambda r: r.rps)
        line = (
            f"{labels[name]:34s} {int(med(name, lambda r: r.ok)):8d} {rps:9.1f} "
            f"{med(name, lambda r: r.pct(0.50)):8.2f} {med(name, lambda r: r.pct(0.99)):8.2f} "
            f"{rps / base_rps:10.2f} {sum(r.errors for r in runs[name]):6d}"
        )
        print(line)
    print(f"\nwrite throughput: {med('write', lambda r: r.rps) * BATCH:,.0f} facts/s")


if __name__ == "__main__":
    sys.exit(main())
