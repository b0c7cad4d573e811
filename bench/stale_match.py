"""The text half of a search's staleness check: does an episode state a value its
timelines no longer hold? Timed two ways on the same values and texts, alternating:
``mentions_value`` per value (a pattern compiled per value and text, past the ``re``
module's cache of 512), and ``mentioning_any`` (one pattern for all the values, compiled
once per check). A search that shows an episode sourcing a bulk import of N facts checks
about N values (graph/retrieval/stale.py); a page shows up to 10 episodes.

    .venv/bin/python bench/stale_match.py [--values 2000] [--episodes 10] [--runs 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graph.retrieval.text import mentioning_any, mentions_value  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--values", type=int, default=2000)
    ap.add_argument("--episodes", type=int, default=10)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    rng = random.Random(7)
    # Half street names, half numbers: what superseded addresses and phone numbers leave.
    values = [
        f"{rng.choice(['Harbour', 'Marchmont', 'Mill'])} Street {i}"
        for i in range(0, args.values, 2)
    ]
    values += [
        f"+351 9{rng.randint(10, 99)} {rng.randint(100, 999)}" for _ in range(args.values // 2)
    ]
    texts = [
        f"CRM export {i}: {args.values} customer records updated, see the attached file."
        for i in range(args.episodes)
    ]
    per_value: list[float] = []
    one_pattern: list[float] = []
    for _ in range(args.runs):
        t = time.perf_counter()
        a = [any(mentions_value(text, v) for v in values) for text in texts]
        per_value.append(time.perf_counter() - t)
        t = time.perf_counter()
        stated = mentioning_any(values)
        b = [stated(text) for text in texts]
        one_pattern.append(time.perf_counter() - t)
        assert a == b
    p, o = statistics.median(per_value) * 1000, statistics.median(one_pattern) * 1000
    print(f"{len(values)} values x {len(texts)} episodes, median of {args.runs} runs")
    print("| check | ms |\n|---|---|")
    print(f"| mentions_value per value | {p:.1f} |")
    print(f"| mentioning_any, one pattern | {o:.1f} |")
    print(f"| ratio | {o / p:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
