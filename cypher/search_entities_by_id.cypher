// name: search.entities_by_id
// params: tenant_id, entity_ids, known_at
// mode: read
UNWIND $entity_ids AS id
MATCH (e:Entity {tenant_id: $tenant_id, entity_id: id})
WHERE e.created_at <= $known_at
RETURN
// include: entity_fields
AS entity
