// name: queue.counts_tenant
// params: tenant_id
// mode: read
// "episode_id IS NOT NULL" lets the planner seek the (tenant_id, episode_id) index.
MATCH (e:Episode {tenant_id: $tenant_id})
WHERE e.episode_id IS NOT NULL
RETURN e.status AS status, count(*) AS n
