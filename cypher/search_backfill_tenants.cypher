// name: search.backfill_tenants
// params:
// mode: read
// Migration: the tenants with an entity or an episode that has no fulltext terms (written
// before them). Reads every tenant's entities and episodes, once per migration; the
// batches after it walk one tenant's nodes through its index (search.backfill_entities,
// search.backfill_episodes), so the migration stays linear in the store's size.
MATCH (e:Entity)
WHERE e.terms IS NULL AND e.tenant_id IS NOT NULL
RETURN DISTINCT e.tenant_id AS tenant_id
UNION
MATCH (e:Episode)
WHERE e.terms IS NULL AND e.tenant_id IS NOT NULL
RETURN DISTINCT e.tenant_id AS tenant_id
