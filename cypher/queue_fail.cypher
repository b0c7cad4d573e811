// name: queue.fail
// params: tenant_id, episode_id, owner, status, error, rejected_json, usage_json, retry_at
// mode: write
// Back to pending (due at retry_at) or failed; only for the lease holder.
MATCH (e:Episode {tenant_id: $tenant_id, episode_id: $episode_id})
SET e.queue_lock = true
REMOVE e.queue_lock
WITH e
WHERE e.status = 'processing' AND e.lease_owner = $owner
SET e.status = $status,
    e.last_error = $error,
    e.rejected_json = $rejected_json,
    e.usage_json = coalesce($usage_json, e.usage_json),
    e.next_attempt_at = $retry_at,
    e.lease_owner = null,
    e.lease_until = null
RETURN count(e) AS updated
