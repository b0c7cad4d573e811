"""The deterministic mapper: JSON events and tool results → facts, no model involved.

The tenant's schema says, per event type, which fields become which predicates of which
subject (``MemorySchema.event_mappings``; its shape is :class:`EventMapping`)::

    event_mappings:
      - event_type: customer.account_opened
        subject: {field: customer_id, type: Customer}
        valid_from_field: opened_at          # optional; default: the episode's occurred_at
        facts:
          - {predicate: holds_account, object: {field: account_id, type: Account}}
          - {predicate: account_status, subject: {field: account_id, type: Account},
             value: open}
          - {predicate: segment, value_field: customer.segment, required: false}

Field paths are dotted (``customer.segment``). A missing required field rejects that
candidate with the reason; an optional one is skipped.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic import ValidationError as PydanticValidationError

from extraction.models import ExtractionRequest, NoExtractorError, Proposal, RejectedCandidate
from graph.errors import ItemError, ValidationError
from graph.model import Episode, Predicate, Scalar, TypeName
from graph.schema import MemorySchema

_MISSING = object()


class EntityRef(BaseModel):
    """An entity named by a field of the event."""

    model_config = ConfigDict(extra="forbid")

    field: str = Field(min_length=1)
    type: TypeName | None = None


class FactRule(BaseModel):
    """One predicate filled from the event: a field's value, a constant, or an entity."""

    model_config = ConfigDict(extra="forbid")

    predicate: Predicate
    subject: EntityRef | None = None  # default: the mapping's subject
    value_field: str | None = None
    value: Scalar | None = None
    object: EntityRef | None = None
    required: bool = True
    confidence: float = Field(default=1.0, ge=0, le=1)

    @model_validator(mode="after")
    def _one_source(self) -> FactRule:
        given = [self.value_field is not None, self.value is not None, self.object is not None]
        if sum(given) != 1:
            raise ValueError(f"{self.predicate}: give exactly one of value_field, value, object")
        return self


class EventMapping(BaseModel):
    model_config = ConfigDict(extra="forbid")

    event_type: str = Field(min_length=1)
    type_field: str = "type"  # where the event carries its type
    subject: EntityRef
    valid_from_field: str | None = None
    facts: list[FactRule] = Field(min_length=1)


def parse_mappings(schema: MemorySchema) -> list[EventMapping]:
    """The schema's event mappings, typed and checked against its predicates.

    Raises :class:`~graph.errors.ValidationError` naming each bad mapping (``index``) —
    call it when a schema is stored, so a bad mapping is refused up front.
    """
    out: list[EventMapping] = []
    errors: list[ItemError] = []
    for i, raw in enumerate(schema.event_mappings):
        try:
            m = EventMapping.model_validate(raw)
        except PydanticValidationError as e:
            for err in e.errors():
                where = ".".join(str(p) for p in err["loc"])
                errors.append(
                    ItemError(reason=f"{where}: {err['msg']}", field="event_mappings", index=i)
                )
            continue
        for rule in m.facts:
            spec = schema.predicate(rule.predicate)
            if spec is None:
                if schema.strict:
                    errors.append(
                        _err(i, f"unknown predicate {rule.predicate!r} (schema is strict)")
                    )
                continue
            if spec.is_relation and rule.object is None:
                errors.append(
                    _err(i, f"{rule.predicate} relates to a {spec.object_type}: map object")
                )
            if not spec.is_relation and rule.object is not None:
                errors.append(
                    _err(i, f"{rule.predicate} takes a {spec.value_type} value, not an object")
                )
        out.append(m)
    if errors:
        raise ValidationError(errors)
    return out


def _err(index: int, reason: str) -> ItemError:
    return ItemError(reason=reason, field="event_mappings", index=index)


def get_path(data: Any, path: str) -> Any:
    """``data["a"]["b"]`` for ``"a.b"``; ``_MISSING`` where the path does not lead."""
    cur = data
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return _MISSING
        cur = cur[part]
    return cur


def event_type(episode: Episode, mapping: EventMapping) -> str | None:
    if not isinstance(episode.content, dict):
        return None
    found = get_path(episode.content, mapping.type_field)
    return found if isinstance(found, str) else None


def matching(mappings: list[EventMapping], episode: Episode) -> list[EventMapping]:
    """The mappings that apply to this episode (a JSON object of a mapped type)."""
    return [m for m in mappings if event_type(episode, m) == m.event_type]


def _entity_id(content: dict[str, Any], ref: EntityRef) -> str | None:
    found = get_path(content, ref.field)
    if isinstance(found, bool) or not isinstance(found, str | int) or found == "":
        return None
    return str(found)


class EventMapper:
    """Applies the matching mappings of the tenant's schema to a JSON episode."""

    name = "mapper"
    wants_context = False

    def close(self) -> None:
        return None  # holds nothing

    def extract(self, request: ExtractionRequest) -> Proposal:
        ep = request.episode
        try:
            mappings = parse_mappings(request.schema)
        except ValidationError as e:  # stored before mappings were checked on PUT
            raise NoExtractorError(f"the schema's event mappings are invalid: {e}") from e
        found = matching(mappings, ep)
        if not found or not isinstance(ep.content, dict):
            raise NoExtractorError(f"no event mapping matches episode {ep.episode_id!r}")
        candidates: list[Any] = []
        rejected: list[RejectedCandidate] = []
        for m in found:
            for rule in m.facts:
                item = _apply(ep.content, m, rule)
                if isinstance(item, RejectedCandidate):
                    if rule.required:
                        rejected.append(item)
                else:
                    candidates.append(item)
        return Proposal(extractor=self.name, candidates=candidates, rejected=rejected)


def _apply(
    content: dict[str, Any], m: EventMapping, rule: FactRule
) -> dict[str, Any] | RejectedCandidate:
    def reject(reason: str, field: str) -> RejectedCandidate:
        what = {"event_type": m.event_type, "predicate": rule.predicate}
        return RejectedCandidate(candidate=what, reason=reason, field=field, stage="mapping")

    subject_ref = rule.subject or m.subject
    subject = _entity_id(content, subject_ref)
    if subject is None:
        return reject(f"event field {subject_ref.field!r} holds no entity id", "subject")
    item: dict[str, Any] = {
        "subject": subject,
        "subject_type": subject_ref.type,
        "predicate": rule.predicate,
        "confidence": rule.confidence,
    }
    if rule.object is not None:
        obj = _entity_id(content, rule.object)
        if obj is None:
            return reject(f"event field {rule.object.field!r} holds no entity id", "object")
        item["object"], item["object_type"] = obj, rule.object.type
    elif rule.value_field is not None:
        value = get_path(content, rule.value_field)
        if value is _MISSING or value is None:
            return reject(f"event field {rule.value_field!r} is missing", "value")
        item["value"] = value
    else:
        item["value"] = rule.value
    if m.valid_from_field is not None:
        when = get_path(content, m.valid_from_field)
        if not isinstance(when, str):
            return reject(f"event field {m.valid_from_field!r} holds no timestamp", "valid_from")
        item["valid_from"] = when
    return item


def mapped_event(schema: MemorySchema, episode: Episode) -> bool:
    """Whether the mapper would handle this episode (no model needed)."""
    try:
        return bool(matching(parse_mappings(schema), episode))
    except ValidationError:
        return False
