// name: search.pending_facts
// params: tenant_id, since, model, limit
// mode: read
// Fact versions recorded since $since without a vector from $model (fact_recorded index).
MATCH ()-[r:FACT]->()
WHERE r.tenant_id = $tenant_id AND r.recorded_at >= $since
  AND (r.embedding_model IS NULL OR r.embedding_model <> $model)
RETURN r.version_id AS id, r.fact_id AS fact_id, r.fact_text AS text
ORDER BY r.recorded_at, r.version_id
LIMIT $limit
