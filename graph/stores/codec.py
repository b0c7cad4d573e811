"""Plain-data forms of ledger records shared by both stores' codecs (JSON columns, Neo4j maps)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Generic, TypeVar

from graph.model import Cardinality, ConflictPolicy, Episode, ValueType
from graph.retrieval.port import HeldVersion
from graph.temporal import Assertion, Claim
from graph.timeutil import to_db

# One encoder for every payload: json.dumps with any non-default option builds a new one
# per call.
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def claim_to_dict(c: Claim) -> dict[str, Any]:
    # Built by hand: dataclasses.asdict deep-copies every field and was a quarter of the
    # write path's CPU time. A claim's fields are scalars, so nothing needs copying.
    return {
        "subject": c.subject,
        "subject_type": c.subject_type,
        "predicate": c.predicate,
        "value": c.value,
        "value_type": c.value_type.value,
        "object": c.object,
        "object_type": c.object_type,
        "confidence": c.confidence,
        "memory_type": c.memory_type,
        "schema_version": c.schema_version,
        "retention_policy": c.retention_policy,
        "cardinality": c.cardinality.value,
    }


def claim_from_dict(d: dict[str, Any]) -> Claim:
    return Claim(
        **{
            **d,
            "value_type": ValueType(d["value_type"]),
            "cardinality": Cardinality(d["cardinality"]),
        }
    )


def assertion_payload(a: Assertion) -> str:
    """The parts of an assertion that are not stored in their own columns or properties."""
    return _COMPACT.encode(
        {"claim": claim_to_dict(a.claim) if a.claim else None, "policy": a.policy.value}
    )


def assertion_from_parts(
    *,
    seq: int,
    kind: str,
    fact_id: str,
    recorded_at: datetime,
    valid_from: datetime | None,
    valid_to: datetime | None,
    source_episode_id: str | None,
    payload: str,
) -> Assertion:
    p = json.loads(payload)
    return Assertion(
        seq=seq,
        kind="retract" if kind == "retract" else "assert",
        fact_id=fact_id,
        recorded_at=recorded_at,
        valid_from=valid_from,
        valid_to=valid_to,
        claim=claim_from_dict(p["claim"]) if p["claim"] else None,
        source_episode_id=source_episode_id,
        policy=ConflictPolicy(p["policy"]),
    )


def dump_value(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def load_value(text: str | None) -> Any:
    """A literal value's JSON. Most are plain strings (``"Madrid"``): a JSON text that
    opens with a quote is one string, and without a backslash it holds no escape, so it
    is read without the parser."""
    if text is None:
        return None
    if len(text) >= 2 and text[0] == '"' and "\\" not in text:
        return text[1:-1]
    return json.loads(text)


def episode_hash(episode: Episode) -> str:
    """What makes two posts of one episode id "the same content"."""
    body = {
        "kind": episode.kind.value,
        "source": episode.source,
        "content": episode.content,
        "occurred_at": to_db(episode.occurred_at),
        "session_id": episode.session_id,
        "metadata": episode.metadata,
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


R = TypeVar("R")
T = TypeVar("T")


class Decoded(Mapping[str, T], Generic[R, T]):
    """Rows by id, each decoded on first access. A search reads a few hundred episodes
    and entities to know which are visible in its window (~40 us each to decode), and
    shows a few of them."""

    def __init__(self, rows: Mapping[str, R], decode: Callable[[R], T]) -> None:
        self._rows = rows
        self._decode = decode
        self._done: dict[str, T] = {}

    def __getitem__(self, key: str) -> T:
        item = self._done.get(key)
        if item is None:
            item = self._done[key] = self._decode(self._rows[key])
        return item

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def held_version(row: Sequence[Any], sources: Iterable[str]) -> HeldVersion:
    """A staleness check's row as both stores read it: fact id, subject, predicate,
    object, value (stored JSON), valid now, single-valued (then the sources, decoded by
    the store)."""
    fact_id, subject, predicate, obj, value_json, now, single = row[:7]
    said = obj if obj is not None else load_value(value_json)
    return HeldVersion(fact_id, subject, predicate, said, bool(now), bool(single), tuple(sources))
