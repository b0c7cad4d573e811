// name: queue.complete
// params: tenant_id, episode_id, owner, rejected_json, usage_json
// mode: write
// Only the lease holder records the outcome: a worker that lost its lease changes nothing.
MATCH (e:Episode {tenant_id: $tenant_id, episode_id: $episode_id})
SET e.queue_lock = true
REMOVE e.queue_lock
WITH e
WHERE e.status = 'processing' AND e.lease_owner = $owner
SET e.status = 'extracted',
    e.last_error = null,
    e.rejected_json = $rejected_json,
    e.usage_json = coalesce($usage_json, e.usage_json),
    e.lease_owner = null,
    e.lease_until = null,
    e.next_attempt_at = null
RETURN count(e) AS updated
