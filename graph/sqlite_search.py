"""Fulltext (FTS5) and vector search on SQLite (filled in by the read-path work)."""

from __future__ import annotations


class SqliteSearchMixin:
    """Search operations of :class:`graph.sqlite_store.SqliteStore`; tables in SEARCH_SQL."""

    SEARCH_SQL = ""
