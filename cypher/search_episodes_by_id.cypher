// name: search.episodes_by_id
// params: tenant_id, episode_ids, known_at
// mode: read
UNWIND $episode_ids AS id
MATCH (e:Episode {tenant_id: $tenant_id, episode_id: id})
WHERE e.recorded_at <= $known_at
// Named properties only: not the embedding (384 floats).
RETURN e {.tenant_id, .episode_id, .kind, .source, .content_json, .content_hash, .occurred_at, .session_id, .metadata_json, .recorded_at, .status, .attempts, .last_error, .rejected_json} AS episode
