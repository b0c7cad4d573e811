// name: search.pending_facts
// params: tenant_id, since, model, limit
// mode: read
// Facts with a version recorded since $since and no vector from $model (fact_recorded
// index, then the fact_vector_id constraint's index); one row per fact.
MATCH ()-[r:FACT]->()
WHERE r.tenant_id = $tenant_id AND r.recorded_at >= $since
  AND NOT EXISTS {
    MATCH (v:FactVector {tenant_id: $tenant_id, fact_id: r.fact_id})
    WHERE v.embedding_model = $model
  }
WITH r.fact_id AS id, min(r.recorded_at) AS first, head(collect(r.fact_text)) AS text
RETURN id, text
ORDER BY first, id
LIMIT $limit
