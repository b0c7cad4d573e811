"""Which episodes must not be quoted for a window: those stating a value that is not valid
at ``as_of`` (superseded, retracted, or not yet true).

An episode is stale when either
1. it is a source of a fact that has no version valid in the window — what it asserted is
   not true then — or
2. its text states, as a whole word or phrase, a value that a timeline in play held at
   another time but does not hold in the window. The timelines in play are those of the
   facts being returned and of the facts the episodes sourced.

The second rule catches an episode that repeats an old value without having sourced it.
It errs on the side of leaving an episode out: a context must never show an agent the
old value beside the new one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from graph.model import Cardinality, Episode, Fact
from graph.retrieval.port import GatheredReads, SearchPort, Window
from graph.retrieval.text import STOPWORDS, mentioning_any


def valid_at(f: Fact, at: datetime) -> bool:
    return f.valid_from <= at and (f.valid_to is None or f.valid_to > at)


def value_text(f: Fact) -> str | None:
    """How a fact's value would be written in text; None when it cannot be told apart from
    ordinary words (booleans, one-letter values, stopwords)."""
    v = f.object if f.object is not None else f.value
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    s = str(v).strip()
    if len(s) < 2 or s.lower() in STOPWORDS:
        return None
    return s


def stale_values(versions: Iterable[Fact], at: datetime) -> set[str]:
    """Per (subject, predicate): values held at some time but not at ``at``."""
    held: dict[tuple[str, str], set[str]] = {}
    now: dict[tuple[str, str], set[str]] = {}
    for f in versions:
        text = value_text(f)
        if text is None:
            continue
        key = (f.subject, f.predicate)
        held.setdefault(key, set()).add(text)
        if valid_at(f, at):
            now.setdefault(key, set()).add(text)
    out: set[str] = set()
    for key, values in held.items():
        out |= values - now.get(key, set())
    return out


def stale_episodes(
    store: SearchPort,
    *,
    tenant_id: str,
    window: Window,
    episode_ids: Sequence[str],
    episodes: Mapping[str, Episode],
    facts: Sequence[Fact],
) -> set[str]:
    """Which of ``episode_ids`` are stale, with ``facts`` the page beside them. The
    episodes' records are read from ``episodes`` only after the prefetch below: a
    gathered search loads them with it."""
    if not episode_ids:
        return set()
    ids = list(episode_ids)
    wanted = set(ids)
    if isinstance(store, GatheredReads):  # both reads below in one round trip
        store.prefetch_staleness(
            tenant_id=tenant_id,
            episode_ids=ids,
            pairs=sorted({(f.subject, f.predicate) for f in facts}),
            known_at=window.known_at,
        )
    # Every version on the timelines the episodes asserted on: rule 1 reads those citing
    # them, rule 2 the values all of them held.
    around = store.facts_sourced_by(tenant_id=tenant_id, episode_ids=ids, known_at=window.known_at)
    sourced = [f for f in around if wanted.intersection(f.sources)]
    current = {f.fact_id for f in sourced if valid_at(f, window.as_of)}
    stale = {src for f in sourced if f.fact_id not in current for src in f.sources if src in wanted}
    # A single-valued timeline is all of its (subject, predicate); a many-valued one is one
    # object of it, so its pair is read in full below.
    covered = {(f.subject, f.predicate) for f in around if f.cardinality == Cardinality.ONE}
    pairs = sorted({(f.subject, f.predicate) for f in facts} - covered)
    versions = list(around)
    if pairs:
        versions += store.timeline_versions(
            tenant_id=tenant_id, pairs=pairs, known_at=window.known_at
        )
    old = stale_values(versions, window.as_of)
    if old:
        states_old_value = mentioning_any(old)
        for i in ids:
            if i not in stale and states_old_value(episodes[i].text()):
                stale.add(i)
    return stale


__all__ = ["stale_episodes", "stale_values", "valid_at", "value_text"]
