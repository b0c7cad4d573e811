"""The tenant's memory schema as a JSON Schema for structured output.

One variant per declared predicate (its value type, or its object type for relations),
plus a free-form variant when the schema is permissive. Written for OpenAI's strict mode,
which vLLM, Ollama and llama.cpp also accept: every object lists all its properties as
required (optional ones are nullable) and forbids additional properties.
"""

from __future__ import annotations

from typing import Any

from graph.model import PREDICATE_RE, ValueType
from graph.schema import MemorySchema, PredicateSpec

SCHEMA_NAME = "sgam_memory_delta"

_VALUE: dict[ValueType, dict[str, Any]] = {
    ValueType.STRING: {"type": "string"},
    ValueType.NUMBER: {"type": "number"},
    ValueType.BOOLEAN: {"type": "boolean"},
    ValueType.DATE: {
        "type": "string",
        "pattern": r"^\d{4}-\d{2}-\d{2}$",
        "description": "a calendar date, YYYY-MM-DD",
    },
    ValueType.DATETIME: {
        "type": "string",
        "description": "an RFC 3339 timestamp with its UTC offset, e.g. 2026-07-15T09:00:00Z",
    },
}
_NULL: dict[str, Any] = {"type": "null"}
_WHEN = {
    "type": ["string", "null"],
    "description": "RFC 3339 with offset; null: when the episode occurred",
}


def _nullable_enum(names: list[str]) -> dict[str, Any]:
    return {"type": ["string", "null"], "enum": [*names, None]}


def _item(properties: dict[str, Any], description: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    if description:
        out["description"] = description
    return out


def _common(subject_type: dict[str, Any]) -> dict[str, Any]:
    return {
        "subject": {
            "type": "string",
            "description": "id of the entity the fact is about; reuse known ids",
        },
        "subject_type": subject_type,
    }


def _tail() -> dict[str, Any]:
    return {
        "valid_from": _WHEN,
        "valid_to": {**_WHEN, "description": "RFC 3339 with offset; null: open-ended"},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "evidence": {
            "type": ["string", "null"],
            "description": "the words of the episode that state the fact",
        },
    }


def predicate_variant(schema: MemorySchema, p: PredicateSpec) -> dict[str, Any]:
    subject_types = p.subject_types or sorted(schema.entity_type_names())
    props = _common(_nullable_enum(list(subject_types)))
    props["predicate"] = {"type": "string", "enum": [p.name]}
    if p.is_relation:
        assert p.object_type is not None
        props["value"] = _NULL
        props["object"] = {"type": "string", "description": f"id of the {p.object_type}"}
        props["object_type"] = {"type": "string", "enum": [p.object_type]}
    else:
        assert p.value_type is not None
        props["value"] = _VALUE[p.value_type]
        props["object"] = _NULL
        props["object_type"] = _NULL
    return _item({**props, **_tail()}, p.description)


def free_variant(schema: MemorySchema) -> dict[str, Any]:
    """Any snake_case predicate: a literal ``value`` or an entity ``object``."""
    types = sorted(schema.entity_type_names())
    props = _common({"type": ["string", "null"]})
    props["predicate"] = {"type": "string", "pattern": PREDICATE_RE}
    props["value"] = {"type": ["string", "number", "boolean", "null"]}
    props["object"] = {"type": ["string", "null"], "description": "entity id, for relations"}
    props["object_type"] = {"type": ["string", "null"]}
    if len(types) > 1:  # more than the generic "Entity": name the known types
        props["subject_type"] = {**props["subject_type"], "description": f"one of {types}"}
    return _item({**props, **_tail()}, "a fact with a predicate not declared in the schema")


def answer_schema(schema: MemorySchema) -> dict[str, Any]:
    """The JSON Schema of the model's answer ``{"facts": [...]}``."""
    variants = [predicate_variant(schema, p) for p in schema.predicates]
    if not schema.strict or not variants:
        variants.append(free_variant(schema))
    items = variants[0] if len(variants) == 1 else {"anyOf": variants}
    return {
        "type": "object",
        "properties": {"facts": {"type": "array", "items": items}},
        "required": ["facts"],
        "additionalProperties": False,
    }


def response_format(schema: MemorySchema) -> dict[str, Any]:
    """The ``response_format`` member of a chat-completions request."""
    return {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": answer_schema(schema)},
    }
