"""The write algorithm, written once over :class:`~graph.port.LedgerTx` for both stores.

validate every item (schema, episodes, entity types) → lock the timelines → apply the
temporal core → write the mutations, the ledger entries and the entities; all inside the
caller's transaction, so a failure anywhere writes nothing.
"""

from __future__ import annotations

import itertools
import json
import random
import time
from collections.abc import Sequence
from datetime import datetime

from graph.errors import FactConflictError, ItemError, NotFoundError, ValidationError
from graph.model import (
    DEFAULT_ENTITY_TYPE,
    Cardinality,
    ConflictPolicy,
    DeleteResult,
    Entity,
    Fact,
    MemoryDelta,
    WriteResult,
    WriteStatus,
    canonical_value,
)
from graph.port import LedgerTx
from graph.schema import CheckedFact, MemorySchema, check_delta
from graph.temporal import (
    Assertion,
    Claim,
    Interval,
    apply_assertion,
    diff,
    fold,
    ledger_entry,
    retract,
)
from graph.timeutil import CLOCK


def timeline_key(
    *, subject: str, predicate: str, cardinality: Cardinality, value: object, obj: str | None
) -> str:
    """(subject, predicate) for single-valued predicates, plus the object or value otherwise."""
    parts: list[str | None] = [subject, predicate]
    if cardinality == Cardinality.MANY:
        parts.append(f"@{obj}" if obj is not None else f"={canonical_value(value)}")  # type: ignore[arg-type]
    return json.dumps(parts, separators=(",", ":"))


def key_of(fact: Fact) -> str:
    return timeline_key(
        subject=fact.subject,
        predicate=fact.predicate,
        cardinality=fact.cardinality,
        value=fact.value,
        obj=fact.object,
    )


def interval_of(fact: Fact) -> Interval:
    return Interval(
        fact_id=fact.fact_id,
        valid_from=fact.valid_from,
        valid_to=fact.valid_to,
        claim=Claim(
            subject=fact.subject,
            subject_type=fact.subject_type,
            predicate=fact.predicate,
            value=fact.value,
            value_type=fact.value_type,
            object=fact.object,
            object_type=fact.object_type,
            confidence=fact.confidence,
            memory_type=fact.memory_type,
            schema_version=fact.schema_version,
            retention_policy=fact.retention_policy,
            cardinality=fact.cardinality,
        ),
        sources=tuple(fact.sources),
        supersedes=tuple(fact.supersedes),
    )


_SEQUENCE = itertools.count()
_bits = random.getrandbits


def ordered_id(prefix: str) -> str:
    """A unique id whose text order follows creation order (microsecond clock, a counter,
    random bits), in the same ``prefix_<32 hex>`` form as :func:`graph.model.new_id`.

    Versions and facts are indexed by id; random ids land all over those B-trees, ordered
    ones append at their end, which made bulk writes markedly cheaper.
    """
    stamp = time.time_ns() // 1000
    # The counter makes ids unique within a process, the random bits across processes
    # (random reseeds itself in a forked child); secrets cost a system call per id.
    return f"{prefix}_{stamp:014x}{next(_SEQUENCE) & 0xFFFFFF:06x}{_bits(48):012x}"


def fact_of(i: Interval, *, tenant_id: str, recorded_at: datetime) -> Fact:
    c = i.claim
    return Fact.trusted(
        tenant_id=tenant_id,
        fact_id=i.fact_id,
        version_id=ordered_id("v"),
        subject=c.subject,
        subject_type=c.subject_type,
        predicate=c.predicate,
        value=c.value,
        value_type=c.value_type,
        object=c.object,
        object_type=c.object_type,
        valid_from=i.valid_from,
        valid_to=i.valid_to,
        recorded_at=recorded_at,
        retired_at=None,
        source_episode_id=i.sources[0] if i.sources else None,
        sources=list(i.sources),
        supersedes=list(i.supersedes),
        confidence=c.confidence,
        memory_type=c.memory_type,
        schema_version=c.schema_version,
        retention_policy=c.retention_policy,
        cardinality=c.cardinality,
    )


