"""The embedded store on one SQLite file: connection, codec, store, search index, queue.

Open it with ``graph.open_store("sqlite:///path.db")``; the store is
:class:`graph.stores.sqlite.store.SqliteStore`.
"""
