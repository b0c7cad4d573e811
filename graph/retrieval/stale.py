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
from typing import Any

from graph.model import Episode, Fact
from graph.retrieval.port import HeldVersion, SearchPort, Window
from graph.retrieval.text import STOPWORDS, mentioning_any


def said_text(v: Any) -> str | None:
    """How a value (or an object's id) would be written in text; None when it cannot be
    told apart from ordinary words (booleans, one-letter values, stopwords)."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    s = str(v).strip()
    if len(s) < 2 or s.lower() in STOPWORDS:
        return None
    return s


def stale_values(versions: Iterable[HeldVersion]) -> set[str]:
    """Per (subject, predicate): values held at some time but not in the window."""
    held: dict[tuple[str, str], set[str]] = {}
    now: dict[tuple[str, str], set[str]] = {}
    for v in versions:
        text = said_text(v.said)
        if text is None:
            continue
        key = (v.subject, v.predicate)
        held.setdefault(key, set()).add(text)
        if v.now:
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
    episodes' records are read from ``episodes`` only after the versions: a gathered
    search loads them with those."""
    if not episode_ids:
        return set()
    ids = list(episode_ids)
    wanted = set(ids)
    held = store.staleness_versions(
        tenant_id=tenant_id,
        episode_ids=ids,
        pairs=sorted({(f.subject, f.predicate) for f in facts}),
        window=window,
    )
    # Rule 1 reads the versions citing the episodes; rule 2 the values all of them held,
    # and those of the page's pairs.
    sourced = [v for v in held.around if wanted.intersection(v.sources)]
    current = {v.fact_id for v in sourced if v.now}
    stale = {src for v in sourced if v.fact_id not in current for src in v.sources if src in wanted}
    old = stale_values(held.around + held.pairs)
    if old:
        states_old_value = mentioning_any(old)
        for i in ids:
            if i not in stale and states_old_value(episodes[i].text()):
                stale.add(i)
    return stale


__all__ = ["said_text", "stale_episodes", "stale_values"]
