"""The insurance example's generator: deterministic, and the checked-in file is its output."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from graph import load_schema
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "insurance"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("insurance_generate", EXAMPLE / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses resolve their module by name
    spec.loader.exec_module(mod)
    return mod


generate = _generator()


def test_the_checked_in_file_is_the_generators_output(tmp_path: Path) -> None:
    out = tmp_path / "episodes.jsonl"
    assert generate.main(["--out", str(out)]) == 0
    assert out.read_bytes() == (EXAMPLE / "episodes.jsonl").read_bytes()


def test_the_file_is_two_years_of_request_bodies() -> None:
    text = (EXAMPLE / "episodes.jsonl").read_text(encoding="utf-8")
    bodies = [json.loads(line) for line in text.splitlines()]
    episodes = [b for b in bodies if "content" in b]
    facts_lines = [b for b in bodies if "content" not in b]
    assert 2000 < len(bodies) < 5000
    assert {b["kind"] for b in episodes} == {"message", "document", "event"}
    assert {b["extract"] for b in episodes} == {"none"}
    assert min(b["occurred_at"] for b in episodes).startswith("2024-01")
    assert max(b["occurred_at"] for b in episodes).startswith("2025-12")
    assert all(set(b) <= {"facts", "conflict_policy"} for b in facts_lines)
    # A POST /facts line cites an episode of an earlier line.
    seen: set[str] = set()
    for b in bodies:
        if "content" in b:
            seen.add(b["episode_id"])
        else:
            assert {f["source_episode_id"] for f in b["facts"]} <= seen
    assert len(seen) == len(episodes)  # no episode id repeats


def test_the_checks_refuse_a_conflict_nobody_settles() -> None:
    bodies = generate.build()
    ep = next(b for b in bodies if b.get("episode_id") == "ep-ben-premium-correction")
    fix = bodies[bodies.index(ep) + 1]
    assert fix["conflict_policy"] == "latest_recorded_wins"
    generate.check(bodies)
    del fix["conflict_policy"]  # the default policy would refuse the correction
    with pytest.raises(ValueError, match=r"pol-ben-home.*premium.*two values"):
        generate.check(bodies)


def test_the_schema_is_strict_and_names_the_five_types() -> None:
    schema = load_schema(EXAMPLE / "schema.json")
    assert schema.strict
    assert sorted(schema.entity_type_names()) == [
        "Account",
        "Advisor",
        "Claim",
        "Customer",
        "Entity",
        "Policy",
    ]
    relations = {
        p.name: (p.subject_types, p.object_type, p.effective_cardinality.value)
        for p in schema.predicates
        if p.is_relation
    }
    assert relations == {
        "holds": (["Customer"], "Account", "many"),
        "covers": (["Policy"], "Account", "many"),
        "managed_by": (["Account"], "Advisor", "one"),
        "filed_by": (["Claim"], "Customer", "one"),
        "under_policy": (["Claim"], "Policy", "one"),
    }
    premium = schema.predicate("premium")
    assert premium is not None
    assert premium.value_type == "number"
