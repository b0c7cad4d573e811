"""Entity resolution for model-proposed names.

- The same normalised name (case, accents' composed forms, spaces, ``_ - .``) as an
  existing entity's id, name or alias → that entity: "Mira", "mira" and "MIRA " are one.
- Otherwise a new entity. When its name is close to an existing entity's of the same type
  (string similarity ≥ the threshold) the pair is recorded as a *merge candidate* for
  review: near-duplicates are never merged silently, because "Ana" and "Anna" may well
  be two people.

Only model output is resolved. Event mappers and clients name entities by their ids, and
business ids such as ``acct-1`` / ``acct-7`` are near-identical strings by design.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import lru_cache

from graph.model import DEFAULT_ENTITY_TYPE, Entity, MemoryDelta, new_id
from graph.queue import MergeCandidate
from graph.timeutil import utcnow

_SEPARATORS = re.compile(r"[\s_\-.]+")
_PUNCTUATION = re.compile(r"[^\w ]+")


@lru_cache(maxsize=65536)  # the same catalog names are normalised for every episode
def normalise(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _SEPARATORS.sub(" ", text)
    return " ".join(_PUNCTUATION.sub("", text).split())


def similarity(a: str, b: str) -> float:
    """Similarity of two normalised names in [0, 1]."""
    return SequenceMatcher(None, a, b).ratio()


def similar(a: str, b: str, threshold: float) -> float | None:
    """The similarity if it reaches ``threshold``; cheap upper bounds rule most pairs out
    first, since every new name is compared with every entity of its type."""
    m = SequenceMatcher(None, a, b)
    if m.real_quick_ratio() < threshold or m.quick_ratio() < threshold:
        return None
    score = m.ratio()
    return score if score >= threshold else None


def _compatible(wanted: str | None, have: str) -> bool:
    """A type-less mention or a generic entity fits any type; otherwise types must match."""
    return wanted is None or wanted == have or DEFAULT_ENTITY_TYPE in (wanted, have)


@dataclass
class Resolution:
    deltas: list[MemoryDelta]
    renamed: dict[str, str] = field(default_factory=dict)  # proposed name → entity id
    merge_candidates: list[MergeCandidate] = field(default_factory=list)


class EntityResolver:
    def __init__(self, *, threshold: float) -> None:
        self.threshold = threshold

    def resolve(
        self,
        *,
        tenant_id: str,
        episode_id: str,
        deltas: Sequence[MemoryDelta],
        catalog: Sequence[Entity],
    ) -> Resolution:
        """Resolve against ``catalog``: the tenant's entities (``QueueStore.entity_catalog``)."""
        by_id = {e.entity_id: e for e in catalog}
        by_alias: dict[str, list[Entity]] = {}
        by_name: dict[str, list[Entity]] = {}
        for e in catalog:
            for n in {normalise(a) for a in e.aliases}:
                by_alias.setdefault(n, []).append(e)
            for n in {normalise(e.entity_id), normalise(e.name)}:
                by_name.setdefault(n, []).append(e)

        out = Resolution(deltas=[])
        new_names: dict[str, str] = {}  # normalised → first spelling seen in this batch
        merges: dict[tuple[str, str], MergeCandidate] = {}

        def pick(found: list[Entity], etype: str | None) -> Entity | None:
            fits = [e for e in found if _compatible(etype, e.entity_type)]
            fits.sort(key=lambda e: e.entity_type != etype)  # exactly this type first
            return fits[0] if fits else None

        def resolve_one(name: str, etype: str | None) -> str:
            norm = normalise(name)
            # An alias was recorded by accepting a merge: the name means that entity,
            # even where a duplicate under the name itself exists.
            hit = pick(by_alias.get(norm, []), etype)
            if hit is None and name in by_id:
                return name
            hit = hit or pick(by_name.get(norm, []), etype)
            if hit is not None:
                if hit.entity_id != name:
                    out.renamed[name] = hit.entity_id
                return hit.entity_id
            first = new_names.setdefault(norm, name)
            if first != name:
                out.renamed[name] = first
            if etype is not None and etype != DEFAULT_ENTITY_TYPE:
                for e in catalog:
                    if e.entity_type != etype or (first, e.entity_id) in merges:
                        continue
                    score = similar(norm, normalise(e.name), self.threshold)
                    if score is not None:
                        merges[(first, e.entity_id)] = MergeCandidate(
                            tenant_id=tenant_id,
                            candidate_id=new_id("mc"),
                            entity_id=first,
                            name=name,
                            existing_entity_id=e.entity_id,
                            entity_type=etype,
                            similarity=round(score, 4),
                            episode_id=episode_id,
                            created_at=utcnow(),
                        )
            return first

        for d in deltas:
            update: dict[str, str] = {"subject": resolve_one(d.subject, d.subject_type)}
            if d.object is not None:
                update["object"] = resolve_one(d.object, d.object_type)
            out.deltas.append(d.model_copy(update=update))
        out.merge_candidates = list(merges.values())
        return out
