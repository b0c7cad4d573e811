// name: entities.get
// params: tenant_id, entity_ids
// mode: read
UNWIND $entity_ids AS id
MATCH (e:Entity {tenant_id: $tenant_id, entity_id: id})
RETURN e {.entity_id, .entity_type, .name, .aliases, .summary,
          created_at: toString(e.created_at)} AS entity
ORDER BY e.entity_id
