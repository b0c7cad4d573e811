// name: search.vector_facts
// params: fetch, vector, tenant_id, model, as_of, known_at
// mode: read
// Nearest fact versions (cosine; Neo4j reports (1 + cos) / 2). Over-fetched across
// tenants and versions; the store keeps the rows marked ok.
CALL db.index.vector.queryRelationships('fact_embedding', $fetch, $vector)
YIELD relationship AS r, score
RETURN r.fact_id AS item_id, score,
       coalesce(r.tenant_id = $tenant_id AND r.embedding_model = $model
         AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
         AND r.recorded_at <= $known_at
         AND (r.retired_at IS NULL OR r.retired_at > $known_at), false) AS ok
