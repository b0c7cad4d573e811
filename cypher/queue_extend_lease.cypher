// name: queue.extend_lease
// params: tenant_id, episode_id, owner, lease_until
// mode: write
MATCH (e:Episode {tenant_id: $tenant_id, episode_id: $episode_id})
SET e.queue_lock = true
REMOVE e.queue_lock
WITH e
WHERE e.status = 'processing' AND e.lease_owner = $owner
SET e.lease_until = $lease_until
RETURN count(e) AS updated
