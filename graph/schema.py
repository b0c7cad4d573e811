"""Tenant memory schemas: which entity types and predicates exist, and how values are typed.

The permissive default (API.md) accepts any snake_case predicate: literal-valued predicates
are single-valued, entity-valued ones many-valued. A strict schema refuses the unknown.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections import Counter, OrderedDict
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
    field_validator,
    model_validator,
)

from graph.durations import check_retention
from graph.errors import ItemError
from graph.model import (
    DEFAULT_ENTITY_TYPE,
    DEFAULT_MEMORY_TYPE,
    DEFAULT_RETENTION,
    INT64_MAX,
    INT64_MIN,
    Cardinality,
    MemoryDelta,
    Predicate,
    Scalar,
    TypeName,
    ValueType,
    depth_problem,
    reserved_type_problem,
)
from graph.timeutil import format_instant

_INTEGER_RE = re.compile(r"[+-]?\d+")
_DECIMAL_RE = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$")
LITERAL_TYPES = (
    ValueType.STRING,
    ValueType.NUMBER,
    ValueType.BOOLEAN,
    ValueType.DATE,
    ValueType.DATETIME,
)


# Schema size limits: the schema is consulted on every write and turned into the JSON
# schema of every extraction call; past these it is a 422 naming the limit.
MAX_PREDICATES = 1000
MAX_ENTITY_TYPES = 500
MAX_EVENT_MAPPINGS = 200
MAX_SUBJECT_TYPES = 64


def _at_most(limit: int, what: str) -> Any:
    """A before-validator refusing a list longer than ``limit`` before its items are
    validated, so an oversized schema costs nothing to refuse."""

    def check(v: Any) -> Any:
        if isinstance(v, list | tuple) and len(v) > limit:
            raise ValueError(f"at most {limit} {what} (the limit), got {len(v)}")
        return v

    return BeforeValidator(check)


class EntityTypeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: TypeName
    description: str | None = None


class PredicateSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Predicate
    value_type: ValueType | None = None  # a literal type, or None with object_type set
    object_type: TypeName | None = None  # entity type of the object for relations
    subject_types: Annotated[
        list[TypeName] | None, _at_most(MAX_SUBJECT_TYPES, "subject types")
    ] = None
    cardinality: Cardinality | None = None
    memory_type: str = DEFAULT_MEMORY_TYPE
    # keep, a label of your own (kept like keep), or an ISO-8601 duration (graph.retention).
    retention: Annotated[str, AfterValidator(check_retention), Field(max_length=64)] = (
        DEFAULT_RETENTION
    )
    description: str | None = None
    # Write-path policy (extraction): hold candidates until confirmed, or until seen N times.
    # Strict, as every number and boolean of a request body: "false" is a 422, not False.
    requires_confirmation: StrictBool = False
    min_support: StrictInt = Field(default=1, ge=1)

    @model_validator(mode="after")
    def _one_kind(self) -> PredicateSpec:
        if (self.value_type is None) == (self.object_type is None):
            raise ValueError(f"predicate {self.name}: set exactly one of value_type, object_type")
        if self.value_type == ValueType.ENTITY:
            raise ValueError(f"predicate {self.name}: use object_type for entity-valued predicates")
        return self

    @property
    def is_relation(self) -> bool:
        return self.object_type is not None

    @property
    def effective_cardinality(self) -> Cardinality:
        if self.cardinality is not None:
            return self.cardinality
        return Cardinality.MANY if self.is_relation else Cardinality.ONE


class MemorySchema(BaseModel):
    # Frozen: a parsed schema is shared by every reader of its version.
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: StrictInt = Field(default=0, ge=0)
    mode: Literal["strict", "permissive"] = "permissive"
    entity_types: Annotated[list[EntityTypeSpec], _at_most(MAX_ENTITY_TYPES, "entity types")] = (
        Field(default_factory=list)
    )
    predicates: Annotated[list[PredicateSpec], _at_most(MAX_PREDICATES, "predicates")] = Field(
        default_factory=list
    )
    # Episodes that occurred longer ago than this are deleted by the purge (graph.retention).
    episode_retention: Annotated[str, AfterValidator(check_retention), Field(max_length=64)] = (
        DEFAULT_RETENTION
    )
    # Deterministic mapping of JSON events to facts (extraction); shape checked there.
    event_mappings: Annotated[
        list[dict[str, Any]], _at_most(MAX_EVENT_MAPPINGS, "event mappings")
    ] = Field(default_factory=list)
    # Lookups by name, built once per schema object (schema_from_json keeps one object per
    # stored version), each beside the list it was built from: a model_copy that replaces
    # the list gets new lookups.
    _by_name: tuple[list[PredicateSpec], dict[str, PredicateSpec]] | None = PrivateAttr(None)
    _type_names: tuple[list[EntityTypeSpec], frozenset[str]] | None = PrivateAttr(None)

    @field_validator("event_mappings", mode="before")
    @classmethod
    def _mappings_not_too_deep(cls, v: Any) -> Any:
        if isinstance(v, list):
            for i, m in enumerate(v):
                problem = depth_problem(m)
                if problem is not None:
                    raise ValueError(f"event mapping {i} {problem}")
        return v

    @model_validator(mode="after")
    def _unique_names(self) -> MemorySchema:
        # Linear: one count per name (a list.count per name was quadratic).
        for kind, names in (
            ("entity type", [t.name for t in self.entity_types]),
            ("predicate", [p.name for p in self.predicates]),
        ):
            dup = sorted(n for n, k in Counter(names).items() if k > 1)
            if dup:
                raise ValueError(f"duplicate {kind} names: {dup[:20]}")
        if self.mode == "strict":
            known = self.entity_type_names()
            for p in self.predicates:
                for t in [p.object_type, *(p.subject_types or [])]:
                    if t is not None and t not in known:
                        raise ValueError(f"predicate {p.name} names unknown entity type {t}")
        return self

    @property
    def strict(self) -> bool:
        return self.mode == "strict"

    # Both run once per delta of a batch: the caches are read from the private-attribute
    # dict directly, since pydantic's attribute lookup for private names cost more than
    # the check that uses them.
    def predicate(self, name: str) -> PredicateSpec | None:
        by_name: tuple[list[PredicateSpec], dict[str, PredicateSpec]] | None
        by_name = self.__pydantic_private__["_by_name"]  # type: ignore[index]
        if by_name is None or by_name[0] is not self.predicates:
            by_name = self._by_name = (self.predicates, {p.name: p for p in self.predicates})
        return by_name[1].get(name)

    def entity_type_names(self) -> frozenset[str]:
        type_names: tuple[list[EntityTypeSpec], frozenset[str]] | None
        type_names = self.__pydantic_private__["_type_names"]  # type: ignore[index]
        if type_names is None or type_names[0] is not self.entity_types:
            names = frozenset(t.name for t in self.entity_types) | {DEFAULT_ENTITY_TYPE}
            type_names = self._type_names = (self.entity_types, names)
        return type_names[1]


PERMISSIVE = MemorySchema()


def reserved_type_errors(schema: MemorySchema) -> list[ItemError]:
    """Every place a schema names a reserved entity type (see
    :data:`graph.model.RESERVED_TYPE_NAMES`). Checked when a schema is put, not when a
    stored one is read: a tenant's stored schema must stay readable."""
    errs: list[ItemError] = []
    for i, spec in enumerate(schema.entity_types):
        if (why := reserved_type_problem(spec.name, declared=True)) is not None:
            errs.append(ItemError(reason=why, field=f"entity_types.{i}.name"))
    for i, p in enumerate(schema.predicates):
        named = [("object_type", p.object_type)]
        named += [(f"subject_types.{j}", t) for j, t in enumerate(p.subject_types or [])]
        for field, t in named:
            if t is not None and (why := reserved_type_problem(t)) is not None:
                errs.append(ItemError(reason=why, field=f"predicates.{i}.{field}"))
    return errs


