"""Pure parts of extraction: JSON Schema generation, mapping checks, names, policy keys,
candidate screening, settings, and the package's public surface."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError as PydanticValidationError

import extraction
from extraction.candidates import MAX_CANDIDATES, screen, to_delta
from extraction.json_schema import answer_schema, response_format
from extraction.mapper import parse_mappings
from extraction.models import RejectedCandidate
from extraction.policy import hold_reason, statement_key
from extraction.resolution import normalise, similarity
from extraction.settings import ExtractionSettings
from graph.errors import ValidationError
from graph.model import Episode, EpisodeKind, MemoryDelta
from graph.queue import HoldReason
from graph.schema import PERMISSIVE, MemorySchema

T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)
SCHEMA = MemorySchema.model_validate(
    {
        "mode": "strict",
        "entity_types": [{"name": "Person"}, {"name": "Account"}],
        "predicates": [
            {"name": "passport_deadline", "value_type": "date", "subject_types": ["Person"]},
            {"name": "holds_account", "object_type": "Account"},
            {"name": "address", "value_type": "string", "requires_confirmation": True},
            {"name": "prefers", "value_type": "string", "min_support": 3},
        ],
    }
)
EP = Episode(
    tenant_id="t",
    episode_id="e1",
    kind=EpisodeKind.MESSAGE,
    content="x",
    content_hash="",
    occurred_at=T0,
    recorded_at=T0,
)


def _objects(node: Any) -> list[dict[str, Any]]:
    """Every JSON Schema object node in a schema tree."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append(node)
        for v in node.values():
            found += _objects(v)
    elif isinstance(node, list):
        for v in node:
            found += _objects(v)
    return found


def test_strict_schema_gives_one_variant_per_predicate_with_its_type() -> None:
    items = answer_schema(SCHEMA)["properties"]["facts"]["items"]
    variants = {v["properties"]["predicate"]["enum"][0]: v["properties"] for v in items["anyOf"]}
    assert sorted(variants) == ["address", "holds_account", "passport_deadline", "prefers"]
    deadline = variants["passport_deadline"]
    assert deadline["value"]["pattern"] == r"^\d{4}-\d{2}-\d{2}$"
    assert deadline["object"] == {"type": "null"}
    assert deadline["subject_type"]["enum"] == ["Person", None]
    holds = variants["holds_account"]
    assert (holds["value"], holds["object_type"]) == (
        {"type": "null"},
        {"type": "string", "enum": ["Account"]},
    )


def test_every_object_is_closed_and_lists_all_its_properties_as_strict_mode_requires() -> None:
    for schema in (SCHEMA, PERMISSIVE):
        objects = _objects(response_format(schema)["json_schema"]["schema"])
        assert objects
        for obj in objects:
            assert obj["additionalProperties"] is False
            assert sorted(obj["required"]) == sorted(obj["properties"])


def test_permissive_schema_allows_any_snake_case_predicate() -> None:
    item = answer_schema(PERMISSIVE)["properties"]["facts"]["items"]
    assert item["properties"]["predicate"] == {
        "type": "string",
        "pattern": "^[a-z][a-z0-9_]{0,63}$",
    }
    assert item["properties"]["value"]["type"] == ["string", "number", "boolean", "null"]


def test_bad_event_mappings_are_refused_with_their_index() -> None:
    schema = SCHEMA.model_copy(
        update={
            "event_mappings": [
                {
                    "event_type": "ok",
                    "subject": {"field": "id"},
                    "facts": [{"predicate": "holds_account", "object": {"field": "a"}}],
                },
                {
                    "event_type": "x",
                    "subject": {"field": "id"},
                    "facts": [{"predicate": "holds_account", "value_field": "a"}],
                },
                {
                    "event_type": "y",
                    "subject": {"field": "id"},
                    "facts": [{"predicate": "nope", "value": 1}],
                },
                {
                    "event_type": "z",
                    "subject": {"field": "id"},
                    "facts": [{"predicate": "prefers", "value": 1, "value_field": "v"}],
                },
            ]
        }
    )
    with pytest.raises(ValidationError) as info:
        parse_mappings(schema)
    got = [(e.index, e.reason) for e in info.value.errors]
    assert got[0] == (1, "holds_account relates to a Account: map object")
    assert got[1] == (2, "unknown predicate 'nope' (schema is strict)")
    assert got[2][0] == 3
    assert "give exactly one of value_field, value, object" in got[2][1]


def test_normalised_names() -> None:
    assert normalise("  Mira_PATEL ") == normalise("mira-patel") == "mira patel"
    assert normalise("Zoë.  O'Brien") == "zoë obrien"
    assert similarity("mira patel", "mira patell") > 0.9
    assert similarity("ana", "bob") < 0.5


