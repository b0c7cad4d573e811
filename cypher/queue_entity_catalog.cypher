// name: queue.entity_catalog
// params: tenant_id, entity_types, limit, after_at, after_id
// mode: read
// A page of entities for name resolution (all types when entity_types is null), newest
// first; the next page starts after ($after_at, $after_id), the last entity of this one.
MATCH (e:Entity {tenant_id: $tenant_id})
WHERE e.entity_id IS NOT NULL
  AND ($entity_types IS NULL OR e.entity_type IN $entity_types)
  AND ($after_at IS NULL OR e.created_at < $after_at
       OR (e.created_at = $after_at AND e.entity_id > $after_id))
RETURN e {.entity_id, .entity_type, .name, .aliases, .summary, .created_at} AS entity
ORDER BY e.created_at DESC, e.entity_id
LIMIT $limit
