// name: erase.endpoints
// params: tenant_id, entity_id
// mode: read
// The other end nodes of every version about the entity: erasing them locks those nodes,
// so the store locks them first in the global order (ledger.lock_entities).
MATCH (:Entity {tenant_id: $tenant_id, entity_id: $entity_id})-[r:FACT]-(o)
WHERE r.tenant_id = $tenant_id
RETURN collect(DISTINCT o.entity_id) AS entity_ids, collect(DISTINCT o.value_key) AS value_keys
