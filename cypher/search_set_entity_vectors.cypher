// name: search.set_entity_vectors
// params: tenant_id, rows, model
// mode: write
UNWIND $rows AS row
MATCH (e:Entity {tenant_id: $tenant_id, entity_id: row.id})
SET e.embedding = row.vector, e.embedding_model = $model