_PARSED: OrderedDict[bytes, MemorySchema] = OrderedDict()
_PARSED_MAX = 64
_parsed_lock = threading.Lock()


def schema_from_json(text: str | bytes) -> MemorySchema:
    """A stored schema, parsed once per stored version and process.

    Every write consults its tenant's schema; re-validating a large one each time made
    every write of that tenant slow. A stored version never changes, so its text (which
    holds the version) keys the parsed schema and its lookups. The schema returned is
    shared: callers never modify one (``model_copy`` gives a new one).
    """
    raw = text.encode() if isinstance(text, str) else text
    key = hashlib.blake2b(raw, digest_size=16).digest()
    with _parsed_lock:
        hit = _PARSED.get(key)
        if hit is not None:
            _PARSED.move_to_end(key)
            return hit
    schema = MemorySchema.model_validate_json(raw)
    schema.predicate("")  # build the lookups once, before the schema is shared
    schema.entity_type_names()
    with _parsed_lock:
        _PARSED[key] = schema
        while len(_PARSED) > _PARSED_MAX:
            _PARSED.popitem(last=False)
    return schema


def load_schema(path: str | Path) -> MemorySchema:
    """Read a schema from a YAML or JSON file (JSON is YAML, so one parser serves both)."""
    text = Path(path).read_text(encoding="utf-8")
    data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    return MemorySchema.model_validate(data)


