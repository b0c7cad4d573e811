// name: search.set_node_terms
// params: rows
// mode: write
// Migration: the fulltext terms of the entities and episodes search.backfill_entities and
// search.backfill_episodes returned (by element id, within the same migration); the
// previous layout's scope goes.
UNWIND $rows AS row
MATCH (e) WHERE elementId(e) = row.node
SET e.terms = row.terms
REMOVE e.scope