def _latest(facts: Sequence[Fact]) -> datetime | None:
    stamps = [f.recorded_at for f in facts] + [f.retired_at for f in facts if f.retired_at]
    return max(stamps) if stamps else None


def write_facts(
    tx: LedgerTx,
    *,
    tenant_id: str,
    schema: MemorySchema,
    deltas: Sequence[MemoryDelta],
    policy: ConflictPolicy = ConflictPolicy.REJECT,
) -> WriteResult:
    """Validate and reconcile a batch; all items are written or none."""
    if not deltas:
        return WriteResult(facts=[], outcomes=[])
    episode_ids = {d.source_episode_id for d in deltas if d.source_episode_id is not None}
    occurred = tx.episodes_occurred_at(tenant_id=tenant_id, episode_ids=episode_ids)
    errors: list[ItemError] = []
    checked: list[CheckedFact] = []
    for idx, d in enumerate(deltas):
        default_from = occurred.get(d.source_episode_id) if d.source_episode_id else None
        result = check_delta(schema, d, index=idx, default_valid_from=default_from)
        if d.source_episode_id is not None and d.source_episode_id not in occurred:
            errors.append(
                ItemError(
                    reason=f"episode {d.source_episode_id!r} does not exist in this tenant",
                    field="source_episode_id",
                    index=idx,
                )
            )
        if isinstance(result, list):
            errors.extend(result)
        else:
            checked.append(result)
    if errors:
        raise ValidationError(errors)

    entities, entity_errors = _resolve_entities(tx, tenant_id=tenant_id, items=checked)
    if entity_errors:
        raise ValidationError(entity_errors)

    keys = [
        timeline_key(
            subject=c.subject,
            predicate=c.predicate,
            cardinality=c.cardinality,
            value=c.value,
            obj=c.object,
        )
        for c in checked
    ]
    unique_keys = sorted(set(keys))  # one lock order for every writer: no deadlocks
    # Nothing of a timeline that ends before the batch's earliest fact starts can change:
    # a write to a long timeline reads its present, not its whole past.
    since = min(c.valid_from for c in checked)
    tx.lock_timelines(tenant_id=tenant_id, keys=unique_keys, since=since)
    current = tx.current_versions(tenant_id=tenant_id, keys=unique_keys, since=since)
    floor = _latest([f for fs in current.values() for f in fs])
    now = tx.system_time(tenant_id=tenant_id, wall=CLOCK.now(after=floor))
    base_seq = int(now.timestamp() * 1_000_000) * 1000

    before: dict[str, list[tuple[str, Interval]]] = {
        k: [(f.version_id, interval_of(f)) for f in current.get(k, [])] for k in unique_keys
    }
    known: dict[str, Fact] = {f.fact_id: f for fs in current.values() for f in fs}
    state: dict[str, tuple[Interval, ...]] = {k: tuple(i for _, i in v) for k, v in before.items()}
    outcomes: list[tuple[WriteStatus, str]] = []
    produced: dict[int, Interval | None] = {}
    ledger_rows: list[tuple[str, Assertion]] = []
    for idx, (c, key) in enumerate(zip(checked, keys, strict=True)):
        a = Assertion(
            seq=base_seq + idx,
            kind="assert",
            fact_id=ordered_id("f"),
            recorded_at=now,
            valid_from=c.valid_from,
            valid_to=c.valid_to,
            claim=Claim(
                subject=c.subject,
                subject_type=entities[c.subject].entity_type,
                predicate=c.predicate,
                value=c.value,
                value_type=c.value_type,
                object=c.object,
                object_type=entities[c.object].entity_type if c.object is not None else None,
                confidence=c.confidence,
                memory_type=c.memory_type,
                schema_version=c.schema_version,
                retention_policy=c.retention_policy,
                cardinality=c.cardinality,
            ),
            source_episode_id=c.source_episode_id,
            policy=policy,
        )
        try:
            state[key], outcome = apply_assertion(state[key], a, strict=True, index=idx)
        except FactConflictError:
            # The timeline is described only for the message (decoding every key cost more
            # than the temporal core); the core is pure, so applying again raises the same.
            apply_assertion(state[key], a, strict=True, index=idx, timeline=_describe_key(key))
            raise
        outcomes.append((outcome.status, outcome.fact_id))
        # What this item produced, in case a later item of the same batch replaces it.
        produced[idx] = next((i for i in state[key] if i.fact_id == outcome.fact_id), None)
        if outcome.status != WriteStatus.UNCHANGED:
            ledger_rows.append((key, ledger_entry(a, outcome)))

    retire: list[str] = []
    inserts: list[Fact] = []
    insert_keys: list[str] = []
    for k in unique_keys:
        m = diff(before[k], state[k])
        retire.extend(m.retire)
        for i in m.insert:
            f = fact_of(i, tenant_id=tenant_id, recorded_at=now)
            inserts.append(f)
            insert_keys.append(k)
            known[f.fact_id] = f
    tx.upsert_entities(tenant_id=tenant_id, entities=list(entities.values()))
    tx.retire(tenant_id=tenant_id, version_ids=retire, at=now)
    tx.insert(tenant_id=tenant_id, facts=inserts, keys=insert_keys)
    tx.append_assertions(tenant_id=tenant_id, rows=ledger_rows)
    mentions = {(c.source_episode_id, c.subject) for c in checked}
    mentions |= {(c.source_episode_id, c.object) for c in checked if c.object is not None}
    tx.mention(tenant_id=tenant_id, pairs=sorted(mentions))
    return WriteResult(
        facts=[
            known.get(fid) or _replaced_in_batch(produced[idx], tenant_id=tenant_id, now=now)
            for idx, (_, fid) in enumerate(outcomes)
        ],
        outcomes=[s for s, _ in outcomes],
    )


