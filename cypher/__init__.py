"""The Neo4j store's Cypher templates (``*.cypher``), shipped as package data.

Each file starts with ``// name:``, ``// params:`` and ``// mode:`` lines; see
:mod:`graph.stores.neo4j.templates`, which loads and checks them when the store starts.
"""
