// name: search.fulltext_entities
// params: query, fetch, tenant_id, known_at
// mode: read
// BM25 over entity names and aliases; $query names only the tenant's own
// terms (graph.stores.neo4j.search.fulltext_query).
CALL db.index.fulltext.queryNodes('entity_text', $query, {limit: $fetch})
YIELD node AS e, score
RETURN e.entity_id AS item_id, score,
       coalesce(e.tenant_id = $tenant_id AND e.created_at <= $known_at, false) AS ok