class CheckedFact(BaseModel):
    """A delta after schema validation: typed value, resolved cardinality and defaults."""

    subject: str
    subject_type: str | None  # None: keep whatever the entity already is
    predicate: str
    value: Scalar | None
    value_type: ValueType
    object: str | None
    object_type: str | None
    valid_from: datetime
    valid_to: datetime | None
    source_episode_id: str
    confidence: float
    memory_type: str
    retention_policy: str
    cardinality: Cardinality
    schema_version: int


def check_delta(
    schema: MemorySchema,
    delta: MemoryDelta,
    *,
    index: int | None,
    default_valid_from: datetime | None,
) -> CheckedFact | list[ItemError]:
    """Validate one delta against the schema; return the typed fact or every reason it fails."""
    errs: list[ItemError] = []

    def err(reason: str, field: str) -> None:
        errs.append(ItemError(reason=reason, field=field, index=index))

    has_value, has_object = delta.value is not None, delta.object is not None
    if has_value == has_object:
        err("give exactly one of value (a literal) or object (an entity id)", "value")
    spec = schema.predicate(delta.predicate)
    if spec is None and schema.strict:
        err(f"unknown predicate {delta.predicate!r} (schema is strict)", "predicate")
    known_types = schema.entity_type_names()
    for field, t in (("subject_type", delta.subject_type), ("object_type", delta.object_type)):
        if t is not None and (why := reserved_type_problem(t)) is not None:
            err(why, field)
        elif t is not None and schema.strict and t not in known_types:
            err(f"unknown entity type {t!r} (schema is strict)", field)
    if (
        spec is not None
        and spec.subject_types
        and delta.subject_type is not None
        and delta.subject_type not in spec.subject_types
    ):
        err(
            f"{delta.predicate} applies to {spec.subject_types}, not {delta.subject_type}",
            "subject_type",
        )
    if delta.source_episode_id is None:
        err(
            "source_episode_id is required: every fact cites the episode it came from",
            "source_episode_id",
        )
    valid_from = delta.valid_from or default_valid_from
    if valid_from is None:
        err("valid_from is required", "valid_from")
    if valid_from is not None and delta.valid_to is not None and delta.valid_to <= valid_from:
        err("valid_to must be after valid_from", "valid_to")

    value: Scalar | None = None
    value_type = ValueType.ENTITY
    object_type = delta.object_type
    if spec is not None and has_value != has_object:
        if spec.is_relation and has_value:
            err(f"{spec.name} relates to a {spec.object_type}: give object, not value", "value")
        if not spec.is_relation and has_object:
            err(f"{spec.name} takes a {spec.value_type} value, not an object", "object")
        if spec.is_relation and has_object:
            if (
                delta.object_type is not None
                and delta.object_type != spec.object_type
                and spec.object_type != DEFAULT_ENTITY_TYPE
            ):
                err(f"{spec.name} expects object_type {spec.object_type}", "object_type")
            object_type = delta.object_type or spec.object_type
            if (
                delta.object_type is None
                and object_type is not None
                and (why := reserved_type_problem(object_type))
            ):
                err(why, "object_type")  # a schema stored before the name was reserved
    if has_value and not has_object:
        target = spec.value_type if spec is not None and spec.value_type else None
        coerced = coerce_value(delta.value, target)
        if isinstance(coerced, ItemError):
            err(coerced.reason, "value")
        else:
            value, value_type = coerced
    if errs:
        return errs
    assert valid_from is not None
    assert delta.source_episode_id is not None
    if spec is not None:
        cardinality = spec.effective_cardinality
        memory_type = delta.memory_type or spec.memory_type
        retention = delta.retention_policy or spec.retention
    else:
        cardinality = Cardinality.MANY if has_object else Cardinality.ONE
        memory_type = delta.memory_type or DEFAULT_MEMORY_TYPE
        retention = delta.retention_policy or DEFAULT_RETENTION
    return CheckedFact(
        subject=delta.subject,
        subject_type=delta.subject_type,
        predicate=delta.predicate,
        value=value,
        value_type=value_type,
        object=delta.object,
        object_type=object_type,
        valid_from=valid_from,
        valid_to=delta.valid_to,
        source_episode_id=delta.source_episode_id,
        confidence=delta.confidence,
        memory_type=memory_type,
        retention_policy=retention,
        cardinality=cardinality,
        schema_version=schema.version,
    )


