// name: search.backfill_entities
// params: tenant_id, after, batch
// mode: read
// Migration: the tenant's next entities after $after, in entity id order through the
// (tenant_id, entity_id) index, each with its fulltext text when it has no terms yet; the
// caller writes those (search.set_node_terms) and goes on after the last id returned.
MATCH (e:Entity)
USING INDEX e:Entity(tenant_id, entity_id)
WHERE e.tenant_id = $tenant_id AND e.entity_id > $after
WITH e
ORDER BY e.entity_id
LIMIT $batch
RETURN e.entity_id AS key, elementId(e) AS node, e.terms IS NULL AS missing,
       reduce(s = coalesce(e.name, ''), a IN coalesce(e.aliases, []) | s + ' ' + a) AS text
