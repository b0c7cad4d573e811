"""Input limits on pure data: JSON nesting, numbers, ids, schema size, key parsing."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError as PydanticValidationError

from api.limits import MAX_BODY_DEPTH, body_nesting_error
from api.limits import nests_deeper_than as text_nests_deeper_than
from graph.errors import ItemError
from graph.model import MAX_JSON_DEPTH, MemoryDelta, ValueType, nests_deeper_than, valid_tenant
from graph.schema import coerce_value, parse_number


def nested(depth: int, leaf: Any = None) -> Any:
    value: Any = {} if leaf is None else leaf
    for i in range(depth - 1):
        value = {"k": value} if i % 2 else [value]
    return value


# -- JSON nesting ----------------------------------------------------------------------
def test_nesting_depth_counts_containers() -> None:
    assert not nests_deeper_than("x", 0)
    assert not nests_deeper_than({}, 1)
    assert nests_deeper_than({}, 0)
    assert not nests_deeper_than(nested(32), 32)
    assert nests_deeper_than(nested(33), 32)
    # No recursion: far past the interpreter's recursion limit.
    assert nests_deeper_than(nested(100_000), 32)
    assert nests_deeper_than({"a": 1, "b": [1, 2, {"c": [nested(31)]}]}, 32)


def test_unbalanced_text_is_measured_by_how_deep_it_opens() -> None:
    assert text_nests_deeper_than(b"[" * 5000, 32)  # the parser would recurse 5000 deep
    assert text_nests_deeper_than(b'{"a": ' * 40 + b"[]", 32)
    assert not text_nests_deeper_than(b"[[[", 32)  # shallow: left to the parser (400)
    assert not text_nests_deeper_than(b"]]]]", 32)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\[]{}', max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(value=json_values, limit=st.integers(0, 8))
def test_text_scan_agrees_with_the_object_walk(value: Any, limit: int) -> None:
    """Brackets inside strings (escaped quotes included) never count."""
    text = json.dumps(value).encode()
    assert text_nests_deeper_than(text, limit) == nests_deeper_than(value, limit)


def test_body_nesting_error_names_the_member_and_the_limit() -> None:
    ok = json.dumps({"metadata": nested(MAX_BODY_DEPTH - 1)}).encode()
    assert body_nesting_error(ok) is None
    deep = b'{"a": "{[\\"", "metadata": {}, "content": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    err = body_nesting_error(deep)
    assert err is not None
    (item,) = err.errors
    assert item.field == "content"
    assert f"the limit is {MAX_JSON_DEPTH}" in item.reason
    assert body_nesting_error(b"[" * 100_000 + b"]" * 100_000) is not None
    assert body_nesting_error(b'{"a": [}') is None  # malformed: the parser's 400


# -- numbers ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("12", 12),
        ("-0", 0),
        ("+7", 7),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("2.50", 2.5),
        ("1e20", 1e20),
        ("1E2", 100.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("-1.5e300", -1.5e300),
    ],
)
def test_numbers_written_as_text(text: str, value: float) -> None:
    got = parse_number(text)
    assert got == value
    assert type(got) is type(value)


@pytest.mark.parametrize(
    "text",
    [
        "1e400",
        "-1e400",
        "nan",
        "NaN",
        "inf",
        "-inf",
        "Infinity",
        "9223372036854775808",
        "-9223372036854775809",
        "1_000",
        " 12",
        "12 ",
        "0x10",
        "",
        "e5",
        ".",
        "1e",
        "1" * 5000 + "x",
    ],
)
def test_text_that_is_no_storable_number(text: str) -> None:
    assert isinstance(parse_number(text), str)
    result = coerce_value(text, ValueType.NUMBER)
    assert isinstance(result, ItemError)


def test_integers_past_64_bits_are_refused_in_any_delta() -> None:
    with pytest.raises(PydanticValidationError, match="64 bits"):
        MemoryDelta(subject="a", predicate="p", value=2**63)
    assert MemoryDelta(subject="a", predicate="p", value=-(2**63)).value == -(2**63)


# -- ids and patterns ------------------------------------------------------------------
def test_patterns_match_whole_strings() -> None:
    """Review L1: Python's "$" matches before a final newline; every check is whole."""
    assert not valid_tenant("acme\n")
    assert coerce_value("2026-06-01T09:00:00Z\n", None) == (
        "2026-06-01T09:00:00Z\n",
        ValueType.STRING,
    )
    assert coerce_value("2026-06-01\n", None) == ("2026-06-01\n", ValueType.STRING)
    assert coerce_value("2026-06-01", None) == ("2026-06-01", ValueType.DATE)


@pytest.mark.parametrize("bad", [".", ".."])
def test_dot_segments_are_no_ids(bad: str) -> None:
    """Review L2."""
    for fields in ({"subject": bad}, {"object": bad}, {"source_episode_id": bad}):
        with pytest.raises(PydanticValidationError, match=re.escape("'.' and '..' cannot be ids")):
            MemoryDelta.model_validate({"subject": "a", "predicate": "p", **fields})
    assert MemoryDelta(subject="...", predicate="p", value=1).subject == "..."
