// name: search.episodes_by_id
// params: tenant_id, episode_ids, known_at
// mode: read
UNWIND $episode_ids AS id
MATCH (e:Episode {tenant_id: $tenant_id, episode_id: id})
WHERE e.recorded_at <= $known_at
RETURN
// include: episode_fields
AS episode
