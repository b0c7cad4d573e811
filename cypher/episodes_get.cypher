// name: episodes.get
// params: tenant_id, episode_id
// mode: read
MATCH (e:Episode {tenant_id: $tenant_id, episode_id: $episode_id})
RETURN e {.*, embedding: null} AS episode