def _replaced_in_batch(interval: Interval | None, *, tenant_id: str, now: datetime) -> Fact:
    """An item whose fact a later item of the same batch replaced: it was never current
    at any system time, so it is returned closed at the batch's own instant."""
    assert interval is not None
    return fact_of(interval, tenant_id=tenant_id, recorded_at=now).model_copy(
        update={"retired_at": now}
    )


def _describe_key(key: str) -> str:
    parts = json.loads(key)
    return ".".join(str(p) for p in parts)


def _resolve_entities(
    tx: LedgerTx, *, tenant_id: str, items: Sequence[CheckedFact]
) -> tuple[dict[str, Entity], list[ItemError]]:
    """The entity of every subject and object, created or typed as the batch says.

    A known type is never silently changed: an entity typed Person cannot become a
    Customer. A generic ``Entity`` takes the first concrete type it is given.
    """
    ids = {c.subject for c in items} | {c.object for c in items if c.object is not None}
    existing = tx.entities(tenant_id=tenant_id, entity_ids=ids)
    resolved: dict[str, Entity] = dict(existing)
    errors: list[ItemError] = []
    now = CLOCK.now()
    for idx, c in enumerate(items):
        for eid, etype, field in (
            (c.subject, c.subject_type, "subject_type"),
            (c.object, c.object_type, "object_type"),
        ):
            if eid is None:
                continue
            cur = resolved.get(eid)
            if cur is None:
                resolved[eid] = Entity(
                    tenant_id=tenant_id,
                    entity_id=eid,
                    entity_type=etype or DEFAULT_ENTITY_TYPE,
                    name=eid,
                    created_at=now,
                )
            elif etype is not None and etype != cur.entity_type:
                if cur.entity_type == DEFAULT_ENTITY_TYPE:
                    resolved[eid] = cur.model_copy(update={"entity_type": etype})
                elif etype != DEFAULT_ENTITY_TYPE:
                    errors.append(
                        ItemError(
                            reason=f"entity {eid!r} is a {cur.entity_type}, not a {etype}",
                            field=field,
                            index=idx,
                        )
                    )
    return resolved, errors


