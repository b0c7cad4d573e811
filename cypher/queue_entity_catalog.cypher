// name: queue.entity_catalog
// params: tenant_id, entity_types, limit
// mode: read
// Entities for name resolution (all types when entity_types is null), newest first.
MATCH (e:Entity {tenant_id: $tenant_id})
WHERE e.entity_id IS NOT NULL
  AND ($entity_types IS NULL OR e.entity_type IN $entity_types)
RETURN e {.entity_id, .entity_type, .name, .aliases, .summary, .created_at} AS entity
ORDER BY e.created_at DESC, e.entity_id
LIMIT $limit
