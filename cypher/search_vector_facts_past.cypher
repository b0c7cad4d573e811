// name: search.vector_facts_past
// params: fetch, vector, tenant_id, model, as_of, known_at
// mode: read
// Nearest versions for a past known_at: every version of the tenant is a candidate (the
// index filters by tenant and model), the window is checked on the rows (ok).
CYPHER 25
MATCH ()-[r:FACT]->()
  SEARCH r IN (VECTOR INDEX fact_embedding FOR $vector
    WHERE r.tenant_id = $tenant_id AND r.embedding_model = $model
    LIMIT $fetch) SCORE AS score
RETURN r.fact_id AS item_id, score,
       coalesce(r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)
         AND r.recorded_at <= $known_at
         AND (r.retired_at IS NULL OR r.retired_at > $known_at), false) AS ok
