"""The Neo4j store's Cypher templates (``*.cypher``), shipped as package data.

Each template starts with ``// name:``, ``// params:`` and ``// mode:`` lines; a shared
projection lives once in a fragment file (``// fragment: <name>``, named ``_<name>.cypher``)
that templates splice in with ``// include: <name>``. See
:mod:`graph.stores.neo4j.templates`, which loads and checks them when the store starts.
"""
