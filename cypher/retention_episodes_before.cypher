// name: retention.episodes_before
// params: tenant_id, before, limit
// mode: read
// The oldest episodes of a tenant that occurred before $before.
MATCH (e:Episode {tenant_id: $tenant_id})
USING INDEX e:Episode(tenant_id, occurred_at)
WHERE e.occurred_at < $before
RETURN e.episode_id AS episode_id
ORDER BY e.occurred_at, e.episode_id
LIMIT $limit
