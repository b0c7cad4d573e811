"""Open a store from its URL (SQLAlchemy's convention, API.md "Running")."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from graph.errors import invalid
from graph.port import Store
from graph.sqlite_store import SqliteStore

DEFAULT_STORE_URL = "sqlite:///.sgam/sgam.db"


def sqlite_path(url: str) -> str:
    """``sqlite:///rel/path.db`` is relative, ``sqlite:////abs/path.db`` absolute."""
    rest = url[len("sqlite:///") :]
    if not rest:
        raise invalid("sqlite URL needs a path, e.g. sqlite:///.sgam/sgam.db", field="store")
    return rest


def open_store(url: str | None = None, *, init: bool = True) -> Store:
    url = url or os.environ.get("SGAM_STORE_URL") or DEFAULT_STORE_URL
    scheme = urlsplit(url).scheme
    store: Store
    if scheme == "sqlite" and url.startswith("sqlite:///"):
        store = SqliteStore(sqlite_path(url), url=url)
    elif scheme in ("neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc"):
        from graph.neo4j_store import Neo4jStore  # only this store needs the driver

        store = Neo4jStore.from_url(url)
    else:
        raise invalid(
            f"unsupported store URL {url!r}: use sqlite:///path.db, neo4j://host:7687 or bolt://host:7687",
            field="store",
        )
    if init:
        store.init()
    return store
