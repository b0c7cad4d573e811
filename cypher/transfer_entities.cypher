// name: transfer.entities
// params: tenant_id, after, limit
// mode: read
// One page of a tenant's entities after the keyset cursor $after (an entity id).
MATCH (e:Entity {tenant_id: $tenant_id})
WHERE e.entity_id > $after
RETURN e {.entity_id, .entity_type, .name, .aliases, .summary,
          created_at: toString(e.created_at)} AS entity
ORDER BY e.entity_id
LIMIT $limit