def retract_fact(tx: LedgerTx, *, tenant_id: str, fact_id: str, valid_to: datetime | None) -> Fact:
    """End a fact's validity at ``valid_to`` (default: now) without a replacement."""
    fact = tx.current_fact(tenant_id=tenant_id, fact_id=fact_id)
    if fact is None:
        raise NotFoundError("fact", fact_id)
    key = key_of(fact)
    tx.lock_timelines(tenant_id=tenant_id, keys=[key])
    versions = tx.current_versions(tenant_id=tenant_id, keys=[key]).get(key, [])
    now = tx.system_time(tenant_id=tenant_id, wall=CLOCK.now(after=_latest(versions)))
    end = valid_to or now
    before = [(f.version_id, interval_of(f)) for f in versions]
    after = retract([i for _, i in before], fact_id=fact_id, at=end, strict=True)
    m = diff(before, after)
    facts = [fact_of(i, tenant_id=tenant_id, recorded_at=now) for i in m.insert]
    tx.retire(tenant_id=tenant_id, version_ids=m.retire, at=now)
    tx.insert(tenant_id=tenant_id, facts=facts, keys=[key] * len(facts))
    a = Assertion(
        seq=int(now.timestamp() * 1_000_000) * 1000,
        kind="retract",
        fact_id=fact_id,
        recorded_at=now,
        valid_to=end,
    )
    tx.append_assertions(tenant_id=tenant_id, rows=[(key, a)])
    return next(f for f in facts if f.fact_id == fact_id)


def delete_episode(tx: LedgerTx, *, tenant_id: str, episode_id: str) -> DeleteResult:
    """Really delete an episode and repair the timelines its facts had cut.

    The remaining assertions of each touched timeline are folded again, so a value the
    episode had superseded becomes current again exactly as if the episode never came.
    """
    if not tx.episodes_occurred_at(tenant_id=tenant_id, episode_ids={episode_id}):
        raise NotFoundError("episode", episode_id)
    keys = sorted(tx.episode_timelines(tenant_id=tenant_id, episode_id=episode_id))
    tx.lock_timelines(tenant_id=tenant_id, keys=keys)
    current = tx.current_versions(tenant_id=tenant_id, keys=keys)
    ledger = tx.assertions(tenant_id=tenant_id, keys=keys)
    floor = _latest([f for fs in current.values() for f in fs])
    now = tx.system_time(tenant_id=tenant_id, wall=CLOCK.now(after=floor))
    removed = restored = 0
    retire: list[str] = []
    inserts: list[Fact] = []
    insert_keys: list[str] = []
    for k in keys:
        before = [(f.version_id, interval_of(f)) for f in current.get(k, [])]
        kept = [a for a in ledger.get(k, []) if a.source_episode_id != episode_id]
        after = fold(kept)
        removed += sum(1 for _, i in before if i.sources == (episode_id,))
        m = diff(before, after)
        retire.extend(m.retire)
        for i in m.insert:
            inserts.append(fact_of(i, tenant_id=tenant_id, recorded_at=now))
            insert_keys.append(k)
        restored += len(m.insert)
    tx.delete_episode_data(tenant_id=tenant_id, episode_id=episode_id)
    tx.retire(tenant_id=tenant_id, version_ids=retire, at=now)
    tx.insert(tenant_id=tenant_id, facts=inserts, keys=insert_keys)
    return DeleteResult(episode_id=episode_id, facts_removed=removed, facts_restored=restored)


__all__ = [
    "delete_episode",
    "fact_of",
    "interval_of",
    "key_of",
    "ordered_id",
    "retract_fact",
    "timeline_key",
    "write_facts",
]
