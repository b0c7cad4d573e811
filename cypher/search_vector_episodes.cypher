// name: search.vector_episodes
// params: fetch, vector, tenant_id, model, known_at
// mode: read
// Nearest episodes, filtered inside the index by tenant and model.
CYPHER 25
MATCH (e:Episode)
  SEARCH e IN (VECTOR INDEX episode_embedding FOR $vector
    WHERE e.tenant_id = $tenant_id AND e.embedding_model = $model
    LIMIT $fetch) SCORE AS score
RETURN e.episode_id AS item_id, score, coalesce(e.recorded_at <= $known_at, false) AS ok
