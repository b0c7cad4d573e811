// name: queue.entity_catalog
// params: tenant_id, limit, after_at, after_id
// mode: read
// A page of the tenant's entities for name resolution, newest first; the next page starts
// after ($after_at, $after_id), the last entity of this one (the first page: a bound after
// every entity). Read in the order of search_entity_created (tenant_id, created_at), from
// the cursor on, with the ties of one created_at sorted by id (PartialTop): the page, not
// every entity of the tenant sorted.
MATCH (e:Entity)
USING INDEX e:Entity(tenant_id, created_at)
WHERE e.tenant_id = $tenant_id AND e.created_at <= $after_at
  AND CASE WHEN e.created_at < $after_at THEN true ELSE e.entity_id > $after_id END
RETURN e {.entity_id, .entity_type, .name, .aliases, .summary, .created_at} AS entity
ORDER BY e.tenant_id DESC, e.created_at DESC, e.entity_id
LIMIT $limit
