// name: queue.claim_episode
// params: tenant_id, episode_id, owner, lease_until, from_statuses
// mode: write
// Take one given episode (extract=sync) if its status allows; locked, then checked.
MATCH (e:Episode {tenant_id: $tenant_id, episode_id: $episode_id})
SET e.queue_lock = true
REMOVE e.queue_lock
WITH e
WHERE e.status IN $from_statuses
SET e.status = 'processing',
    e.lease_owner = $owner,
    e.lease_until = $lease_until,
    e.attempts = e.attempts + 1
RETURN e {.*, embedding: null} AS episode
