// name: queue.entity_catalog_types
// params: tenant_id, entity_types, limit, after_at, after_id
// mode: read
// queue.entity_catalog of some entity types: a page of each type from
// entity_type_created (tenant_id, entity_type, created_at), in its order from the cursor
// on, then the newest of them. A filter on the type would walk the tenant's entities
// until the page filled (all of them for a type with fewer than a page left).
UNWIND $entity_types AS type
CALL (type) {
  MATCH (e:Entity)
  USING INDEX e:Entity(tenant_id, entity_type, created_at)
  WHERE e.tenant_id = $tenant_id AND e.entity_type = type AND e.created_at <= $after_at
    AND CASE WHEN e.created_at < $after_at THEN true ELSE e.entity_id > $after_id END
  RETURN e
  ORDER BY e.tenant_id DESC, e.entity_type DESC, e.created_at DESC, e.entity_id
  LIMIT $limit
}
RETURN e {.entity_id, .entity_type, .name, .aliases, .summary, .created_at} AS entity
ORDER BY e.created_at DESC, e.entity_id
LIMIT $limit