def coerce_value(
    raw: Scalar | None, target: ValueType | None
) -> tuple[Scalar, ValueType] | ItemError:
    """Type a literal. With no declared type, infer one; dates stay ISO strings."""
    if raw is None:
        return ItemError(reason="value is missing")
    if target is None:
        if isinstance(raw, bool):
            return raw, ValueType.BOOLEAN
        if isinstance(raw, int | float):
            return raw, ValueType.NUMBER
        if _DATE_RE.fullmatch(raw) and _is_date(raw):
            return raw, ValueType.DATE
        if _DATETIME_RE.fullmatch(raw):
            return raw, ValueType.DATETIME
        return raw, ValueType.STRING
    if target == ValueType.STRING:
        if isinstance(raw, str):
            return raw, target
        return ItemError(reason=f"expected a string, got {type(raw).__name__} {raw!r}")
    if target == ValueType.NUMBER:
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            return raw, target
        if isinstance(raw, str):
            num = parse_number(raw)
            if isinstance(num, str):
                return ItemError(reason=num)
            return num, target
        return ItemError(reason=f"expected a number, got {raw!r}")
    if target == ValueType.BOOLEAN:
        if isinstance(raw, bool):
            return raw, target
        if isinstance(raw, str) and raw.lower() in ("true", "false"):
            return raw.lower() == "true", target
        return ItemError(reason=f"expected a boolean, got {raw!r}")
    if target == ValueType.DATE:
        if isinstance(raw, str) and _DATE_RE.fullmatch(raw) and _is_date(raw):
            return raw, target
        return ItemError(reason=f"expected a date YYYY-MM-DD, got {raw!r}")
    if target == ValueType.DATETIME:
        if isinstance(raw, str) and _DATETIME_RE.fullmatch(raw):
            try:
                parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            except ValueError:
                return ItemError(reason=f"expected an RFC 3339 timestamp, got {raw!r}")
            return format_instant(parsed), target
        return ItemError(reason=f"expected an RFC 3339 timestamp with offset, got {raw!r}")
    return ItemError(reason=f"cannot hold a literal of type {target}")


def parse_number(text: str) -> int | float | str:
    """A number written as text, as both stores hold it, or the reason it is not one.

    An integer literal is an integer and must fit 64 bits (Neo4j packs no more); one
    with a fraction or an exponent is a finite double. No NaN, infinities, underscores
    or spaces: what Python's ``float()`` accepts beyond decimal notation is refused.
    """
    if _INTEGER_RE.fullmatch(text):
        value = int(text)
        if not INT64_MIN <= value <= INT64_MAX:
            return f"{text!r} does not fit a 64-bit integer (write it with an exponent)"
        return value
    if not _DECIMAL_RE.fullmatch(text):
        return f"expected a number, got {text!r}"
    num = float(text)
    if not math.isfinite(num):
        return f"{text!r} is out of the range of a double"
    return num


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True
