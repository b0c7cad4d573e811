// name: transfer.episodes
// params: tenant_id, after, limit
// mode: read
// One page of a tenant's episodes after the keyset cursor $after (an episode id).
MATCH (e:Episode {tenant_id: $tenant_id})
WHERE e.episode_id > $after
RETURN e {.*, embedding: null} AS episode
ORDER BY e.episode_id
LIMIT $limit
