// name: search.pending_facts
// params: tenant_id, since, after, model, limit
// mode: read
// Versions recorded since $since whose fact has no vector from $model, oldest first
// (fact_recorded index, then the fact_vector_id constraint's index), after the cursor
// ($since, $after): a pass goes on from its last row instead of walking again what it
// embedded. A fact with several such versions comes once per version; the indexer
// embeds it once.
MATCH ()-[r:FACT]->()
WHERE r.tenant_id = $tenant_id AND r.recorded_at >= $since
  AND (r.recorded_at > $since OR r.version_id > $after)
  AND NOT EXISTS {
    MATCH (v:FactVector {tenant_id: $tenant_id, fact_id: r.fact_id})
    WHERE v.embedding_model = $model
  }
RETURN r.fact_id AS id, r.fact_text AS text, r.recorded_at AS at, r.version_id AS cursor
ORDER BY r.recorded_at, r.version_id
LIMIT $limit
