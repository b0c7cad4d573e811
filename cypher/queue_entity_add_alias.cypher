// name: queue.entity_add_alias
// params: tenant_id, entity_id, alias
// mode: write
MATCH (e:Entity {tenant_id: $tenant_id, entity_id: $entity_id})
SET e.aliases = CASE
  WHEN $alias IN coalesce(e.aliases, []) THEN e.aliases
  ELSE coalesce(e.aliases, []) + $alias
END
RETURN count(e) AS updated
