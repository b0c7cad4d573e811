"""Ledger export for the Neo4j store (``cypher/transfer_*.cypher``), page by page after
keyset cursors; restore goes through the store's own ledger primitives
(:func:`graph.stores.transfer.restore_records`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from graph.schema import MemorySchema
from graph.stores.neo4j.codec import (
    assertion_from_props,
    entity_from_props,
    episode_from_props,
    fact_from_props,
)
from graph.stores.neo4j.connection import Neo4jConnection
from graph.stores.transfer import (
    PAGE,
    Record,
    RecordType,
    assertion_record,
    entity_record,
    episode_record,
    mention_record,
    schema_record,
    version_record,
)


def export_records(conn: Neo4jConnection, *, tenant_id: str, kind: RecordType) -> Iterator[Record]:
    t = tenant_id
    if kind == "schema":
        for r in conn.run("transfer.schemas", {"tenant_id": t}):
            yield schema_record(MemorySchema.model_validate_json(r["body_json"]))
        return
    if kind == "mention":
        ep, en = "", ""
        while True:
            params = {"tenant_id": t, "after_episode": ep, "after_entity": en, "limit": PAGE}
            rows = conn.run("transfer.mentions", params)
            for r in rows:
                yield mention_record(r["episode_id"], r["entity_id"])
            if len(rows) < PAGE:
                return
            ep, en = rows[-1]["episode_id"], rows[-1]["entity_id"]
    if kind == "assertion":
        seq, fact = -1, ""
        while True:
            params2: dict[str, Any] = {
                "tenant_id": t,
                "after_seq": seq,
                "after_fact": fact,
                "limit": PAGE,
            }
            rows = conn.run("transfer.assertions", params2)
            for r in rows:
                p = r["assertion"]
                yield assertion_record(assertion_from_props(p), key=p["timeline_key"])
            if len(rows) < PAGE:
                return
            last = rows[-1]["assertion"]
            seq, fact = int(last["seq"]), str(last["fact_id"])
    template, column, cursor_of = _PAGED[kind]
    after = ""
    while True:
        rows = conn.run(template, {"tenant_id": t, "after": after, "limit": PAGE})
        for r in rows:
            yield _record(kind, t, r[column])
        if len(rows) < PAGE:
            return
        after = str(rows[-1][column][cursor_of])


_PAGED: dict[str, tuple[str, str, str]] = {
    # kind: (template, returned column, cursor property)
    "entity": ("transfer.entities", "entity", "entity_id"),
    "episode": ("transfer.episodes", "episode", "episode_id"),
    "version": ("transfer.versions", "fact", "version_id"),
}


def _record(kind: str, tenant_id: str, p: Any) -> Record:
    if kind == "entity":
        return entity_record(entity_from_props(tenant_id, p))
    if kind == "episode":
        return episode_record(episode_from_props(p))
    return version_record(fact_from_props(p), key=p["timeline_key"])


__all__ = ["export_records"]
