// name: search.set_fact_vectors
// params: tenant_id, rows, model
// mode: write
UNWIND $rows AS row
MATCH ()-[r:FACT {version_id: row.id}]->()
WHERE r.tenant_id = $tenant_id
SET r.embedding = row.vector, r.embedding_model = $model
