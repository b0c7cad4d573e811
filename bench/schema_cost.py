"""What a large memory schema costs: its PUT, the event loop meanwhile, and later writes.

    .venv/bin/python bench/schema_cost.py [--put 26000] [--stored 1000] [--writes 30]

Over real HTTP on loopback, on a fresh SQLite store in a temporary directory:
1. PUT a schema of ``--put`` predicates while another thread asks ``/healthz`` every
   10 ms: the PUT's answer and duration, and the slowest ``/healthz`` meanwhile (what
   every other client waited);
2. PUT a schema of ``--stored`` predicates, then time ``--writes`` one-fact writes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx

from api.server import running
from api.settings import Settings


def schema(n: int) -> bytes:
    preds = [{"name": f"p{i}", "value_type": "string"} for i in range(n)]
    return json.dumps({"predicates": preds}, separators=(",", ":")).encode()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--put", type=int, default=26_000)
    ap.add_argument("--stored", type=int, default=1000)
    ap.add_argument("--writes", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        settings = Settings(
            port=0,
            log_level="warning",
            store_url=f"sqlite:///{Path(d) / 'b.db'}",
            max_body_bytes=4 * 1024 * 1024,
            workers=0,
        )
        with running(settings) as url, httpx.Client(base_url=url, timeout=120) as http:
            headers = {"content-type": "application/json"}
            body = schema(args.put)
            slowest = [0.0]
            stop = threading.Event()

            def probe() -> None:
                with httpx.Client(base_url=url, timeout=120) as h:
                    while not stop.is_set():
                        t = time.perf_counter()
                        h.get("/healthz")
                        slowest[0] = max(slowest[0], time.perf_counter() - t)
                        time.sleep(0.01)

            th = threading.Thread(target=probe)
            th.start()
            time.sleep(0.2)
            t0 = time.perf_counter()
            r = http.put("/v1/tenants/bench-a/schema", content=body, headers=headers)
            put_s = time.perf_counter() - t0
            time.sleep(0.2)
            stop.set()
            th.join()
            print(
                f"PUT {args.put} predicates ({len(body)} bytes): {r.status_code} "
                f"in {put_s * 1000:.0f} ms; slowest /healthz meanwhile {slowest[0] * 1000:.0f} ms"
            )

            r = http.put("/v1/tenants/bench-b/schema", content=schema(args.stored), headers=headers)
            assert r.status_code == 200, r.text
            ep = {"episode_id": "e1", "content": "x", "occurred_at": "2026-01-01T00:00:00Z"}
            http.post("/v1/tenants/bench-b/episodes", json=ep)
            times = []
            for i in range(args.writes):
                item = {
                    "subject": f"s{i}",
                    "predicate": "p1",
                    "value": "v",
                    "source_episode_id": "e1",
                }
                t = time.perf_counter()
                w = http.post("/v1/tenants/bench-b/facts", json={"facts": [item]})
                times.append(time.perf_counter() - t)
                assert w.status_code == 201, w.text
            print(
                f"one-fact write with {args.stored} stored predicates: median "
                f"{statistics.median(times) * 1000:.1f} ms over {args.writes}"
            )


if __name__ == "__main__":
    main()
