// name: search.vector_entities
// params: fetch, vector, tenant_id, model, known_at
// mode: read
// Nearest entities, filtered inside the index by tenant and model.
CYPHER 25
MATCH (e:Entity)
  SEARCH e IN (VECTOR INDEX entity_embedding FOR $vector
    WHERE e.tenant_id = $tenant_id AND e.embedding_model = $model
    LIMIT $fetch) SCORE AS score
RETURN e.entity_id AS item_id, score, coalesce(e.created_at <= $known_at, false) AS ok