def test_statement_keys_and_holds() -> None:
    a = MemoryDelta(subject="m", predicate="prefers", value=1.0)
    b = MemoryDelta(subject="m", predicate="prefers", value=1)
    assert statement_key(a) == statement_key(b)  # 1 and 1.0 are one number
    assert statement_key(MemoryDelta(subject="m", predicate="p", object="x")) == '["m","p","@x"]'
    assert hold_reason(SCHEMA, MemoryDelta(subject="m", predicate="address", value="a")) == (
        HoldReason.CONFIRMATION,
        1,
    )
    assert hold_reason(SCHEMA, a) == (HoldReason.SUPPORT, 3)
    assert hold_reason(PERMISSIVE, a) is None


def test_candidate_screening_keeps_each_refusal_with_its_reason() -> None:
    raw = [
        {
            "subject": "mira",
            "subject_type": "Person",
            "predicate": "passport_deadline",
            "value": "2026-07-15",
            "valid_from": "2026-06-02",
        },
        {"subject": "mira", "predicate": "passport_deadline", "value": "soon"},
        {"subject": "mira", "predicate": "holds_account", "value": "acct-1"},
        {
            "subject": "mira",
            "predicate": "passport_deadline",
            "value": "2026-07-15",
            "source_episode_id": "forged",
        },
        {"subject": "", "predicate": "passport_deadline", "value": "2026-07-15"},
        42,
    ]
    accepted, rejected = screen(SCHEMA, EP, raw)
    assert [(d.value, d.source_episode_id, d.valid_from) for d in accepted] == [
        ("2026-07-15", "e1", datetime(2026, 6, 2, tzinfo=UTC))  # a bare date: that day, UTC
    ]
    assert [(r.stage, r.field) for r in rejected] == [
        ("validation", "value"),
        ("validation", "value"),
        ("shape", "source_episode_id"),
        ("validation", "subject"),
        ("shape", None),
    ]
    assert rejected[0].reason == "expected a date YYYY-MM-DD, got 'soon'"
    assert rejected[1].reason.startswith("holds_account relates to a Account")


def test_a_missing_valid_from_defaults_to_the_episode_time() -> None:
    d = to_delta({"subject": "m", "predicate": "p", "value": 1}, EP)
    assert isinstance(d, MemoryDelta)
    accepted, _ = screen(PERMISSIVE, EP, [{"subject": "m", "predicate": "p", "value": 1}])
    assert accepted[0].valid_from == T0


def test_a_runaway_answer_is_cut_and_the_cut_recorded() -> None:
    raw = [{"subject": f"s{i}", "predicate": "p", "value": i} for i in range(MAX_CANDIDATES + 3)]
    accepted, rejected = screen(PERMISSIVE, EP, raw)
    assert (len(accepted), len(rejected)) == (MAX_CANDIDATES, 3)
    assert isinstance(rejected[0], RejectedCandidate)
    assert rejected[0].reason == f"more than {MAX_CANDIDATES} candidates"


def test_settings_need_both_llm_names_or_neither(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SGAM_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("SGAM_LLM_MODEL", raising=False)
    with pytest.raises(
        PydanticValidationError, match="set both SGAM_LLM_BASE_URL and SGAM_LLM_MODEL"
    ):
        ExtractionSettings()
    monkeypatch.setenv("SGAM_LLM_MODEL", "qwen")
    monkeypatch.setenv("SGAM_WORKERS", "3")
    s = ExtractionSettings()
    assert (s.llm_model, s.workers, s.llm_configured) == ("qwen", 3, True)
    built = extraction.build_extractor(s)
    assert isinstance(built, extraction.LlmExtractor)
    assert built.url == "http://127.0.0.1:9/v1/chat/completions"
    built.close()


def test_no_llm_configured_builds_no_extractor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SGAM_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("SGAM_LLM_MODEL", raising=False)
    assert extraction.build_extractor(ExtractionSettings()) is None


def test_empty_llm_variables_count_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SGAM_LLM_BASE_URL", "")
    monkeypatch.setenv("SGAM_LLM_MODEL", " ")
    monkeypatch.setenv("SGAM_LLM_API_KEY", "")
    s = ExtractionSettings()
    assert (s.llm_base_url, s.llm_model, s.llm_api_key, s.llm_configured) == (
        None,
        None,
        None,
        False,
    )
    assert extraction.build_extractor(s) is None
    monkeypatch.delenv("SGAM_LLM_MODEL")
    assert ExtractionSettings().llm_configured is False  # one empty, one absent: not set


def test_public_surface_is_the_curated_list() -> None:
    missing = [n for n in extraction.__all__ if not hasattr(extraction, n)]
    assert missing == []
    exported = {n for n in dir(extraction) if not n.startswith("_")}
    modules = {n for n in exported if type(getattr(extraction, n)).__name__ == "module"}
    assert exported - modules == set(extraction.__all__)
