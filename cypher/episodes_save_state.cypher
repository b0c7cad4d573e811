// name: episodes.save_state
// params: tenant_id, episode_id, status, attempts, last_error, rejected_json, usage_json
// mode: write
MATCH (e:Episode {tenant_id: $tenant_id, episode_id: $episode_id})
SET e.status = $status,
    e.attempts = $attempts,
    e.last_error = $last_error,
    e.rejected_json = $rejected_json,
    e.usage_json = coalesce($usage_json, e.usage_json)
