"""Memory schemas: loading, strictness, typing of values, defaults."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pydantic
import pytest

from graph.errors import ItemError
from graph.model import Cardinality, MemoryDelta, ValueType
from graph.schema import (
    PERMISSIVE,
    MemorySchema,
    PredicateSpec,
    check_delta,
    coerce_value,
    load_schema,
)

T = datetime(2026, 6, 1, tzinfo=UTC)
YAML = """
version: 3
mode: strict
entity_types: [{name: Customer}, {name: Account}, {name: Person}]
predicates:
  - {name: holds_account, object_type: Account, subject_types: [Customer]}
  - {name: passport_deadline, value_type: date, memory_type: profile}
  - {name: tier, value_type: string, retention: 90d}
  - {name: likes, value_type: string, cardinality: many, memory_type: preference}
"""


def delta(**kw: object) -> MemoryDelta:
    base: dict[str, object] = {
        "subject": "x",
        "predicate": "p",
        "value": "v",
        "valid_from": T,
        "source_episode_id": "e1",
    }
    return MemoryDelta.model_validate({**base, **kw})


def test_yaml_and_json_files_load_to_the_same_schema(tmp_path: Path) -> None:
    y = tmp_path / "s.yaml"
    y.write_text(YAML)
    schema = load_schema(y)
    j = tmp_path / "s.json"
    j.write_text(schema.model_dump_json())
    assert load_schema(j) == schema
    assert schema.strict
    rel = schema.predicate("holds_account")
    assert rel is not None
    assert rel.effective_cardinality == Cardinality.MANY
    lit = schema.predicate("passport_deadline")
    assert lit is not None
    assert lit.effective_cardinality == Cardinality.ONE
    likes = schema.predicate("likes")
    assert likes is not None
    assert likes.effective_cardinality == Cardinality.MANY


def test_schema_refuses_contradictions() -> None:
    with pytest.raises(pydantic.ValidationError, match="exactly one of value_type, object_type"):
        PredicateSpec(name="p")
    with pytest.raises(pydantic.ValidationError, match="duplicate predicate"):
        MemorySchema(predicates=[PredicateSpec(name="p", value_type=ValueType.STRING)] * 2)
    with pytest.raises(pydantic.ValidationError, match="unknown entity type Policy"):
        MemorySchema(mode="strict", predicates=[PredicateSpec(name="p", object_type="Policy")])


def test_strict_schema_checks_predicates_types_and_subjects(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(YAML)
    schema = load_schema(tmp_path / "s.yaml")

    def reasons(d: MemoryDelta) -> set[tuple[str | None, str]]:
        out = check_delta(schema, d, index=0, default_valid_from=None)
        assert isinstance(out, list)
        return {(e.field, e.reason) for e in out}

    assert {f for f, _ in reasons(delta(predicate="unknown"))} == {"predicate"}
    assert {f for f, _ in reasons(delta(predicate="tier", subject_type="Martian"))} == {
        "subject_type"
    }
    assert {f for f, _ in reasons(delta(predicate="holds_account", value="acct"))} == {"value"}
    assert {
        f
        for f, _ in reasons(
            delta(predicate="holds_account", value=None, object="a", subject_type="Person")
        )
    } == {"subject_type"}
    assert {f for f, _ in reasons(delta(predicate="passport_deadline", value="soon"))} == {"value"}
    ok = check_delta(
        schema,
        delta(predicate="passport_deadline", value="2026-07-15"),
        index=0,
        default_valid_from=None,
    )
    assert not isinstance(ok, list)
    assert (ok.value_type, ok.memory_type, ok.schema_version) == (ValueType.DATE, "profile", 3)
    tier = check_delta(
        schema, delta(predicate="tier", value="gold"), index=0, default_valid_from=None
    )
    assert not isinstance(tier, list)
    assert tier.retention_policy == "90d"


def test_permissive_default_infers_types_and_cardinality() -> None:
    lit = check_delta(PERMISSIVE, delta(value=3), index=0, default_valid_from=None)
    rel = check_delta(PERMISSIVE, delta(value=None, object="o"), index=0, default_valid_from=None)
    assert not isinstance(lit, list)
    assert not isinstance(rel, list)
    assert (lit.value_type, lit.cardinality) == (ValueType.NUMBER, Cardinality.ONE)
    assert (rel.value_type, rel.cardinality) == (ValueType.ENTITY, Cardinality.MANY)
    assert rel.schema_version == 0


def test_valid_from_defaults_to_the_episode_and_is_otherwise_required() -> None:
    d = delta(valid_from=None)
    out = check_delta(PERMISSIVE, d, index=2, default_valid_from=T)
    assert not isinstance(out, list)
    assert out.valid_from == T
    missing = check_delta(PERMISSIVE, d, index=2, default_valid_from=None)
    assert missing == [ItemError(reason="valid_from is required", field="valid_from", index=2)]


@pytest.mark.parametrize(
    ("raw", "target", "expected"),
    [
        ("2026-07-15", None, ("2026-07-15", ValueType.DATE)),
        ("2026-02-30", None, ("2026-02-30", ValueType.STRING)),
        ("2026-07-15T10:00:00+02:00", None, ("2026-07-15T10:00:00+02:00", ValueType.DATETIME)),
        (True, None, (True, ValueType.BOOLEAN)),
        (2.5, None, (2.5, ValueType.NUMBER)),
        ("42", ValueType.NUMBER, (42, ValueType.NUMBER)),
        ("true", ValueType.BOOLEAN, (True, ValueType.BOOLEAN)),
        (
            "2026-07-15T10:00:00+02:00",
            ValueType.DATETIME,
            ("2026-07-15T08:00:00Z", ValueType.DATETIME),
        ),
    ],
)
def test_values_are_typed(raw: object, target: ValueType | None, expected: object) -> None:
    assert coerce_value(raw, target) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "target"),
    [
        (True, ValueType.NUMBER),
        ("x", ValueType.NUMBER),
        (1, ValueType.STRING),
        ("yes", ValueType.BOOLEAN),
        ("2026-13-01", ValueType.DATE),
        ("2026-07-15T10:00:00", ValueType.DATETIME),
    ],
)
def test_wrong_value_types_are_refused(raw: object, target: ValueType) -> None:
    assert isinstance(coerce_value(raw, target), ItemError)  # type: ignore[arg-type]


def test_naive_timestamps_and_bad_names_are_refused_naming_the_field() -> None:
    with pytest.raises(pydantic.ValidationError, match="valid_from"):
        delta(valid_from=datetime(2026, 6, 1))
    with pytest.raises(pydantic.ValidationError, match="predicate"):
        delta(predicate="Passport Deadline")
    with pytest.raises(pydantic.ValidationError, match="confidence"):
        delta(confidence=1.5)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("valid_from", "9999-12-31T23:00:00-05:00"),  # no UTC form at all
        ("valid_to", "0001-01-01T00:00:00+00:00"),
        ("value", float("nan")),
        ("value", float("inf")),
        ("value", "x" * 3000),
        ("subject", "acct/1"),
    ],
)
def test_what_no_store_can_hold_is_refused_at_the_boundary(field: str, value: object) -> None:
    with pytest.raises(pydantic.ValidationError, match=field):
        delta(**{field: value})
