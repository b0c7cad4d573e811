"""Episode deletion on a large SQLite tenant (not part of the test run).

Deletion finds an episode's rows through its ledger entries, as a redelivered episode
(an import run again) does. Planned without statistics, the lookup of an episode's
timelines and the deletion of the versions it alone sourced read every row of the
tenant, holding the writer lock of the whole file meanwhile. This script times
``DELETE /episodes/{id}`` (``MemoryService.delete_episode``) on a file you are ready to
change (work on a copy):

    HF_HUB_OFFLINE=1 .venv/bin/python bench/search_latency.py --facts 1000000 \\
        --synthetic-vectors --store sqlite:////tmp/syn-1000000.db --load-only
    cp /tmp/syn-1000000.db /tmp/scratch.db
    .venv/bin/python bench/episode_delete.py /tmp/scratch.db --tenant lat-1000000 --episodes 5

Prints the median and each time in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graph.service import MemoryService  # noqa: E402
from graph.stores.sqlite.store import SqliteStore  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("path", help="a SQLite file to change (a copy)")
    ap.add_argument("--tenant", required=True)
    ap.add_argument("--episodes", type=int, default=5, help="episodes deleted")
    args = ap.parse_args()
    store = SqliteStore(args.path)
    store.init()
    svc = MemoryService(store)
    rows = store.conn.read(
        "SELECT e.episode_id FROM episodes e WHERE e.tenant_id = ? AND EXISTS (SELECT 1"
        " FROM assertions a WHERE a.tenant_id = e.tenant_id"
        " AND a.source_episode_id = e.episode_id) LIMIT ?",
        (args.tenant, args.episodes),
    )
    ids = [r["episode_id"] for r in rows]
    if len(ids) < args.episodes:
        raise SystemExit(f"tenant {args.tenant!r} has fewer than {args.episodes} episodes")
    deleted = []
    for ep_id in ids[: args.episodes]:
        t = time.perf_counter()
        svc.delete_episode(tenant_id=args.tenant, episode_id=ep_id)
        deleted.append((time.perf_counter() - t) * 1000)
    store.close()
    each = ", ".join(f"{x:.1f}" for x in deleted)
    print(f"delete an episode: median {statistics.median(deleted):.1f} ms ({each})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
