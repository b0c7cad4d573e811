// name: queue.enqueue
// params: tenant_id, episode_id, at, from_statuses, reset, needs_model
// mode: write
// Every conditional update of the queue takes the node's write lock first (SET then
// REMOVE a marker) and only then reads the status: a concurrent writer of the same
// episode has committed by then, so the condition sees its outcome (Neo4j reads the
// latest committed state; the lock is held until commit).
MATCH (e:Episode {tenant_id: $tenant_id, episode_id: $episode_id})
SET e.queue_lock = true
REMOVE e.queue_lock
WITH e
WHERE e.status IN $from_statuses
SET e.status = 'pending',
    e.next_attempt_at = $at,
    e.lease_owner = null,
    e.lease_until = null,
    e.attempts = CASE WHEN $reset THEN 0 ELSE e.attempts END,
    e.last_error = CASE WHEN $reset THEN null ELSE e.last_error END,
    e.needs_model = coalesce($needs_model, e.needs_model)
RETURN e {.*, embedding: null} AS episode
