"""Knowledge-update suite: values that change over time, asked now and as of earlier dates.

Synthetic people each hold seven attributes (city, employer, phone number, manager,
passport deadline, favourite food, car) that change two or three times. Every change
arrives as an episode ("Mira moved. She now lives in Porto.") plus the fact it states,
among chit-chat episodes. Each timeline is asked twice: now, and as of a date between two
changes. An answer counts when the text handed to the agent contains the right value and
no other value that timeline ever held ("right, nothing stale beside it").

    plain   top-5 episodes by BM25 + MiniLM fusion (RRF k=60); for an as-of question only
            episodes that occurred by then (the baseline is given that much of time)
    sgam    POST /context: exact state first, then search, as of the asked time

    HF_HUB_OFFLINE=1 .venv/bin/python bench/knowledge_update.py [--store URL] [--people 40]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graph.model import EpisodeCreate, MemoryDelta  # noqa: E402
from graph.retrieval import ContextBuilder, ItemKind, Retriever, SearchableStore  # noqa: E402
from graph.retrieval import rank as rank_mod  # noqa: E402
from graph.retrieval.text import mentions_value  # noqa: E402
from graph.service import MemoryService  # noqa: E402
from graph.stores import open_store  # noqa: E402

FIRST = [
    "Mira",
    "Boris",
    "Ana",
    "Kenji",
    "Lea",
    "Omar",
    "Priya",
    "Tomas",
    "Ines",
    "Felix",
    "Sara",
    "Luca",
    "Nora",
    "Ravi",
    "Elif",
    "Hugo",
    "Maya",
    "Jonas",
    "Aiko",
    "Pablo",
    "Zoe",
    "Igor",
    "Lina",
    "Yusuf",
    "Clara",
    "Matteo",
    "Freya",
    "Diego",
    "Hana",
    "Oskar",
    "Vera",
    "Amir",
    "Ida",
    "Carlos",
    "Noor",
    "Emil",
    "Rosa",
    "Tariq",
    "Alma",
    "Bruno",
]
LAST = ["Lopes", "Novak", "Sato", "Berg", "Haddad", "Rao", "Costa", "Weber", "Kaya", "Moreau"]
CITIES = [
    "Lisbon",
    "Porto",
    "Madrid",
    "Berlin",
    "Vienna",
    "Prague",
    "Oslo",
    "Dublin",
    "Zurich",
    "Milan",
    "Warsaw",
    "Athens",
    "Helsinki",
    "Krakow",
    "Seville",
    "Lyon",
]
COMPANIES = [
    "Acme Corp",
    "Globex",
    "Initech",
    "Umbrella Labs",
    "Stark Logistics",
    "Wayne Foods",
    "Hooli",
    "Vandelay Imports",
    "Soylent Systems",
    "Cyberdyne",
]
FOODS = [
    "sushi",
    "lasagne",
    "falafel",
    "ramen",
    "paella",
    "dumplings",
    "tacos",
    "moussaka",
    "pierogi",
    "curry",
]
CARS = [
    "Volvo XC40",
    "Toyota Corolla",
    "Tesla Model 3",
    "Renault Clio",
    "Skoda Octavia",
    "Fiat Panda",
    "Kia Niro",
    "Mazda CX-5",
]

# predicate: (question, first statement, update statement, values)
ATTRIBUTES: dict[str, tuple[str, str, str]] = {
    "lives_in": ("Where does {n} live?", "{n} lives in {v}.", "{n} moved. {n} now lives in {v}."),
    "employer": ("Who does {n} work for?", "{n} works at {v}.", "{n} changed jobs and joined {v}."),
    "phone_number": (
        "What is {n}'s phone number?",
        "{n}'s phone number is {v}.",
        "{n} has a new phone number: {v}.",
    ),
    "manager": ("Who is {n}'s manager?", "{n} reports to {v}.", "Reorg: {n}'s manager is now {v}."),
    "passport_deadline": (
        "When is {n}'s passport deadline?",
        "{n}'s passport deadline is {v}.",
        "Correction: {n}'s passport deadline is {v}.",
    ),
    "favourite_food": (
        "What food does {n} like most?",
        "{n}'s favourite food is {v}.",
        "These days {n} prefers {v} above all.",
    ),
    "car": (
        "What car does {n} drive?",
        "{n} drives a {v}.",
        "{n} sold the old car and bought a {v}.",
    ),
}
CHATTER = [
    "{n} said the weather was lovely.",
    "{n} asked about the weekend plans.",
    "{n} shared a funny video.",
    "{n} is tired after the long meeting.",
    "{n} recommended a podcast.",
    "{n} mentioned the traffic was bad today.",
]
START = datetime(2024, 1, 1, 9, tzinfo=UTC)


@dataclass
class Timeline:
    subject: str
    name: str
    predicate: str
    values: list[str]
    starts: list[datetime]


def values_for(predicate: str, rng: random.Random, n: int, names: list[str]) -> list[str]:
    if predicate == "lives_in":
        return rng.sample(CITIES, n)
    if predicate == "employer":
        return rng.sample(COMPANIES, n)
    if predicate == "phone_number":
        return [
            f"+351 9{rng.randint(10, 99)} {rng.randint(100, 999)} {rng.randint(100, 999)}"
            for _ in range(n)
        ]
    if predicate == "manager":
        return rng.sample(names, n)
    if predicate == "passport_deadline":
        return [
            (START + timedelta(days=rng.randint(400, 1200))).date().isoformat() for _ in range(n)
        ]
    if predicate == "favourite_food":
        return rng.sample(FOODS, n)
    return rng.sample(CARS, n)


def build(service: MemoryService, tenant: str, people: int, seed: int) -> list[Timeline]:
    rng = random.Random(seed)
    names = [
        f"{FIRST[i % len(FIRST)]} {LAST[(i // len(FIRST) + i) % len(LAST)]}" for i in range(people)
    ]
    timelines: list[Timeline] = []
    episodes: list[tuple[datetime, str, MemoryDelta | None]] = []
    for name in names:
        subject = name.lower().replace(" ", "-")
        for predicate, (_, first, update) in ATTRIBUTES.items():
            n = rng.choice((2, 3, 3))
            others = [m for m in names if m != name]
            vals = values_for(predicate, rng, n, others)
            days = sorted(rng.sample(range(0, 600), n))
            starts = [START + timedelta(days=d, hours=rng.randint(0, 8)) for d in days]
            timelines.append(Timeline(subject, name, predicate, vals, starts))
            for i, (v, at) in enumerate(zip(vals, starts, strict=True)):
                text = (first if i == 0 else update).format(n=name, v=v)
                delta = MemoryDelta(
                    subject=subject,
                    subject_type="Person",
                    predicate=predicate,
                    value=v,
                    valid_from=at,
                )
                episodes.append((at, text, delta))
        for _ in range(5):
            at = START + timedelta(days=rng.randint(0, 600))
            episodes.append((at, rng.choice(CHATTER).format(n=name), None))
    episodes.sort(key=lambda e: e[0])
    for i, (at, text, delta) in enumerate(episodes):
        eid = f"ep{i}"
        service.add_episode(
            tenant_id=tenant, body=EpisodeCreate(episode_id=eid, content=text, occurred_at=at)
        )
        if delta is not None:
            service.write_facts(
                tenant_id=tenant, deltas=[delta.model_copy(update={"source_episode_id": eid})]
            )
    return timelines


def plain_text(
    retriever: Retriever, tenant: str, question: str, as_of: datetime | None, k: int = 5
) -> str:
    """Plain retrieval over episodes: BM25 + vector fused by RRF, top k texts."""
    window = retriever.window()
    cands = retriever.candidates(
        tenant_id=tenant, query=question, window=window, kinds=[ItemKind.EPISODE], limit=50
    )
    lists = [
        [h.item_id for h in cands.bm25[ItemKind.EPISODE]],
        [h.item_id for h in cands.vector[ItemKind.EPISODE]],
    ]
    fused = rank_mod.rrf(lists, k=60)
    ranked = sorted(fused, key=lambda i: (-fused[i], i))
    eps = retriever.store.episodes_by_id(
        tenant_id=tenant, episode_ids=ranked, known_at=window.known_at
    )
    chosen = [eps[i] for i in ranked if i in eps and (as_of is None or eps[i].occurred_at <= as_of)]
    return "\n".join(e.text() for e in chosen[:k])


def judge(text: str, t: Timeline, want: str) -> tuple[bool, bool]:
    """Right: the value is in the text. Stale: a line about this person (naming them or
    their id) states another value of the timeline; other people's lines may name the same
    city or company without saying anything about this person."""
    right = mentions_value(text, want)
    about = [
        ln
        for ln in text.splitlines()
        if mentions_value(ln, t.name) or mentions_value(ln, t.subject)
    ]
    stale = any(mentions_value(ln, v) for ln in about for v in t.values if v != want)
    return right, stale


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--store", default=f"sqlite:///{ROOT}/.sgam/bench/knowledge.db")
    ap.add_argument("--people", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--show", type=int, default=0, help="print this many contexts")
    args = ap.parse_args(argv)

    store = open_store(args.store)
    assert isinstance(store, SearchableStore)
    tenant = "ku-" + uuid.uuid4().hex[:8]
    service = MemoryService(store)
    retriever = Retriever(store)
    builder = ContextBuilder(retriever)
    t0 = time.perf_counter()
    timelines = build(service, tenant, args.people, args.seed)
    retriever.ensure_indexed(tenant)
    print(
        f"tenant {tenant}: {len(timelines)} timelines, built and embedded in "
        f"{time.perf_counter() - t0:.0f}s"
    )
    rng = random.Random(args.seed + 1)
    # tally[method][when] = [right and clean, right, stale seen, total]
    tally: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0]))
    timings: dict[str, float] = defaultdict(float)
    exact: dict[str, int] = defaultdict(int)  # answered by exact state (subject + predicate)
    for t in timelines:
        question = ATTRIBUTES[t.predicate][0].format(n=t.name)
        k = rng.randrange(len(t.values) - 1)
        mid = t.starts[k] + (t.starts[k + 1] - t.starts[k]) / 2
        for when, as_of, want in (("now", None, t.values[-1]), ("as_of", mid, t.values[k])):
            s = time.perf_counter()
            plain = plain_text(retriever, tenant, question, as_of)
            timings["plain"] += time.perf_counter() - s
            s = time.perf_counter()
            ctx = builder.build(tenant_id=tenant, question=question, as_of=as_of)
            timings["sgam"] += time.perf_counter() - s
            exact[when] += [str(f.value) for f in ctx.exact] == [want]
            for method, text in (("plain", plain), ("sgam", ctx.text)):
                right, stale = judge(text, t, want)
                row = tally[method][when]
                row[0] += right and not stale
                row[1] += right
                row[2] += stale
                row[3] += 1
    print("| method | asked | right, nothing stale | right value present | stale value shown |")
    print("|---|---|---|---|---|")
    for method in ("plain", "sgam"):
        for when in ("now", "as_of"):
            clean, right, stale, n = tally[method][when]
            print(f"| {method} | {when} | {clean / n:.3f} | {right / n:.3f} | {stale / n:.3f} |")
    n_q = sum(r[3] for r in tally["sgam"].values())
    print(
        "sgam answered from exact state (resolved subject and predicate): "
        + ", ".join(f"{w} {exact[w] / tally['sgam'][w][3]:.3f}" for w in ("now", "as_of"))
    )
    print(
        f"questions: {n_q}; seconds per question: plain {timings['plain'] / n_q:.3f}, "
        f"sgam context {timings['sgam'] / n_q:.3f}"
    )
    if args.show:
        for t in timelines[: args.show]:
            q = ATTRIBUTES[t.predicate][0].format(n=t.name)
            print(f"--- {q} values {t.values}\n{builder.build(tenant_id=tenant, question=q).text}")
    store.purge_tenant(tenant_id=tenant)
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
