"""Retrieval evaluation on LoCoMo conversations (a folder of its per-conversation JSON files).

Every turn is ingested as one episode (occurred_at = its session's date, content
"speaker: text", episode id = dia_id, session id = the session), then every question of
categories 1-4 is asked and recall@k of its evidence turns is scored for four retrievers:

    bm25    FTS5 BM25 over episodes
    vector  cosine over the MiniLM vectors of episodes
    fused   reciprocal rank fusion (k=60) of the two
    full    sgam's search: fusion + graph expansion + networkx re-rank (all scopes;
            an episode counts when returned or cited as the source of a returned fact)

The store lives in .sgam/bench/locomo.db and is reused by later runs (the episodes and
their vectors: embedding is the slow part). The data is not in the repository: see
bench/README.md for where it comes from. Run from the repository root:

    HF_HUB_OFFLINE=1 .venv/bin/python bench/locomo_eval.py --data DIR
    HF_HUB_OFFLINE=1 .venv/bin/python bench/locomo_eval.py --data DIR --set w_ppr=0.3 --only 26 30
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graph.model import EpisodeCreate  # noqa: E402
from graph.retrieval import ItemKind, RankConfig, Retriever  # noqa: E402
from graph.retrieval import rank as rank_mod  # noqa: E402
from graph.service import MemoryService  # noqa: E402
from graph.stores.sqlite.store import SqliteStore  # noqa: E402

DB = ROOT / ".sgam" / "bench" / "locomo.db"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
METHODS = ("bm25", "vector", "fused", "full")
KS = (5, 10)


def session_date(text: str) -> datetime:
    """ "1:56 pm on 8 May, 2023" → an aware datetime (the data set gives no zone: UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turns(conv: dict[str, object]) -> list[tuple[str, str, datetime, str]]:
    """(dia_id, session id, occurred_at, content) in conversation order."""
    out = []
    n = 1
    while f"session_{n}" in conv:
        when = session_date(str(conv[f"session_{n}_date_time"]))
        for t in conv[f"session_{n}"]:  # type: ignore[attr-defined]
            out.append((t["dia_id"], f"session_{n}", when, f"{t['speaker']}: {t['text']}"))
        n += 1
    return out


def evidence_ids(raw: Sequence[str], known: set[str]) -> list[str]:
    """The data set's evidence lists hold a few typos ("D:11:26", "D8:6; D9:17")."""
    out: list[str] = []
    for item in raw:
        for part in re.split(r"[;,\s]+", item):
            fixed = re.sub(r"^D:(\d)", r"D\1", part.strip())
            if fixed in known and fixed not in out:
                out.append(fixed)
    return out


def ingest(svc: MemoryService, tenant: str, conv: dict[str, object]) -> int:
    created = 0
    for dia_id, session, when, content in turns(conv):
        _, new = svc.add_episode(
            tenant_id=tenant,
            body=EpisodeCreate(
                episode_id=dia_id, content=content, occurred_at=when, session_id=session
            ),
        )
        created += new
    return created


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--data",
        type=Path,
        required=True,
        help="folder of LoCoMo conversations, one JSON file each (26.json, 30.json, ...);\n"
        "see bench/README.md for where to get them",
    )
    ap.add_argument("--db", type=Path, default=DB)
    ap.add_argument("--only", nargs="*", default=None, help="conversation file stems, e.g. 26 30")
    ap.add_argument("--set", nargs="*", default=[], help="RankConfig overrides, name=value")
    ap.add_argument("--methods", nargs="*", default=list(METHODS))
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)

    overrides: dict[str, object] = {}
    fields = {f.name: f.type for f in dataclasses.fields(RankConfig)}
    for item in args.set:
        name, _, value = item.partition("=")
        if name not in fields:
            ap.error(f"unknown RankConfig field {name!r}")
        overrides[name] = float(value) if "." in value else int(value)
    cfg = dataclasses.replace(RankConfig(), **overrides)  # type: ignore[arg-type]

    args.db.parent.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(args.db)
    store.init()
    svc = MemoryService(store)
    retriever = Retriever(store, config=cfg)

    files = sorted(args.data.glob("*.json"))
    if args.only:
        files = [f for f in files if f.stem in args.only]
    if not files:
        ap.error(
            f"no LoCoMo conversation (*.json) in {args.data}"
            + (f" matching --only {' '.join(args.only)}" if args.only else "")
            + ": see bench/README.md for where the data comes from"
        )
    # recall[method][k][category] → list of per-question recalls
    recall: dict[str, dict[int, dict[int, list[float]]]] = {
        m: {k: defaultdict(list) for k in KS} for m in args.methods
    }
    skipped = 0
    t0 = time.perf_counter()
    timings: dict[str, float] = defaultdict(float)
    for path in files:
        conv = json.loads(path.read_text())
        tenant = f"locomo-{path.stem}"
        ingest(svc, tenant, conv)
        t = time.perf_counter()
        embedded = retriever.ensure_indexed(tenant)
        timings["embed"] += time.perf_counter() - t
        if embedded:
            print(f"{tenant}: embedded {embedded} turns in {time.perf_counter() - t:.1f}s")
        known = {d for d, *_ in turns(conv)}
        window = retriever.window()
        for qa in conv["qa"]:  # type: ignore[attr-defined]
            cat = int(qa["category"])
            if cat not in CATEGORIES:
                continue
            gold = evidence_ids(qa["evidence"], known)
            if not gold:
                skipped += 1
                continue
            q = str(qa["question"])
            runs: dict[str, Callable[[], list[str]]] = {}
            cands = None
            if {"bm25", "vector", "fused"} & set(args.methods):
                t = time.perf_counter()
                cands = retriever.candidates(
                    tenant_id=tenant,
                    query=q,
                    window=window,
                    kinds=[ItemKind.EPISODE],
                    limit=cfg.candidates,
                )
                timings["candidates"] += time.perf_counter() - t
            if cands is not None:
                bm = [h.item_id for h in cands.bm25[ItemKind.EPISODE]]
                vec = [h.item_id for h in cands.vector[ItemKind.EPISODE]]
                runs["bm25"] = lambda bm=bm: bm
                runs["vector"] = lambda vec=vec: vec
                fused = rank_mod.rrf([bm, vec], k=cfg.rrf_k)
                runs["fused"] = lambda fused=fused: sorted(fused, key=lambda i: -fused[i])

            def full(q: str = q, tenant: str = tenant) -> list[str]:
                out: list[str] = []
                for r in retriever.search(tenant_id=tenant, query=q, limit=max(KS)):
                    for ep in r.source_episode_ids if r.kind != ItemKind.ENTITY else []:
                        if ep not in out:
                            out.append(ep)
                return out

            runs["full"] = full
            for m in args.methods:
                t = time.perf_counter()
                got = runs[m]()
                timings[m] += time.perf_counter() - t
                for k in KS:
                    hit = len(set(got[:k]) & set(gold)) / len(gold)
                    recall[m][k][cat].append(hit)

    table = report(recall, args.methods)
    print(table)
    print(f"questions skipped (no usable evidence id): {skipped}")
    print(
        "seconds: "
        + ", ".join(f"{k} {v:.1f}" for k, v in timings.items())
        + f", total {time.perf_counter() - t0:.1f}"
    )
    if args.json:
        figures = {
            m: {
                str(k): {
                    **{CATEGORIES[c]: _mean(v) for c, v in sorted(recall[m][k].items())},
                    "overall": _mean([x for v in recall[m][k].values() for x in v]),
                }
                for k in KS
            }
            for m in args.methods
        }
        args.json.write_text(
            json.dumps({"config": dataclasses.asdict(cfg), "recall": figures}, indent=2)
        )
    store.close()
    return 0


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def report(recall: dict[str, dict[int, dict[int, list[float]]]], methods: Sequence[str]) -> str:
    cats = sorted(CATEGORIES)
    head = "| method | k | " + " | ".join(f"{c} {CATEGORIES[c]}" for c in cats) + " | overall |"
    lines = [head, "|" + "---|" * (len(cats) + 3)]
    for m in methods:
        for k in KS:
            per = recall[m][k]
            allv = [x for c in cats for x in per.get(c, [])]
            cells = [f"{_mean(per.get(c, [])):.3f}" for c in cats]
            lines.append(f"| {m} | {k} | " + " | ".join(cells) + f" | {_mean(allv):.3f} |")
    n = {c: len(recall[methods[0]][KS[0]].get(c, [])) for c in cats}
    lines.append(
        "questions: "
        + ", ".join(f"{CATEGORIES[c]} {n[c]}" for c in cats)
        + f", total {sum(n.values())}"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
