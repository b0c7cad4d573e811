"""The one prompt of the LLM extractor: instructions, the schema, the episode, known state.

Known state is the smallest slice that helps: the entities the episode likely mentions and
their current facts, so the model reuses ids and does not restate what is recorded. It
is data in the user message, never instructions.
"""

from __future__ import annotations

import json
from typing import Any

from extraction.models import ExtractionRequest
from graph.schema import MemorySchema, PredicateSpec
from graph.timeutil import format_instant

SYSTEM = """\
You extract memory facts from one episode (a message, document, tool result or event) \
for a temporal knowledge graph.
Answer with one JSON object {"facts": [...]} and nothing else; {"facts": []} when the \
episode states no fact.
Each fact: subject (an entity id: reuse a known entity's id when the episode refers to it, \
else a short lowercase id such as "mira"), subject_type, predicate, and either value (a \
literal) or object and object_type (another entity, for relations), never both.
valid_from: null unless the episode says when the fact became true (null means: when the \
episode occurred). valid_to: null unless the episode says when it stops being true.
confidence between 0 and 1; evidence: the words of the episode that state the fact.
State only what the episode says; do not repeat a known fact unless the episode changes it.
{schema}"""


def _describe(p: PredicateSpec) -> str:
    target = f"-> {p.object_type} (relation)" if p.is_relation else f"= {p.value_type}"
    line = f"- {p.name} {target}, cardinality {p.effective_cardinality}"
    if p.subject_types:
        line += f", subject one of {p.subject_types}"
    if p.description:
        line += f": {p.description}"
    return line


def schema_text(schema: MemorySchema) -> str:
    types = sorted(schema.entity_type_names())
    lines = [f"Entity types: {', '.join(types)}."]
    if schema.predicates:
        lines.append("Predicates:")
        lines += [_describe(p) for p in schema.predicates]
    if schema.strict:
        lines.append("Use only these predicates and entity types.")
    else:
        lines.append("Other snake_case predicates are allowed when none of these fits.")
    return "\n".join(lines)


def user_payload(request: ExtractionRequest) -> dict[str, Any]:
    ep = request.episode
    facts: list[dict[str, Any]] = []
    for f in request.known_facts:
        item: dict[str, Any] = {"subject": f.subject, "predicate": f.predicate}
        if f.object is not None:
            item["object"] = f.object
        else:
            item["value"] = f.value
        item["valid_from"] = format_instant(f.valid_from)
        facts.append(item)
    return {
        "episode": {
            "episode_id": ep.episode_id,
            "kind": ep.kind.value,
            "source": ep.source,
            "session_id": ep.session_id,
            "occurred_at": format_instant(ep.occurred_at),
            "metadata": ep.metadata,
            "content": ep.content,
        },
        "known_entities": [
            {"id": e.entity_id, "type": e.entity_type, "name": e.name, "aliases": e.aliases}
            for e in request.known_entities
        ],
        "known_facts": facts,
    }


def messages(request: ExtractionRequest) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM.replace("{schema}", schema_text(request.schema))},
        {"role": "user", "content": json.dumps(user_payload(request), ensure_ascii=False)},
    ]
