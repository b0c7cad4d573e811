"""The smallest cited context for a question: exact state first, then search fills in.

1. Resolve the question to exact state: the entities it names (fulltext over names and
   aliases, checked word by word against the question) and, among the predicates those
   entities hold in the window, the ones the question asks about (word overlap with the
   predicate's name, else closeness in meaning). The ledger's facts for those
   (subject, predicate) pairs at ``as_of`` answer first.
2. Hybrid search fills the rest, within ``max_facts`` and ``max_tokens``.
3. Every fact line cites its source episode; quoted episodes are the sources of the exact
   facts, then the search's episodes, minus any stating a value not valid in the window.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from graph.embeddings import EmbeddingUnavailableError
from graph.errors import invalid
from graph.model import Episode, Fact, FactQuery
from graph.retrieval.port import Hit, ItemKind, Window
from graph.retrieval.search import Retriever, check_query
from graph.retrieval.stale import stale_episodes
from graph.retrieval.text import estimate_tokens, stems, terms, words
from graph.timeutil import format_instant

MAX_FACTS = 100
MAX_TOKENS = 20_000
# A predicate is what the question asks about when half its words are in the question, or
# failing that, when its words are this close in meaning to the question without the
# entity's name (names dominate a short sentence's embedding) and clearly closer than the
# next predicate.
MIN_OVERLAP = 0.5
MIN_COSINE = 0.5
MIN_MARGIN = 0.1
# Search fills the context only with what scores at least this share of its best result:
# the smallest context, not max_facts of anything.
FILL_MIN_SHARE = 0.5
SUBJECT_FACTS = 500  # facts of one entity read when resolving
MIN_EPISODE_TOKENS = 24  # no point quoting less of an episode than this


@dataclass
class Context:
    facts: list[Fact]
    episodes: list[Episode]
    text: str
    exact: list[Fact] = field(default_factory=list)  # the facts resolved as exact state
    tokens: int = 0


@dataclass(frozen=True)
class Resolution:
    entities: list[str]
    predicates: list[tuple[str, str]]  # (entity id, predicate), best first
    facts: list[Fact]


def _name_words(name: str) -> set[str]:
    return set(words(name))


class ContextBuilder:
    def __init__(self, retriever: Retriever) -> None:
        self.r = retriever
        self.store = retriever.store
        self.search_index = retriever.search_index

    # -- 1. exact state --------------------------------------------------------------------
    def named_entities(self, *, tenant_id: str, question: str, window: Window) -> list[str]:
        """Entities whose id, name or an alias is written in the question, best first."""
        q = set(words(question))
        hits: list[Hit] = self.search_index.fulltext(
            tenant_id=tenant_id,
            kind=ItemKind.ENTITY,
            terms=terms(question),
            window=window,
            limit=20,
        )
        ents = self.search_index.entities_by_id(
            tenant_id=tenant_id, entity_ids=[h.item_id for h in hits], known_at=window.known_at
        )
        full: list[str] = []
        partial: list[str] = []
        for h in hits:
            e = ents.get(h.item_id)
            if e is None:
                continue
            names = [e.entity_id, e.name, *e.aliases]
            if any(_name_words(n) and _name_words(n) <= q for n in names):
                full.append(e.entity_id)
            elif any(_name_words(n) & q for n in names):
                partial.append(e.entity_id)
        return (full or partial)[:3]

    def resolve(self, *, tenant_id: str, question: str, window: Window) -> Resolution:
        entities = self.named_entities(tenant_id=tenant_id, question=question, window=window)
        if not entities:
            return Resolution([], [], [])
        q_stems = stems(question)
        held: dict[tuple[str, str], list[Fact]] = {}
        for ent in entities:
            w = {"as_of": window.as_of, "known_at": window.known_at, "limit": SUBJECT_FACTS}
            for q in (FactQuery(subject=ent, **w), FactQuery(object=ent, **w)):
                for f in self.store.facts(tenant_id=tenant_id, query=q):
                    held.setdefault((ent, f.predicate), []).append(f)
        if not held:
            return Resolution(entities, [], [])
        keys = sorted(held)
        overlap: dict[tuple[str, str], float] = {}
        for key in keys:
            p = stems(key[1].replace("_", " "))
            overlap[key] = len(p & q_stems) / len(p) if p else 0.0
        best = max(overlap.values())
        if best >= MIN_OVERLAP:
            chosen = [k for k in keys if overlap[k] == best]
        else:
            chosen = self._closest(tenant_id, window, question, entities, keys)
        facts = [f for k in chosen for f in held[k]]
        return Resolution(entities, chosen, facts)

    def _closest(
        self,
        tenant_id: str,
        window: Window,
        question: str,
        entities: list[str],
        keys: list[tuple[str, str]],
    ) -> list[tuple[str, str]]:
        names: set[str] = set()
        ents = self.search_index.entities_by_id(
            tenant_id=tenant_id, entity_ids=entities, known_at=window.known_at
        )
        for e in ents.values():
            for n in (e.entity_id, e.name, *e.aliases):
                names |= set(words(n))
        asked = " ".join(w for w in words(question) if w not in names)
        preds = sorted({p for _, p in keys})
        if not asked or not preds:
            return []
        try:
            vecs = self.r.embedder.encode([asked, *(p.replace("_", " ") for p in preds)])
        except EmbeddingUnavailableError:
            return []  # no model: the question's words and entities still resolve
        sims = sorted(zip((vecs[1:] @ vecs[0]).tolist(), preds, strict=True), reverse=True)
        best, pred = sims[0]
        runner_up = sims[1][0] if len(sims) > 1 else -1.0
        if best < MIN_COSINE or best - runner_up < MIN_MARGIN:
            return []
        return [k for k in keys if k[1] == pred]

    # -- 2 and 3. fill and render ---------------------------------------------------------
    def build(
        self,
        *,
        tenant_id: str,
        question: str,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        max_facts: int = 20,
        max_tokens: int = 1500,
    ) -> Context:
        check_query(question, field="question")
        if not 0 <= max_facts <= MAX_FACTS:
            raise invalid(f"max_facts must be between 0 and {MAX_FACTS}", field="max_facts")
        if not 1 <= max_tokens <= MAX_TOKENS:
            raise invalid(f"max_tokens must be between 1 and {MAX_TOKENS}", field="max_tokens")
        window = self.r.window(as_of, known_at)
        exact = self.resolve(tenant_id=tenant_id, question=question, window=window).facts
        found = self.r.search(
            tenant_id=tenant_id,
            query=question,
            as_of=window.as_of,
            known_at=window.known_at,
            limit=min(100, max(10, 2 * max_facts)),
        )
        top = found[0].score if found else 0.0
        found = [x for x in found if x.score >= FILL_MIN_SHARE * top]
        facts: list[Fact] = []
        seen: set[str] = set()
        for f in [*exact, *(x.item for x in found if isinstance(x.item, Fact))]:
            if f.fact_id not in seen:
                seen.add(f.fact_id)
                facts.append(f)
        # Quote sources of the exact answer first, then what search found.
        source_ids = [s for f in exact for s in f.sources]
        sources = self.search_index.episodes_by_id(
            tenant_id=tenant_id, episode_ids=source_ids, known_at=window.known_at
        )
        episodes: list[Episode] = []
        for ep in [
            *(sources[i] for i in source_ids if i in sources),
            *(x.item for x in found if isinstance(x.item, Episode)),
        ]:
            if ep.episode_id not in {e.episode_id for e in episodes}:
                episodes.append(ep)
        return self._fit(tenant_id, window, exact, facts, episodes, max_facts, max_tokens)

    def _fit(
        self,
        tenant_id: str,
        window: Window,
        exact: list[Fact],
        facts: list[Fact],
        episodes: list[Episode],
        max_facts: int,
        max_tokens: int,
    ) -> Context:
        header = f"Facts valid at {format_instant(window.as_of)}"
        if window.known_at != window.as_of:
            header += f", as known at {format_instant(window.known_at)}"
        lines = [header + ":"]
        used = estimate_tokens(lines[0])
        kept: list[Fact] = []
        for f in facts[:max_facts]:
            line = fact_line(f)
            cost = estimate_tokens(line)
            if used + cost > max_tokens:
                break
            lines.append(line)
            kept.append(f)
            used += cost
        stale = stale_episodes(
            self.search_index,
            tenant_id=tenant_id,
            window=window,
            episode_ids=[e.episode_id for e in episodes],
            episodes={e.episode_id: e for e in episodes},
            facts=kept,
        )
        quoted: list[Episode] = []
        ep_header = "Episodes:"
        for ep in episodes:
            if ep.episode_id in stale:
                continue
            line = episode_line(ep)
            cost = estimate_tokens(line) + (0 if quoted else estimate_tokens(ep_header))
            if used + cost > max_tokens:
                room = max_tokens - used - (0 if quoted else estimate_tokens(ep_header))
                if room < MIN_EPISODE_TOKENS:
                    break
                line = line[: 4 * room - 1].rstrip() + "…"
                cost = estimate_tokens(line) + (0 if quoted else estimate_tokens(ep_header))
            if not quoted:
                lines.append(ep_header)
            lines.append(line)
            quoted.append(ep)
            used += cost
        text = "\n".join(lines) if kept or quoted else ""
        return Context(
            facts=kept,
            episodes=quoted,
            text=text,
            exact=[f for f in exact if f in kept],
            tokens=estimate_tokens(text) if text else 0,
        )


def fact_line(f: Fact) -> str:
    what = f.object if f.object is not None else f.value
    since = format_instant(f.valid_from)
    until = f" until {format_instant(f.valid_to)}" if f.valid_to else ""
    src = ", ".join(f.sources) or f.source_episode_id or "none"
    return f"- {f.subject} {f.predicate}: {what} (valid from {since}{until}; source: {src})"


def episode_line(e: Episode) -> str:
    text = " ".join(e.text().split())
    return f"- [{e.episode_id}, {format_instant(e.occurred_at)}] {text}"


__all__ = ["Context", "ContextBuilder", "Resolution", "episode_line", "fact_line"]
