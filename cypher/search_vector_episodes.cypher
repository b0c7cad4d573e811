// name: search.vector_episodes
// params: fetch, vector, tenant_id, model, known_at
// mode: read
CALL db.index.vector.queryNodes('episode_embedding', $fetch, $vector)
YIELD node AS e, score
RETURN e.episode_id AS item_id, score,
       coalesce(e.tenant_id = $tenant_id AND e.embedding_model = $model
         AND e.recorded_at <= $known_at, false) AS ok
