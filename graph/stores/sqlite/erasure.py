"""Erasure and retention primitives over one SQLite write transaction.

:class:`SqliteEraseOps` is what :mod:`graph.erasure` and :mod:`graph.retention` need
beyond the store's ledger transaction; the store mixes the two into its erase
transaction. Deleting rows is enough for search: the triggers of
:mod:`.search` drop an item's document (and with it its vectors) when its last row goes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from graph.erasure import HeldCandidate, HeldMerge, Inventory
from graph.stores.sqlite.codec import in_list
from graph.timeutil import to_db


def _chunks(items: list[str], size: int = 500) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


EXPIRED_TIMELINES = (
    "SELECT DISTINCT timeline_key FROM facts WHERE tenant_id = ? AND predicate = ?"
    " AND valid_to IS NOT NULL AND valid_to < ?"
)


def expired_keys(rows: Iterable[Sequence[Any]]) -> list[str]:
    """The keys of :data:`EXPIRED_TIMELINES`' rows, sorted (the lock order)."""
    return sorted(r[0] for r in rows)


class SqliteEraseOps:
    """Mixed into the store's erase transaction (``SqliteEraseTx`` in :mod:`.store`),
    beside the ledger primitives, over the same connection ``c``."""

    c: sqlite3.Connection

    # -- erasure -----------------------------------------------------------------------
    def mentioning_episodes(self, *, tenant_id: str, entity_id: str) -> list[str]:
        # The mentions by rowid, found in mentions_entity: planned without statistics,
        # "tenant_id = ? AND entity_id = ?" read episode_id from the primary key instead
        # (it holds it), seeking tenant_id only: every mention of the tenant.
        rows = self.c.execute(
            "SELECT episode_id FROM episode_mentions WHERE rowid IN (SELECT rowid"
            " FROM episode_mentions WHERE tenant_id = ? AND entity_id = ?)"
            " UNION SELECT source_episode_id FROM facts WHERE tenant_id = ? AND subject = ?"
            " AND source_episode_id IS NOT NULL"
            " UNION SELECT source_episode_id FROM facts WHERE tenant_id = ? AND object = ?"
            " AND source_episode_id IS NOT NULL",
            (tenant_id, entity_id) * 3,
        ).fetchall()
        ids = [r[0] for r in rows]
        # Only those that exist: a version may cite an episode deleted earlier.
        found: list[str] = []
        for chunk in _chunks(ids):
            found += [
                r[0]
                for r in self.c.execute(
                    f"SELECT episode_id FROM episodes WHERE tenant_id = ?"  # noqa: S608
                    f" AND episode_id IN ({in_list(chunk)})",
                    [tenant_id, *chunk],
                )
            ]
        return found

    def entity_timelines(self, *, tenant_id: str, entity_id: str) -> dict[str, set[str]]:
        rows = self.c.execute(
            "SELECT timeline_key, fact_id FROM facts WHERE tenant_id = ? AND subject = ?"
            " UNION SELECT timeline_key, fact_id FROM facts WHERE tenant_id = ? AND object = ?",
            (tenant_id, entity_id, tenant_id, entity_id),
        ).fetchall()
        out: dict[str, set[str]] = {}
        for key, fact_id in rows:
            out.setdefault(key, set()).add(fact_id)
        return out

    def inventory(self, *, tenant_id: str, keys: Sequence[str]) -> Inventory:
        versions: set[tuple[str, str]] = set()
        assertions = 0
        for chunk in _chunks(list(keys)):
            marks = in_list(chunk)
            versions |= {
                (r[0], r[1])
                for r in self.c.execute(
                    f"SELECT version_id, fact_id FROM facts WHERE tenant_id = ?"  # noqa: S608
                    f" AND timeline_key IN ({marks})",
                    [tenant_id, *chunk],
                )
            }
            assertions += self.c.execute(
                f"SELECT count(*) FROM assertions WHERE tenant_id = ?"  # noqa: S608
                f" AND timeline_key IN ({marks})",
                [tenant_id, *chunk],
            ).fetchone()[0]
        return Inventory(versions=frozenset(versions), assertions=assertions)

    def delete_assertions(self, *, tenant_id: str, rows: Sequence[tuple[str, int]]) -> None:
        self.c.executemany(
            "DELETE FROM assertions WHERE tenant_id = ? AND timeline_key = ? AND seq = ?",
            [(tenant_id, key, seq) for key, seq in rows],
        )

    def candidates(self, *, tenant_id: str) -> list[HeldCandidate]:
        rows = self.c.execute(
            "SELECT candidate_id, episode_id, delta_json FROM extraction_candidates"
            " WHERE tenant_id = ?",
            (tenant_id,),
        ).fetchall()
        return [HeldCandidate(r[0], r[1], r[2]) for r in rows]

    def merges(self, *, tenant_id: str) -> list[HeldMerge]:
        rows = self.c.execute(
            "SELECT candidate_id, episode_id, entity_id, existing_entity_id"
            " FROM merge_candidates WHERE tenant_id = ?",
            (tenant_id,),
        ).fetchall()
        return [HeldMerge(r[0], r[1], r[2], r[3]) for r in rows]

    def delete_candidates(
        self, *, tenant_id: str, candidate_ids: Sequence[str], merge_ids: Sequence[str]
    ) -> None:
        self.c.executemany(
            "DELETE FROM extraction_candidates WHERE tenant_id = ? AND candidate_id = ?",
            [(tenant_id, c) for c in candidate_ids],
        )
        self.c.executemany(
            "DELETE FROM merge_candidates WHERE tenant_id = ? AND candidate_id = ?",
            [(tenant_id, c) for c in merge_ids],
        )

    def drop_timeline_locks(self, *, tenant_id: str, keys: Sequence[str]) -> None:
        return None  # the file's one writer lock is the only lock: no rows to drop

    def erase_entity(self, *, tenant_id: str, entity_id: str, own_keys: Sequence[str]) -> None:
        p = (tenant_id, entity_id)
        self.c.execute("DELETE FROM facts WHERE tenant_id = ? AND subject = ?", p)
        self.c.execute("DELETE FROM facts WHERE tenant_id = ? AND object = ?", p)
        self.c.execute("DELETE FROM episode_mentions WHERE tenant_id = ? AND entity_id = ?", p)
        self.c.execute("DELETE FROM entities WHERE tenant_id = ? AND entity_id = ?", p)

    # -- retention ---------------------------------------------------------------------
    def expired_timelines(self, *, tenant_id: str, predicate: str, before: datetime) -> list[str]:
        params = (tenant_id, predicate, to_db(before))
        return expired_keys(self.c.execute(EXPIRED_TIMELINES, params))

    def purge_versions(
        self,
        *,
        tenant_id: str,
        keys: Sequence[str],
        before: datetime,
        facts: Sequence[tuple[str, str]],
    ) -> None:
        self.c.executemany(
            "DELETE FROM facts WHERE tenant_id = ? AND timeline_key = ?"
            " AND valid_to IS NOT NULL AND valid_to < ? AND retired_at IS NOT NULL",
            [(tenant_id, k, to_db(before)) for k in keys],
        )
        self.c.executemany(
            "DELETE FROM facts WHERE tenant_id = ? AND timeline_key = ? AND fact_id = ?",
            [(tenant_id, k, f) for k, f in facts],
        )
        self.c.executemany(
            "DELETE FROM assertions WHERE tenant_id = ? AND timeline_key = ? AND fact_id = ?",
            [(tenant_id, k, f) for k, f in facts],
        )

    def episodes_before(self, *, tenant_id: str, before: datetime, limit: int) -> list[str]:
        rows = self.c.execute(
            "SELECT episode_id FROM episodes WHERE tenant_id = ? AND occurred_at < ?"
            " ORDER BY occurred_at, episode_id LIMIT ?",
            (tenant_id, to_db(before), limit),
        ).fetchall()
        return [r[0] for r in rows]

    def retention_tenants(self) -> list[str]:
        rows = self.c.execute("SELECT DISTINCT tenant_id FROM schemas ORDER BY 1").fetchall()
        return [r[0] for r in rows]


__all__ = ["EXPIRED_TIMELINES", "SqliteEraseOps", "expired_keys"]
