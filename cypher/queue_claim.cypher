// name: queue.claim
// params: tenant_id, now, owner, lease_until, after, with_model
// mode: write
// The next due episode: a crashed worker's (expired lease) first; then, fair across
// tenants, the oldest due pending episode of the first tenant after $after (the tenant
// this queue served last) in tenant order, wrapping round to the first. Only episodes
// this worker can do: without a model ($with_model false), those that need none (null:
// not known, anyone may try). Locked, then checked again: of two workers that picked
// the same episode, the second finds it taken (claimed = false).
CALL () {
  MATCH (e:Episode)
  WHERE e.status = 'processing' AND e.lease_until <= $now
    AND ($tenant_id IS NULL OR e.tenant_id = $tenant_id)
    AND ($with_model OR NOT coalesce(e.needs_model, false))
  RETURN e, 0 AS rank, e.lease_until AS due, 0 AS turn
  ORDER BY due
  LIMIT 1
  UNION
  MATCH (e:Episode)
  WHERE e.status = 'pending' AND e.next_attempt_at <= $now
    AND ($tenant_id IS NULL OR e.tenant_id = $tenant_id)
    AND ($with_model OR NOT coalesce(e.needs_model, false))
  WITH e, CASE WHEN e.tenant_id > $after THEN 0 ELSE 1 END AS turn
  RETURN e, 1 AS rank, e.next_attempt_at AS due, turn
  ORDER BY turn, e.tenant_id, due
  LIMIT 1
}
WITH e
ORDER BY rank, due
LIMIT 1
SET e.queue_lock = true
REMOVE e.queue_lock
WITH e,
     (e.status = 'pending' AND e.next_attempt_at <= $now)
     OR (e.status = 'processing' AND e.lease_until <= $now) AS claimed
CALL (e, claimed) {
  WITH e, claimed WHERE claimed
  SET e.status = 'processing',
      e.lease_owner = $owner,
      e.lease_until = $lease_until,
      e.attempts = e.attempts + 1
}
// No row: nothing is due. claimed = false: another worker took it first; look again.
RETURN e {.*, embedding: null} AS episode, claimed
