// name: search.fulltext_episodes
// params: query, fetch, tenant_id, known_at
// mode: read
// BM25 over episode text; $query names only the tenant's own terms
// (graph.stores.neo4j.search.fulltext_query).
CALL db.index.fulltext.queryNodes('episode_text', $query, {limit: $fetch})
YIELD node AS e, score
RETURN e.episode_id AS item_id, score,
       coalesce(e.tenant_id = $tenant_id AND e.recorded_at <= $known_at, false) AS ok
