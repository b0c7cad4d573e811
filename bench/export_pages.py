"""How long a ledger export's pages take on a large tenant (not part of the test run).

``sgam export --ledger`` reads each record type in pages of 1,000 after a keyset cursor.
A page costs what its plan costs: a seek where the last page stopped, or a sort of every
row of the tenant when the cursor's order is not an index's. This script times the first
``--pages`` pages of versions and of ledger entries (``store.export_records``) and
extrapolates nothing: it prints the median page and each page's time, in milliseconds.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/search_latency.py --facts 1000000 \\
        --synthetic-vectors --store sqlite:////tmp/syn-1000000.db --load-only
    .venv/bin/python bench/export_pages.py sqlite:////tmp/syn-1000000.db --tenant lat-1000000
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graph.stores import open_store  # noqa: E402
from graph.stores.transfer import PAGE  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("store", help="a store URL, e.g. sqlite:////tmp/syn-1000000.db")
    ap.add_argument("--tenant", required=True)
    ap.add_argument("--pages", type=int, default=10, help="pages timed per record type")
    args = ap.parse_args()
    store = open_store(args.store, init=False)
    for kind in ("version", "assertion"):
        records = store.export_records(tenant_id=args.tenant, kind=kind)  # type: ignore[attr-defined]
        times = []
        for _ in range(args.pages):
            t = time.perf_counter()
            page = list(itertools.islice(records, PAGE))
            times.append((time.perf_counter() - t) * 1000)
            if len(page) < PAGE:
                break
        each = ", ".join(f"{x:.0f}" for x in times)
        print(f"{kind} pages of {PAGE}: median {statistics.median(times):.1f} ms ({each})")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
