"""The stores, and :func:`open_store`, which opens one from its URL (SQLAlchemy's convention).

Each store is a package (``graph.stores.sqlite``, ``graph.stores.neo4j``) of a shared
connection, a record codec, the store itself, its search index and its queue. The URL
scheme names the store's class as a ``"module:Class"`` string that is imported only when a
URL of that scheme is opened (kombu's and SQLAlchemy's way), so using SQLite never imports
the Neo4j driver. Stores import this package's shared modules, never each other.
"""

from __future__ import annotations

import importlib
import os
from typing import Protocol, cast
from urllib.parse import urlsplit

from graph.errors import invalid
from graph.port import Store

DEFAULT_STORE_URL = "sqlite:///.sgam/sgam.db"

_SQLITE = "graph.stores.sqlite.store:SqliteStore"
_NEO4J = "graph.stores.neo4j.store:Neo4jStore"
# URL scheme → the store class that opens it.
STORES: dict[str, str] = {
    "sqlite": _SQLITE,
    "neo4j": _NEO4J,
    "neo4j+s": _NEO4J,
    "neo4j+ssc": _NEO4J,
    "bolt": _NEO4J,
    "bolt+s": _NEO4J,
    "bolt+ssc": _NEO4J,
}


class StoreFactory(Protocol):
    """What a store class offers the factory: building itself from its URL."""

    def from_url(self, url: str) -> Store: ...


def store_class(url: str) -> StoreFactory:
    """The class that opens ``url``, imported now; a clear error for an unknown scheme."""
    spec = STORES.get(urlsplit(url).scheme)
    if spec is None:
        raise invalid(
            f"unsupported store URL {url!r}: use sqlite:///path.db, neo4j://host:7687 or bolt://host:7687",
            field="store",
        )
    module, _, name = spec.partition(":")
    return cast(StoreFactory, getattr(importlib.import_module(module), name))


def open_store(url: str | None = None, *, init: bool = True) -> Store:
    """Open the store at ``url`` (default ``SGAM_STORE_URL``, else a local SQLite file) and,
    unless ``init`` is false, create its tables, constraints and indexes."""
    url = url or os.environ.get("SGAM_STORE_URL") or DEFAULT_STORE_URL
    store = store_class(url).from_url(url)
    if init:
        store.init()
    return store


__all__ = ["DEFAULT_STORE_URL", "STORES", "open_store", "store_class"]
