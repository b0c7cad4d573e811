// name: search.backfill_fact_vector_scopes
// params: tenant_id, after, batch
// mode: write
// Migration, one batch of a tenant's FactVectors after the cursor $after (a fact id), in
// fact id order: the index filter properties schema.setup's fact_vector reads (as
// search.set_fact_vectors writes them). The batch's last fact id is the next cursor;
// null when none is left.
MATCH (v:FactVector)
WHERE v.tenant_id = $tenant_id AND v.fact_id > $after
WITH v
ORDER BY v.fact_id
LIMIT $batch
SET v.scope = v.tenant_id + ' ' + v.embedding_model,
    v.live_scope = CASE WHEN v.live THEN v.tenant_id + ' ' + v.embedding_model END
RETURN max(v.fact_id) AS last
