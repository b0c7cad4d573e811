"""The smallest slice of current state worth showing the model for one episode.

Entities the episode names (an id, name or alias found in its text, compared in
normalised form) and those its session mentioned most recently (so "my deadline" in a
chat can be tied to the person the session is about), then their current facts, capped.
"""

from __future__ import annotations

from collections.abc import Sequence

from extraction.resolution import normalise
from extraction.settings import ExtractionSettings
from graph.model import Entity, Episode, Fact
from graph.queue import QueueStore
from graph.service import MemoryService

MAX_ENTITIES = 20
SESSION_ENTITIES = 5
FACTS_PER_ENTITY = 10


def mentioned(catalog: Sequence[Entity], text: str) -> list[Entity]:
    """Entities whose normalised id, name or alias occurs in the text as whole words."""
    hay = f" {normalise(text)} "
    found: list[Entity] = []
    for e in catalog:
        names = {normalise(e.entity_id), normalise(e.name), *map(normalise, e.aliases)}
        if any(n and f" {n} " in hay for n in names):
            found.append(e)
    return found


def known_state(
    service: MemoryService,
    queue: QueueStore,
    episode: Episode,
    settings: ExtractionSettings,
    catalog: Sequence[Entity],
) -> tuple[list[Entity], list[Fact]]:
    tenant = episode.tenant_id
    if settings.prompt_max_facts == 0:
        return [], []
    entities = mentioned(catalog, episode.text())
    if episode.session_id is not None:
        by_id = {e.entity_id: e for e in catalog}
        recent = queue.session_entities(
            tenant_id=tenant, session_id=episode.session_id, limit=SESSION_ENTITIES
        )
        entities += [by_id[i] for i in recent if i in by_id and by_id[i] not in entities]
    entities = entities[:MAX_ENTITIES]
    facts: list[Fact] = []
    for e in entities:
        room = settings.prompt_max_facts - len(facts)
        if room <= 0:
            break
        facts += service.facts(
            tenant_id=tenant, subject=e.entity_id, limit=min(room, FACTS_PER_ENTITY)
        )
    return entities, facts
