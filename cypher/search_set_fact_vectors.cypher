// name: search.set_fact_vectors
// params: tenant_id, rows, model
// mode: write
// Each fact's one vector. live: the fact has a version open in system time now (the
// ledger keeps it so, ledger.write_batch); a fact with no version left gets none. Rows
// come in fact id order, the order ledger.write_batch locks FactVector nodes in.
UNWIND $rows AS row
WITH row
WHERE EXISTS { MATCH ()-[r:FACT {fact_id: row.id}]->() WHERE r.tenant_id = $tenant_id }
MERGE (v:FactVector {tenant_id: $tenant_id, fact_id: row.id})
WITH v, row, EXISTS {
  MATCH ()-[r:FACT {fact_id: row.id}]->() WHERE r.tenant_id = $tenant_id AND r.current = true
} AS live
// scope and live_scope: the vector index's filter (schema.setup); a tenant id has no space.
SET v.embedding = row.vector,
    v.embedding_model = $model,
    v.live = live,
    v.scope = $tenant_id + ' ' + $model,
    v.live_scope = CASE WHEN live THEN $tenant_id + ' ' + $model END
