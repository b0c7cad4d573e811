"""The Neo4j store: connection, codec, Cypher templates, store, search, queue.

The only package that imports the ``neo4j`` driver. Open it with
``graph.open_store("bolt://host:7687")``; the store is
:class:`graph.stores.neo4j.store.Neo4jStore`.
"""
